"""Adopting auto-memory folders and reviewing them: caps, problems, candidates, status."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import MakeVault
from tests.native_tree import API, TOKEN, WEB, build, hashes, vk

TODAY = "2026-12-01"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("VAULTKEEPER_TODAY", TODAY)
    build(home)
    return home


def test_adopt_all_finds_every_project_folder(home: Path, make_vault: MakeVault) -> None:
    vault = make_vault()
    code, out, _ = vk(vault, "native", "adopt", "--all")
    assert code == 0
    assert out.splitlines() == [
        f"adopted src-api: {home}/.claude/projects/-src-api/memory",
        f"adopted src-web: {home}/.claude/projects/-src-web/memory",
    ]
    state = json.loads((vault / "state" / "machine.json").read_text())
    assert [f["project"] for f in state["folders"]] == ["src-api", "src-web"]


def test_adopt_by_cwd_and_the_custom_directory(home: Path, make_vault: MakeVault) -> None:
    vault = make_vault()
    assert vk(vault, "native", "adopt", "--cwd", WEB)[0] == 0
    custom = home / "mem"
    custom.mkdir()
    (home / ".claude" / "settings.json").write_text(json.dumps({"autoMemoryDirectory": "~/mem"}))
    code, out, _ = vk(vault, "native", "adopt", "--cwd", API)  # the setting wins for every cwd
    assert code == 0 and f"adopted mem: {custom}" in out


def test_adopting_a_folder_that_is_not_there_refuses_and_writes_nothing(
    home: Path, make_vault: MakeVault
) -> None:
    vault = make_vault()
    code, _, err = vk(vault, "native", "adopt", str(home / "nope"))
    assert code == 2
    assert (
        err.strip()
        == f"vaultkeeper: error: {home / 'nope'}: not an auto-memory folder (no such directory)"
    )
    assert not (vault / "state" / "machine.json").exists()
    code, _, err = vk(vault, "native", "adopt")
    assert code == 2 and "name a folder, --cwd DIR or --all" in err


def test_review_lists_what_the_caps_cut_and_each_problem(home: Path, make_vault: MakeVault) -> None:
    vault = make_vault()
    vk(vault, "native", "adopt", "--all")
    code, out, _ = vk(vault, "native", "review")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("src-api: 233 files, 0 used in the last 90 days, 233 never used")
    caps = [line for line in lines if line.startswith("  cap ")]
    assert sum("past the newest 200 files" in line for line in caps) == 33
    assert (
        "  cap MEMORY.md:201 -- 235 lines: lines past 200 are never loaded; "
        "one short line per memory" in lines
    )
    assert any(
        line.startswith("  cap big.md -- ") and "shows only the first 4096" in line for line in caps
    )
    assert "  problem no-desc.md -- no `description`: recall cannot select it" in lines
    assert "  problem MEMORY.md:235 -- points at gone.md, which is not in the folder" in lines
    assert "  problem token.md -- no line in MEMORY.md" in lines
    secret = [line for line in lines if line.startswith("  secret ")]
    assert secret == ["  secret token.md:8 -- a github token: remove it"]
    assert TOKEN not in out  # the kind and the line, never the value
    web = lines.index(next(line for line in lines if line.startswith("src-web:")))
    assert lines[web + 1 :] == [
        "  prune old-port.md -- never used, unchanged for 200 days "
        "(vaultkeeper native prune asks a person)"
    ]


def test_review_json_has_the_caps_and_counts(home: Path, make_vault: MakeVault) -> None:
    vault = make_vault()
    vk(vault, "native", "adopt", "--cwd", WEB)
    code, out, _ = vk(vault, "native", "review", "--json")
    assert code == 0
    [folder] = json.loads(out)["folders"]
    assert folder["files"] == 2 and folder["never_used"] == 2 and folder["index_lines"] == 2
    assert folder["caps"] == {
        "files": 200,
        "index_lines": 200,
        "index_bytes": 25000,
        "file_bytes": 4096,
    }
    kinds = {(f["kind"], f["where"]) for f in folder["findings"]}
    assert ("prune", "old-port.md") in kinds and ("prune", "use-pnpm.md") not in kinds


def test_status_shows_each_adopted_folder(home: Path, make_vault: MakeVault) -> None:
    vault = make_vault()
    vk(vault, "native", "adopt", "--all")
    _, out, _ = vk(vault, "status", "--json")
    rows = {s["name"]: s for s in json.loads(out)["signals"] if s["name"].startswith("native:")}
    assert rows["native:src-api"]["verdict"] == "warn"
    assert rows["native:src-api"]["shown"].startswith(
        "233 files, 0 used in the last 90 days, 233 never used; index 235/200 lines"
    )
    assert rows["native:src-web"]["verdict"] == "ok"


def test_no_command_but_prune_and_restore_changes_a_native_file(
    home: Path, make_vault: MakeVault
) -> None:
    vault = make_vault()
    reply = '<cc-memory filenames="note-001.md,use-pnpm.md">as remembered</cc-memory>'
    line = {
        "type": "assistant",
        "sessionId": "s1",
        "cwd": API,
        "timestamp": "2026-12-01T10:00:00Z",
        "message": {
            "role": "assistant",
            "content": [
                {"type": "text", "text": reply},
                {
                    "type": "tool_use",
                    "name": "Read",
                    "input": {"file_path": f"{home}/.claude/projects/-src-api/memory/note-001.md"},
                },
            ],
        },
    }
    transcript = home.parent / "s1.jsonl"
    transcript.write_text(json.dumps(line) + "\n")
    before = hashes(home)
    for args in (
        ["native", "adopt", "--all"],
        ["ingest", str(transcript)],
        ["native", "review"],
        ["native", "review", "--json"],
        ["scan", "--force"],
        ["report", "--brief"],
        ["status"],
        ["lint"],
        ["index"],
    ):
        vk(vault, *args)
        assert hashes(home) == before, args
    assert "### src-api/note-001.md" in (vault / "patterns" / "native-memory.md").read_text()


def test_the_brief_says_in_one_line_what_the_auto_memory_needs(
    home: Path, make_vault: MakeVault
) -> None:
    vault = make_vault()
    vk(vault, "scan", "--force")
    assert "auto memory" not in vk(vault, "report", "--brief")[1]  # nothing adopted
    vk(vault, "native", "adopt", "--all")
    vk(vault, "scan", "--force")
    _, brief, _ = vk(vault, "report", "--brief")
    [line] = [x for x in brief.splitlines() if "auto memory" in x]
    assert line == (
        "- Claude Code auto memory: 1 to prune, 35 past the recall's caps, 3 problems, "
        "1 credentials (vaultkeeper native review)"
    )
    assert "Fact number" not in brief and TOKEN not in brief
