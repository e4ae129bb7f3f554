"""Regressions of the learning loop: each test failed before its fix."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from tests import transcript_fixtures as tf
from tests.conftest import MakeVault, snapshot
from tests.test_learn_ingest import NOTE, REGISTRY, counters
from vaultkeeper.cli import cli
from vaultkeeper.learn.count import record
from vaultkeeper.learn.ingest import ingest
from vaultkeeper.mcp.tools import VaultTools
from vaultkeeper.store import uses
from vaultkeeper.store.uses import UseEvent, latest_receipts, read_events

NOW = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.timezone.utc)
MCP_SESSION = "mcp-20261130T100000Z-abc123"


@pytest.fixture
def vault(make_vault: MakeVault) -> Path:
    return make_vault(
        {
            "patterns/registry.md": REGISTRY,
            "projects/api/memory/flaky-ci-retries.md": NOTE,
            "skills/pin-test-clock/SKILL.md": "---\nname: pin-test-clock\n---\n",
        }
    )


def vk(vault: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--vault", str(vault), *args], env={"VAULTKEEPER_TODAY": ""})


def cite_call(name: str, evidence: str) -> dict[str, Any]:
    """The block Claude Code writes for a call of the vaultkeeper server's ``cite`` tool."""
    return {
        "type": "tool_use",
        "id": "toolu_cite",
        "name": "mcp__vaultkeeper__cite",
        "input": {"name": name, "evidence": evidence},
    }


def mcp_cite(vault: Path, name: str, evidence: str) -> dict[str, Any]:
    """What the MCP server's ``cite`` tool does in the host's session, on the same day."""
    day = dt.datetime(2026, 11, 30, 10, 1, tzinfo=dt.timezone.utc)
    return VaultTools(vault, lambda: day, MCP_SESSION).cite(name, evidence)


# -- 1. an MCP cite and a link in one host session count once --------------------------


def test_an_mcp_cite_and_a_link_in_one_claude_session_count_once(
    tmp_path: Path, vault: Path
) -> None:
    assert mcp_cite(vault, "pin-test-clock", "src/clock.py:12  (the fixture)")["counted"]
    assert counters(vault, "pin-test-clock") == ("3", "2026-11-30")
    path = tf.write(
        tmp_path / f"{tf.SESSION}.jsonl",
        [
            tf.claude(
                "assistant",
                [
                    cite_call("pin-test-clock", "src/clock.py:12 (the fixture)"),
                    tf.text("Pinned it, per [[patterns/registry#pin-test-clock]]."),
                ],
            ),
            tf.claude("assistant", [tf.text("[[patterns/registry#grep-the-config-value]]")]),
        ],
    )
    out = ingest(vault, [path], NOW)
    assert counters(vault, "pin-test-clock") == ("3", "2026-11-30")  # once, not twice
    assert counters(vault, "grep-the-config-value") == ("2", "2026-11-30")
    assert [c.name for c in out.result.counted] == ["grep-the-config-value"]
    assert out.result.via_mcp == ("pin-test-clock",)
    logged = [(e.session, e.kind, e.target, e.receipt) for e in read_events(vault)]
    assert (tf.SESSION, "cite", "pin-test-clock", f"{path}:1") in logged
    again = ingest(vault, [path], NOW)  # replay: nothing counted, nothing new
    assert (again.result.counted, again.result.recorded) == ((), ())
    assert counters(vault, "pin-test-clock") == ("3", "2026-11-30")


def test_the_cli_says_a_use_was_counted_through_mcp(tmp_path: Path, vault: Path) -> None:
    mcp_cite(vault, "C# tips", "a.py:1")
    path = tf.write(
        tmp_path / "s.jsonl",
        [tf.claude("assistant", [cite_call("C# tips", "a.py:1"), tf.text("[[registry#C tips]]")])],
    )
    result = vk(vault, "ingest", str(path))
    assert result.exit_code == 0
    assert "cited C# tips through MCP: counted by the server then, not again" in result.stdout
    assert not any(x.startswith("counted") for x in result.stdout.splitlines())
    assert counters(vault, "C# tips") == ("1", "2026-11-30")


def test_an_mcp_cite_in_a_codex_rollout_counts_once(tmp_path: Path, vault: Path) -> None:
    mcp_cite(vault, "grep-the-config-value", "web/app.ts:40")
    args = json.dumps({"name": "grep-the-config-value", "evidence": "web/app.ts:40"})
    call = {"type": "function_call", "name": "vaultkeeper__cite", "arguments": args}
    path = tf.write(
        tmp_path / "rollout.jsonl",
        [
            tf.codex_meta(),
            tf.codex("response_item", call, "2026-11-30T10:02:00Z"),
            tf.codex_say("assistant", "[[patterns/registry#grep-the-config-value]]"),
        ],
    )
    ingest(vault, [path], NOW)
    assert counters(vault, "grep-the-config-value") == ("2", "2026-11-30")


def test_a_cite_call_the_server_did_not_record_counts_once(tmp_path: Path, vault: Path) -> None:
    """No MCP record matches (another evidence): the tool call is the session's cite."""
    mcp_cite(vault, "pin-test-clock", "somewhere else")
    path = tf.write(
        tmp_path / "other-session.jsonl",
        [
            tf.claude(
                "assistant",
                [
                    cite_call("pin-test-clock", "x.py:1"),
                    tf.text("[[patterns/registry#pin-test-clock]]"),
                ],
                session="other-session",
            )
        ],
    )
    out = ingest(vault, [path], NOW)
    assert counters(vault, "pin-test-clock") == ("4", "2026-11-30")  # MCP's 3, then this one
    assert [(c.name, c.receipt) for c in out.result.counted] == [("pin-test-clock", f"{path}:1")]


# -- 2. a NUL byte in a read path ------------------------------------------------------


def test_a_nul_byte_in_a_read_path_skips_that_read_only(tmp_path: Path, vault: Path) -> None:
    note = vault / "projects/api/memory/flaky-ci-retries.md"
    path = tf.write(
        tmp_path / "s.jsonl",
        [
            tf.claude("assistant", [tf.tool("Read", file_path="/etc/pass\x00wd")]),
            tf.claude("assistant", [tf.tool("Read", file_path="rel.md")], cwd="/tmp/a\x00b"),
            tf.claude("assistant", [tf.tool("Bash", command="cat /v/x\x00.md")]),
            tf.claude(
                "assistant",
                [tf.tool("Read", file_path=str(note)), tf.text("[[patterns/registry#C tips]]")],
            ),
        ],
    )
    out = ingest(vault, [path], NOW)
    assert out.ok
    assert counters(vault, "C# tips") == ("1", "2026-11-30")
    assert [(e.kind, e.target) for e in read_events(vault)] == [
        ("cite", "C# tips"),
        ("read", "projects/api/memory/flaky-ci-retries.md"),
    ]


# -- 3. a date after today -------------------------------------------------------------


def test_a_use_dated_after_today_is_dated_today_and_reported(tmp_path: Path, vault: Path) -> None:
    path = tf.write(
        tmp_path / "s.jsonl",
        [
            tf.claude(
                "assistant",
                [tf.text("[[patterns/registry#grep-the-config-value]]")],
                ts="2099-01-01T00:00:00Z",
            )
        ],
    )
    out = ingest(vault, [path], NOW)
    assert counters(vault, "grep-the-config-value") == ("2", "2026-12-01")
    assert out.result.future == 1
    assert [e.date for e in read_events(vault)] == [dt.date(2026, 12, 1)]
    direct = record(
        vault,
        [UseEvent("s2", "cli", "cite", "C# tips", dt.date(2030, 5, 5), "cli:x")],
        NOW,
    )
    assert direct.future == 1
    assert counters(vault, "C# tips") == ("1", "2026-12-01")


def test_the_cli_reports_future_dates(tmp_path: Path, vault: Path) -> None:
    path = tf.write(
        tmp_path / "s.jsonl",
        [tf.claude("assistant", [tf.text("[[patterns/registry#C tips]]")], ts="2099-01-01T00:00Z")],
    )
    result = vk(vault, "ingest", str(path))
    assert result.exit_code == 0
    today = dt.datetime.now(dt.timezone.utc).date().isoformat()
    assert f"1 use dated after today was dated today ({today})" in result.stdout


# -- 4. memory bounded with many distinct reads ----------------------------------------


def test_many_distinct_reads_stay_in_bounded_memory(tmp_path: Path, vault: Path) -> None:
    path = tmp_path / "reads.jsonl"
    folder = "/nonexistent/" + "d" * 120
    with path.open("w") as fh:
        for i in range(1500):  # 150,000 distinct paths, 100 reads a line
            reads = [tf.tool("Read", file_path=f"{folder}/{i}-{j}.md") for j in range(100)]
            fh.write(tf.claude("assistant", reads) + "\n")
        fh.write(tf.claude("assistant", [tf.text("[[patterns/registry#C tips]]")]) + "\n")
    got = tf.ingest_measured(vault, path)
    assert got["counted"] == ["C# tips"]
    # Measured: 22 MB with the bounded cache; 74 MB when every path read was cached.
    assert got["rss_kb"] < 45_000, got


# -- 6. a folder given as a transcript -------------------------------------------------


@pytest.mark.parametrize(
    ("given", "why"),
    [(".", ": a folder with no transcript (*.jsonl) in it\n"), ("/", ": too broad to look")],
)
def test_ingest_of_a_folder_is_one_line(
    vault: Path, given: str, why: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "empty").mkdir()
    monkeypatch.chdir(tmp_path / "empty")
    before = snapshot(vault, skip_state=False)
    result = vk(vault, "ingest", given)
    assert result.exit_code == 1
    assert why in result.stderr
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.output
    assert snapshot(vault, skip_state=False) == before


# -- 7. terminal escapes from a transcript ---------------------------------------------


def test_escapes_in_a_transcript_never_reach_the_terminal(tmp_path: Path, vault: Path) -> None:
    path = tf.write(
        tmp_path / "s.jsonl",
        [
            tf.claude(
                "assistant",
                [tf.text("[[patterns/registry#evil\x1b\x07name]]")],
                session="sess\x1b[2J\x1b[31mion",
            )
        ],
    )
    result = vk(vault, "ingest", str(path))
    assert result.exit_code == 0
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "unknown evilname: cited at" in result.stdout


# -- 8. a SKILL.md read counts only at the promoted skill's path ------------------------


def test_a_skill_md_read_elsewhere_is_not_a_use(tmp_path: Path, vault: Path) -> None:
    elsewhere = tmp_path / "other/skills/pin-test-clock/SKILL.md"
    elsewhere.parent.mkdir(parents=True)
    elsewhere.write_text("not ours\n")
    path = tf.write(
        tmp_path / "s.jsonl",
        [
            tf.claude("assistant", [tf.tool("Read", file_path=str(elsewhere))]),
            tf.claude("assistant", [tf.tool("Read", file_path="/gone/pin-test-clock/SKILL.md")]),
        ],
    )
    out = ingest(vault, [path], NOW)
    assert out.result.counted == ()
    assert counters(vault, "pin-test-clock") == ("2", "2026-10-03")
    linked = tmp_path / "home/.claude/skills/pin-test-clock"  # installed as a link: counts
    linked.parent.mkdir(parents=True)
    linked.symlink_to(vault / "skills/pin-test-clock")
    path = tf.write(
        tmp_path / "t.jsonl",
        [tf.claude("assistant", [tf.tool("Read", file_path=str(linked / "SKILL.md"))])],
    )
    ingest(vault, [path], NOW)
    assert counters(vault, "pin-test-clock") == ("3", "2026-11-30")


def test_a_skill_promoted_outside_the_vault_counts_at_its_path(
    tmp_path: Path, make_vault: MakeVault
) -> None:
    skill = tmp_path / "agent-skills/pin-test-clock/SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: pin-test-clock\n---\n")
    registry = REGISTRY.replace("[[skills/pin-test-clock/SKILL]]", f"`{skill}`")
    vault = make_vault({"patterns/registry.md": registry})
    path = tf.write(
        tmp_path / "s.jsonl",
        [
            tf.claude(
                "assistant", [tf.tool("Read", file_path=str(vault / "x/pin-test-clock/SKILL.md"))]
            ),
            tf.claude("assistant", [tf.tool("Read", file_path=str(skill))]),
        ],
    )
    out = ingest(vault, [path], NOW)
    assert [(c.name, c.receipt) for c in out.result.counted] == [("pin-test-clock", f"{path}:2")]


# -- 9. the brief's receipts skip read lines unparsed -----------------------------------


def test_latest_receipts_parses_no_read_line(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    events = [
        UseEvent(f"s{i}", "codex", "read", f"projects/api/memory/n{i}.md", NOW.date(), f"/t:{i}")
        for i in range(200)
    ]
    events.insert(100, UseEvent("s", "mcp", "cite", "C# tips", NOW.date(), "mcp:here"))
    uses.append_events(vault, events)
    parsed: list[object] = []
    real = json.loads

    def counting(raw: Any) -> Any:
        parsed.append(raw)
        return real(raw)

    monkeypatch.setattr(uses.json, "loads", counting)
    got = latest_receipts(vault)
    assert {k: v.receipt for k, v in got.items()} == {"C# tips": "mcp:here"}
    assert len(parsed) == 1


# -- 10. nothing written when there is nothing to record ------------------------------


def test_ingest_of_a_missing_file_on_a_fresh_vault_writes_nothing(
    tmp_path: Path, make_vault: MakeVault
) -> None:
    vault = make_vault()
    before = snapshot(vault, skip_state=False)
    result = vk(vault, "ingest", str(tmp_path / "nonexistent.jsonl"))
    assert result.exit_code == 1
    assert result.stderr.endswith("nonexistent.jsonl: No such file or directory\n")
    assert snapshot(vault, skip_state=False) == before
    assert not (vault / "state/writer.lock").exists()
