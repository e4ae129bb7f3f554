"""A project folder is tied to its repository by `new` run inside it and by the sessions
ingest reads from it; never to the vault's own repository, never away from another one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests import anchors_fixture as fx
from tests import transcript_fixtures as tf
from tests.git_helper import git, isolate_git
from vaultkeeper.cli import cli


def run(vault: Path, *args: str) -> Any:
    return CliRunner().invoke(cli, ["--vault", str(vault), *args])


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, list[str]]:
    isolate_git(monkeypatch, tmp_path)
    top = tmp_path / "shop"
    commits = fx.build_repo(top)
    vault = tmp_path / "vault"
    assert run(vault, "init", str(vault)).exit_code == 0
    return top, vault, commits


def tied(vault: Path, project: str) -> tuple[str | None, str | None]:
    record = vault / "projects" / project / "repository.json"
    if not record.exists():
        return None, None
    root = json.loads(record.read_text())["root_commit"]
    return root, json.loads((vault / "state/machine.json").read_text())["repositories"].get(root)


def test_new_run_inside_a_repository_ties_its_project(
    setup: tuple[Path, Path, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    top, vault, commits = setup
    monkeypatch.chdir(top / "src")
    assert run(vault, "new", "memory", "rounding", "-p", "shop", "-d", "d").exit_code == 0
    assert tied(vault, "shop") == (commits[0], str(top))


def test_new_with_an_unreadable_machine_file_writes_the_entry_and_keeps_the_file(
    setup: tuple[Path, Path, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tie nobody asked for waits; the entry is written and machine.json left as it is."""
    top, vault, _ = setup
    machine = vault / "state/machine.json"
    machine.parent.mkdir(exist_ok=True)
    machine.write_text("not json {")
    monkeypatch.chdir(top / "src")
    done = run(vault, "new", "memory", "rounding", "-p", "shop", "-d", "d")
    assert done.exit_code == 0, done.output
    assert (vault / "projects/shop/memory/rounding.md").is_file()
    assert machine.read_text() == "not json {"


def test_new_inside_the_vaults_own_repository_ties_nothing(
    setup: tuple[Path, Path, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, vault, _ = setup
    git(vault, "init", "-q")
    git(vault, "add", "-A")
    git(vault, "commit", "-q", "-m", "vault")
    monkeypatch.chdir(vault)
    assert run(vault, "new", "memory", "rounding", "-p", "shop", "-d", "d").exit_code == 0
    assert tied(vault, "shop") == (None, None)
    assert not (vault / "state/machine.json").exists()


def test_a_project_tied_to_another_repository_stays_tied_to_it(
    setup: tuple[Path, Path, list[str]], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    top, vault, commits = setup
    made = run(vault, "new", "memory", "a", "-p", "shop", "-d", "d", "--repo", str(top))
    assert made.exit_code == 0
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    (other / "f").write_text("f")
    git(other, "add", "-A")
    git(other, "commit", "-q", "-m", "other")
    monkeypatch.chdir(other)
    assert run(vault, "new", "memory", "b", "-p", "shop", "-d", "d").exit_code == 0
    assert tied(vault, "shop") == (commits[0], str(top))
    # the same repository cloned elsewhere on this machine: its path here is recorded
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(top), str(clone))
    monkeypatch.chdir(clone)
    assert run(vault, "new", "memory", "c", "-p", "shop", "-d", "d").exit_code == 0
    assert tied(vault, "shop") == (commits[0], str(clone))


def test_a_session_ingested_ties_the_project_named_as_its_repository(
    setup: tuple[Path, Path, list[str]], tmp_path: Path
) -> None:
    top, vault, commits = setup
    (vault / "projects" / "Shop").mkdir(parents=True)
    line = tf.claude("assistant", [tf.text("done")], cwd=str(top / "web"))
    transcript = tf.write(tmp_path / "s.jsonl", [line])
    assert run(vault, "ingest", "--dry-run", str(transcript)).exit_code == 0
    assert tied(vault, "Shop") == (None, None)  # a dry run writes nothing
    assert run(vault, "ingest", str(transcript)).exit_code == 0
    assert tied(vault, "Shop") == (commits[0], str(top))
    assert json.loads((vault / "projects/Shop/repository.json").read_text())["remote"] is None


def test_a_repository_record_nested_past_jsons_depth_is_as_if_absent(
    setup: tuple[Path, Path, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    # projects/P/repository.json is committed with the vault; json.loads raises
    # RecursionError (not ValueError) past its nesting depth: `new` inside the project's
    # repository ended in "internal error ... a bug"; the record now reads as absent.
    top, vault, _ = setup
    record = vault / "projects/shop/repository.json"
    record.parent.mkdir(parents=True)
    record.write_text('{"root_commit": ' + "[" * 100_000 + "]" * 100_000 + "}")
    monkeypatch.chdir(top / "src")
    done = run(vault, "new", "memory", "rounding", "-p", "shop", "-d", "d")
    assert "internal error" not in done.stderr
    assert done.exit_code == 0, done.output
    assert (vault / "projects/shop/memory/rounding.md").is_file()
