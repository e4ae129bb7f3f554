"""The fixture history: every gone, moved and changed anchor found at each
commit, a reformat or a comment never reported; the unchanged case reads no file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests import anchors_fixture as fx
from tests.git_helper import git, isolate_git
from vaultkeeper.anchors import check as source
from vaultkeeper.anchors import vault as anchors_vault
from vaultkeeper.anchors.check import Checker
from vaultkeeper.anchors.format import Item, parse_at


@pytest.fixture
def history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, list[str]]:
    isolate_git(monkeypatch, tmp_path)
    top = tmp_path / "repo"
    commits = fx.build_repo(top)
    git(top, "checkout", "-q", commits[0])
    vault = tmp_path / "vault"
    fx.build_vault(vault, top)
    return top, vault, commits


def found_states(vault: Path, cache: dict) -> dict[str, str]:
    states = {at: "ok" for at in fx.EXPECTED}
    for finding in anchors_vault.check_vault(vault, cache):
        for r in finding.results:
            if r.at in states:
                states[r.at] = r.state
    return states


def test_fixture_history_is_detected_exactly(history: tuple[Path, Path, list[str]]) -> None:
    top, vault, commits = history
    cache: dict = {"version": 2}
    for step, commit in enumerate(commits):
        git(top, "checkout", "-q", commit)
        assert found_states(vault, cache) == fx.expected_at(step), f"at step {step}"
        # the same answer from a cold cache: the kept one never hides a change
        assert found_states(vault, {"version": 2}) == fx.expected_at(step)


def test_moved_says_where_to(history: tuple[Path, Path, list[str]]) -> None:
    top, vault, commits = history
    git(top, "checkout", "-q", commits[-1])
    moved = {
        r.at: r.moved_to
        for f in anchors_vault.check_vault(vault, {"version": 2})
        for r in f.results
        if r.state == "moved"
    }
    assert moved == {
        "src/util.py::moved_fn": "src/other.py",
        "src/oldname.py": "src/newname.py",
        "src/oldname.py::in_renamed": "src/newname.py",
    }


def test_held_out_condition_is_decided_by_the_check(
    history: tuple[Path, Path, list[str]],
) -> None:
    top, vault, commits = history
    held = [f for f in anchors_vault.check_vault(vault, {"version": 2}) if f.name == "held"]
    assert held == []  # the helper is there: nothing to list
    git(top, "checkout", "-q", commits[1])
    held = [f for f in anchors_vault.check_vault(vault, {"version": 2}) if f.name == "held"]
    assert [f.follows for f in held] == ["condition-met"]
    actives = {f.name: f.follows for f in anchors_vault.check_vault(vault, {"version": 2})}
    assert actives["lesson-01"] == "reopen"  # active with a gone anchor: re-validate


def test_unchanged_case_reads_no_file(
    history: tuple[Path, Path, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    top, vault, commits = history
    git(top, "checkout", "-q", commits[-1])
    monkeypatch.setattr(anchors_vault, "RACY_NS", 0)  # the entries just written count as settled
    cache = anchors_vault.load_cache(vault)
    first = anchors_vault.check_vault(vault, cache)
    anchors_vault.save_cache(vault, cache)

    def refuse(*args: object) -> bytes:
        raise AssertionError("read a file the cache holds")

    monkeypatch.setattr(source, "read_inside", refuse)
    real_read = anchors_vault.read_regular

    def no_entry(path: Path) -> bytes:
        if "memory" in str(path):
            raise AssertionError("read an entry the cache holds")
        return real_read(path)

    monkeypatch.setattr(anchors_vault, "read_regular", no_entry)
    monkeypatch.setattr("vaultkeeper.anchors.repo.git", refuse)
    again = anchors_vault.check_vault(vault, anchors_vault.load_cache(vault))
    assert again == first


def test_a_symlink_out_of_the_repo_is_never_read(tmp_path: Path) -> None:
    top = tmp_path / "repo"
    (top / "src").mkdir(parents=True)
    secret = tmp_path / "outside.py"
    secret.write_text("def helper():\n    return 1\n", encoding="utf-8")
    os.symlink(secret, top / "src" / "x.py")
    result = Checker(str(top), {}).check(
        Item("src/x.py::helper", parse_at("src/x.py::helper"), None, None)
    )
    assert result.state == "unchecked"
    assert source.read_inside(str(top), "src/x.py") is None


def test_a_fifo_is_unchecked_not_waited_on(tmp_path: Path) -> None:
    top = tmp_path / "repo"
    top.mkdir()
    os.mkfifo(top / "pipe.py")
    result = Checker(str(top), {}).check(Item("pipe.py", parse_at("pipe.py"), None, None))
    assert result.state == "unchecked"


def test_an_entry_written_within_the_racy_window_gets_no_row(
    history: tuple[Path, Path, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its stat key could stay the same through another write within one clock tick:
    it is read again until it settles, and a settled one is kept as a row."""
    top, vault, commits = history
    git(top, "checkout", "-q", commits[-1])
    monkeypatch.setattr(anchors_vault, "RACY_NS", 3600 * 10**9)  # all "just written"
    cache = anchors_vault.load_cache(vault)
    anchors_vault.check_vault(vault, cache)
    anchors_vault.save_cache(vault, cache)
    assert anchors_vault.load_cache(vault)["entries"] == {}
    monkeypatch.setattr(anchors_vault, "RACY_NS", 0)
    cache = anchors_vault.load_cache(vault)
    anchors_vault.check_vault(vault, cache)
    anchors_vault.save_cache(vault, cache)
    assert any(k is not None for _, k in anchors_vault.load_cache(vault)["entries"].values())
