"""VaultTools, the SDK-free layer under the MCP server: the refusals and the edge cases
(the stdio tests drive the happy paths through a real host session)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from tests.conftest import MakeVault, snapshot
from vaultkeeper.errors import NotFoundError, UnsafePathError, UsageError, VaultkeeperError
from vaultkeeper.mcp.tools import VaultTools
from vaultkeeper.store.uses import read_events

NOW = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.timezone.utc)


def tools(vault: Path) -> VaultTools:
    return VaultTools(vault, lambda: NOW, "mcp-test-session")


def test_before_any_scan_report_and_recall_say_so_with_every_field(make_vault: MakeVault) -> None:
    vault = make_vault()
    report = tools(vault).report()
    assert report["available"] is False and "vaultkeeper scan" in report["note"]
    assert set(report) == {"available", "summary", "made", "age_seconds", "report", "note"}
    recall = tools(vault).recall()
    assert recall["available"] is False and recall["brief"].startswith("Memory vault: ")


def test_read_refuses_what_is_not_an_entry(make_vault: MakeVault, tmp_path: Path) -> None:
    vault = make_vault({
        "projects/a/memory/empty.md": "",
        ".obsidian/app.md": "x",
        "projects/a/data.json": "{}",
    })  # fmt: skip
    t = tools(vault)
    assert t.read("projects/a/memory/empty.md")["lines"] == 0
    for path, error in [
        (".obsidian/app.md", UsageError),
        ("state/queue.jsonl", UsageError),
        ("projects/a/data.json", UsageError),
        ("projects/a/memory/none.md", NotFoundError),
        ("../x.md", UnsafePathError),
        ("", UsageError),
        ("a\x00b.md", UsageError),
    ]:
        with pytest.raises(error):
            t.read(path)


def test_search_arguments_are_checked(make_vault: MakeVault) -> None:
    t = tools(make_vault())
    for kwargs in ({"query": " "}, {"query": "x", "kind": "note"}, {"query": "x", "limit": 0},
                   {"query": "x", "limit": 51}):  # fmt: skip
        with pytest.raises(UsageError):
            t.search(**kwargs)  # type: ignore[arg-type]


def test_recall_names_a_project_folder_or_refuses(make_vault: MakeVault) -> None:
    vault = make_vault({"projects/api/memory/x.md": "---\nname: x\ndescription: d\n---\n"})
    assert "Lessons of project api" in tools(vault).recall(project="api")["brief"]
    for bad in ("nope", "../api", "api/memory"):
        with pytest.raises(VaultkeeperError):
            tools(vault).recall(project=bad)


def test_cite_refusals_write_nothing(sample: Path) -> None:
    t = tools(sample)
    before = snapshot(sample, skip_state=False)
    with pytest.raises(UsageError, match="evidence"):
        t.cite("pin-test-clock", "  \n ")
    with pytest.raises(NotFoundError, match="no registry pattern"):
        t.cite("no-such-pattern", "x.py:1")
    with pytest.raises(UnsafePathError):
        t.cite("../outside.md", "x.py:1")
    after = snapshot(sample, skip_state=False)
    after.pop("state/writer.lock", None)  # the lock file, empty: not a write of the vault
    assert after == before


def test_cite_keeps_its_evidence_as_a_one_line_receipt(sample: Path) -> None:
    result = tools(sample).cite("pin-test-clock", "used in\nsrc/clock.py:12 " + "x" * 400)
    assert result["counted"] and result["session"] == "mcp-test-session"
    line = list(read_events(sample))[-1]._asdict()  # the event (a transaction's lines follow)
    line["date"] = line["date"].isoformat()
    assert line["source"] == "mcp" and line["date"] == "2026-12-01"
    assert line["receipt"].startswith("mcp:used in src/clock.py:12 xxx")
    assert "\n" not in line["receipt"] and len(line["receipt"]) == len("mcp:") + 300


def test_new_gives_each_problem_as_an_object(make_vault: MakeVault) -> None:
    """A file the index lists without a description comes back as a plain JSON object
    (path, line, reason: what the SDK made of the dataclass it was), not a bare list."""
    vault = make_vault({"broken.md": "---\nname: [x\n---\n"})
    made = tools(vault).new("reference", "fresh", "A fresh one", "", None)
    (problem,) = json.loads(json.dumps(made))["problems"]
    assert list(problem) == ["path", "line", "reason"]
    assert (problem["path"], problem["line"]) == ("broken.md", 2)


def test_new_lesson_takes_anchors_checked_as_the_cli_checks_them(
    make_vault: MakeVault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests import anchors_fixture as fx
    from tests.git_helper import isolate_git
    from vaultkeeper.anchors import repo

    isolate_git(monkeypatch, tmp_path)
    top = tmp_path / "shop"
    commits = fx.build_repo(top)
    vault = make_vault()
    (vault / "projects/shop").mkdir(parents=True)
    assert repo.tie(vault, "shop", str(top)) == str(top)  # tied: its repository, not the cwd
    made = tools(vault).new(
        "memory", "rounding", "d", "shop", None, None, ("src/cart.py::round_cart",)
    )
    text = (vault / made["path"]).read_text()
    assert '  - {at: "src/cart.py::round_cart", digest: "sha256:' in text
    assert f'commit: "{commits[-1]}"}}' in text
    for bad, says in [("src/cart.py::nope", "nope is not defined there"),
                      ("../etc/passwd", "relative to the repository"),
                      ("src/missing.py", "no readable file")]:  # fmt: skip
        with pytest.raises(UsageError, match=says):
            tools(vault).new("memory", "other", "d", "shop", None, None, (bad,))
        assert not (vault / "projects/shop/memory/other.md").exists()
    with pytest.raises(UsageError, match="at most 20"):
        tools(vault).new("memory", "other", "d", "shop", None, None, ("src/cart.py",) * 21)


def test_new_with_anchors_reads_nothing_under_a_project_that_climbs_out(
    make_vault: MakeVault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent's ``project`` is checked before projects/PROJECT/repository.json is read:
    ``../..`` never makes the server open a file outside the vault."""
    from vaultkeeper.store import text

    vault = make_vault()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere/repository.json").write_text('{"root_commit": "abc"}')
    opened: list[str] = []
    real = text.read_regular

    def spy(path: object, follow: bool = True) -> bytes:
        opened.append(str(path))
        return real(path, follow)  # type: ignore[arg-type]

    monkeypatch.setattr(text, "read_regular", spy)
    monkeypatch.setattr("vaultkeeper.anchors.repo.read_regular", spy)
    (vault / "projects").mkdir(exist_ok=True)
    climbing = "../../elsewhere"
    assert (vault / "projects" / climbing / "repository.json").is_file()
    with pytest.raises(UsageError, match="unsafe name"):
        tools(vault).new("memory", "x", "d", climbing, None, None, ("src/a.py",))
    assert not [p for p in opened if "elsewhere" in p]
