"""ingest: transcripts of both formats become counted, receipted, replay-safe uses."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from tests import transcript_fixtures as tf
from tests.conftest import MakeVault, snapshot
from vaultkeeper.cli import cli
from vaultkeeper.learn.count import record
from vaultkeeper.learn.ingest import heading_key, ingest
from vaultkeeper.learn.shellwords import said
from vaultkeeper.mcp.tools import VaultTools
from vaultkeeper.store.uses import UseEvent, read_events

REPO = Path(__file__).resolve().parent.parent
NOW = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.timezone.utc)
REGISTRY = """# Pattern registry

### pin-test-clock
Inject `now`.

**success count:** 2
**last used:** 2026-10-03
**promoted:** 2026-11-01 -> [[skills/pin-test-clock/SKILL]]

### grep-the-config-value
Grep the old value.

**success count:** 1
**last used:** 2026-11-20

### C# tips
Sharp.

**success count:** 0
**last used:** 2025-01-01

### bisect-before-reading-diffs
Bisect first.

**success count:** 4
**last used:** 2026-12-05
"""
NOTE = "---\nname: n\ndescription: d\ntype: memory\nlabel: fact\n---\nbody\n"


@pytest.fixture
def vault(make_vault: MakeVault) -> Path:
    return make_vault(
        {
            "patterns/registry.md": REGISTRY,
            "projects/api/memory/flaky-ci-retries.md": NOTE,
            "projects/api/memory/use-utc.md": NOTE,
            "skills/pin-test-clock/SKILL.md": "---\nname: pin-test-clock\n---\n",
        }
    )


def counters(vault: Path, name: str) -> tuple[str, str]:
    lines = (vault / "patterns/registry.md").read_text().split("\n")
    at = lines.index(f"### {name}")
    count = next(x for x in lines[at:] if x.startswith("**success count:**"))
    last = next(x for x in lines[at:] if x.startswith("**last used:**"))
    return count.split()[-1], last.split()[-1]


def claude_transcript(tmp_path: Path, vault: Path) -> Path:
    note = vault / "projects/api/memory/flaky-ci-retries.md"
    return tf.write(
        tmp_path / "projects/-home-me-src-api" / f"{tf.SESSION}.jsonl",
        [
            json.dumps({"type": "summary", "summary": "x", "leafUuid": "u"}),
            tf.claude("user", "please use [[patterns/registry#grep-the-config-value]]"),
            tf.claude(
                "assistant",
                [
                    tf.text("I will follow [[patterns/registry#pin-test-clock|the clock trick]]."),
                    tf.tool("Read", file_path=str(note)),
                ],
            ),
            tf.claude(
                "user", [tf.tool_result("see [[patterns/registry#bisect-before-reading-diffs]]")]
            ),
            json.dumps({"type": "progress-v9", "data": {"assistant": True}}),
            "this line is not json assistant",
            tf.claude(
                "assistant",
                [
                    tf.text(
                        "Again [[registry#PIN-TEST-CLOCK]] and [[patterns/registry#pin-tset-clock]]"
                    )
                ],
                ts="2026-11-30T23:59:00.000Z",
            ),
            tf.claude("assistant", [tf.text("Per [[patterns/registry#C tips]] and [[use-utc]].")]),
        ],
        tail=tf.claude("assistant", [tf.text("[[patterns/registry#grep-the-config-value]]")])[:90],
    )


def test_claude_transcript_counts_only_the_agents_citations(tmp_path: Path, vault: Path) -> None:
    path = claude_transcript(tmp_path, vault)
    out = ingest(vault, [path], NOW)
    assert [(f.format, f.session, f.lines_skipped, f.error) for f in out.files] == [
        ("claude-code", tf.SESSION, 2, None)  # the non-JSON line and the half-written one
    ]
    assert counters(vault, "pin-test-clock") == ("3", "2026-11-30")
    assert counters(vault, "C# tips") == ("1", "2026-11-30")
    # in the person's text, in tool output, in a half-written line: not counted
    assert counters(vault, "grep-the-config-value") == ("1", "2026-11-20")
    assert counters(vault, "bisect-before-reading-diffs") == ("4", "2026-12-05")
    assert [e.target for e in out.result.unknown] == ["pin-tset-clock"]
    logged = [(e.kind, e.target, e.receipt) for e in read_events(vault)]
    assert logged == [
        ("cite", "pin-test-clock", f"{path}:3"),
        ("cite", "C# tips", f"{path}:8"),
        ("read", "projects/api/memory/flaky-ci-retries.md", f"{path}:3"),
        ("cite", "projects/api/memory/use-utc.md", f"{path}:8"),
    ]


def test_replay_of_the_same_or_a_longer_transcript_counts_nothing_twice(
    tmp_path: Path, vault: Path
) -> None:
    path = claude_transcript(tmp_path, vault)
    ingest(vault, [path], NOW)
    before = snapshot(vault, skip_state=False)
    again = ingest(vault, [path], NOW)
    assert again.result.counted == () and again.result.recorded == ()
    assert snapshot(vault, skip_state=False) == before
    # the session went on: the half-written line completed, more lines appended
    text = path.read_text()
    text = text[: text.rfind("\n") + 1] + tf.claude(
        "assistant",
        [
            tf.text(
                "[[patterns/registry#grep-the-config-value]] [[patterns/registry#pin-test-clock]]"
            )
        ],
        ts="2026-12-01T08:00:00.000Z",
    )
    path.write_text(text + "\n")
    longer = ingest(vault, [path], NOW)
    assert [(c.name, c.count_before, c.count_after) for c in longer.result.counted] == [
        ("grep-the-config-value", 1, 2)
    ]
    assert counters(vault, "pin-test-clock") == ("3", "2026-11-30")
    assert counters(vault, "grep-the-config-value") == ("2", "2026-12-01")
    assert longer.result.counted[0].receipt == f"{path}:9"


def test_subagent_transcripts_come_along_and_share_the_session(tmp_path: Path, vault: Path) -> None:
    main = tf.write(
        tmp_path / f"{tf.SESSION}.jsonl",
        [tf.claude("assistant", [tf.text("[[patterns/registry#pin-test-clock]]")])],
    )
    sub = tf.write(
        tmp_path / tf.SESSION / "subagents" / "agent-a1b2.jsonl",
        [
            tf.claude("user", "sub-agent prompt", isSidechain=True),
            tf.claude(
                "assistant",
                [
                    tf.text(
                        "[[patterns/registry#pin-test-clock]] "
                        "[[patterns/registry#grep-the-config-value]]"
                    )
                ],
                ts="2026-11-29T12:00:00.000Z",
                isSidechain=True,
                agentId="a1b2",
            ),
        ],
    )
    out = ingest(vault, [main], NOW)
    assert [f.path for f in out.files] == [str(main), str(sub)]
    assert counters(vault, "pin-test-clock") == ("3", "2026-11-30")  # one session: once
    assert counters(vault, "grep-the-config-value") == ("2", "2026-11-29")
    assert [(c.name, c.receipt) for c in out.result.counted] == [
        ("pin-test-clock", f"{main}:1"),
        ("grep-the-config-value", f"{sub}:2"),
    ]


def test_codex_rollout(tmp_path: Path, vault: Path) -> None:
    note = vault / "projects/api/memory/flaky-ci-retries.md"
    home = tmp_path / "home"
    skill = home / ".codex/skills/pin-test-clock/SKILL.md"
    skill.parent.parent.mkdir(parents=True)  # the promoted skill, installed as a link
    skill.parent.symlink_to(vault / "skills/pin-test-clock")
    path = tf.write(
        tmp_path / "sessions/2026/11/28/rollout-2026-11-28T08-00-00-x.jsonl",
        [
            tf.codex_meta(),
            tf.codex("turn_context", {"cwd": "/home/me/src/web", "model": "gpt-5"}),
            tf.codex_say("user", "cite [[patterns/registry#pin-test-clock]] please"),
            tf.codex_shell(f"cat {skill} && sed -n 1,20p '{note}'"),
            tf.codex_output("[[patterns/registry#bisect-before-reading-diffs]]"),
            tf.codex(
                "event_msg", {"type": "agent_message", "message": "[[patterns/registry#C tips]]"}
            ),
            tf.codex("compacted-v7", {"assistant": 1}),
            tf.codex_say(
                "assistant",
                "Done, per [[patterns/registry#grep-the-config-value|grep first]].",
                ts="2026-11-28T09:00:00.000Z",
            ),
        ],
        tail='{"timestamp": "2026-11-28T09:01:00Z", "type": "response_item", "payload": '
        '{"type": "message", "role": "assistant", "content": [{"type": "out',
    )
    out = ingest(vault, [path], NOW)
    assert [(f.format, f.session, f.lines_skipped) for f in out.files] == [
        ("codex", tf.CODEX_SESSION, 1)
    ]
    assert counters(vault, "pin-test-clock") == ("3", "2026-11-28")  # its skill was read
    assert counters(vault, "grep-the-config-value") == ("2", "2026-11-28")
    assert counters(vault, "bisect-before-reading-diffs") == ("4", "2026-12-05")
    assert counters(vault, "C# tips") == ("0", "2025-01-01")
    assert sorted((e.source, e.kind, e.target, e.receipt) for e in read_events(vault)) == [
        ("codex", "cite", "grep-the-config-value", f"{path}:8"),
        ("codex", "read", "projects/api/memory/flaky-ci-retries.md", f"{path}:4"),
        ("codex", "read", "skills/pin-test-clock/SKILL.md", f"{path}:4"),
        ("codex", "skill", "pin-test-clock", f"{path}:4"),
    ]


def test_skill_tool_call_counts_for_the_promoted_pattern(tmp_path: Path, vault: Path) -> None:
    path = tf.write(
        tmp_path / "s.jsonl",
        [
            tf.claude("assistant", [tf.tool("Skill", skill="pin-test-clock")]),
            tf.claude(
                "assistant", [tf.tool("Skill", skill="grep-the-config-value")]
            ),  # not promoted
            tf.claude(
                "assistant",
                [tf.tool("Read", file_path=str(vault / "skills/pin-test-clock/SKILL.md"))],
            ),
        ],
    )
    out = ingest(vault, [path], NOW)
    assert [(c.name, c.count_after, c.receipt) for c in out.result.counted] == [
        ("pin-test-clock", 3, f"{path}:1")
    ]
    assert [(e.kind, e.target) for e in read_events(vault)] == [
        ("skill", "pin-test-clock"),
        ("read", "skills/pin-test-clock/SKILL.md"),
    ]
    assert counters(vault, "grep-the-config-value") == ("1", "2026-11-20")


def test_dry_run_writes_nothing(tmp_path: Path, vault: Path) -> None:
    path = claude_transcript(tmp_path, vault)
    before = snapshot(vault, skip_state=False)
    out = ingest(vault, [path], NOW, dry_run=True)
    assert [(c.name, c.count_after) for c in out.result.counted] == [
        ("pin-test-clock", 3),
        ("C# tips", 1),
    ]
    assert snapshot(vault, skip_state=False) == before


def test_missing_and_foreign_files_are_reported_and_the_rest_read(
    tmp_path: Path, vault: Path
) -> None:
    good = tf.write(
        tmp_path / "s.jsonl",
        [tf.claude("assistant", [tf.text("[[patterns/registry#pin-test-clock]]")])],
    )
    foreign = tf.write(tmp_path / "f.jsonl", ['{"hello": 1}', "plain"])
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    out = ingest(vault, [tmp_path / "gone.jsonl", foreign, fifo, good], NOW)
    assert [(Path(f.path).name, f.error) for f in out.files] == [
        ("gone.jsonl", "No such file or directory"),
        ("f.jsonl", "not a Claude Code or Codex transcript (no line says which)"),
        ("pipe.jsonl", "not a regular file"),
        ("s.jsonl", None),
    ]
    assert not out.ok
    assert counters(vault, "pin-test-clock") == ("3", "2026-11-30")


def test_a_fifo_named_as_a_codex_rollout_is_never_waited_on(tmp_path: Path, vault: Path) -> None:
    """A FIFO named ``rollout-*.jsonl``, given or beside a rollout that is (where its
    sub-agents' rollouts are looked for), is not a regular file: reported, never opened
    for reading (ingest hung on it)."""
    import subprocess
    import sys

    rollout = next((REPO / "tests/fixtures/hosts/codex-0.169.0/plain").rglob("rollout-*.jsonl"))
    here = tmp_path / "sessions"
    here.mkdir()
    given = here / rollout.name
    given.write_bytes(rollout.read_bytes())
    fifo = here / "rollout-2026-12-31T00-00-00-ffffffff-ffff-7fff-bfff-ffffffffffff.jsonl"
    os.mkfifo(fifo)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "vaultkeeper", "--vault", str(vault), "ingest", "--json"]
            + [str(given), str(fifo)],
            capture_output=True,
            text=True,
            timeout=120,  # a safety net only: the fixed command answers at once
        )
    except subprocess.TimeoutExpired:
        pytest.fail("ingest waited on a FIFO named as a Codex rollout")
    files = {Path(f["path"]).name: f["error"] for f in json.loads(done.stdout)["files"]}
    assert files == {given.name: None, fifo.name: "not a regular file"}
    assert done.returncode == 1  # a file could not be read


def test_shell_reads() -> None:
    assert said("cat a.md | head -5 && sed -n 1,9p /v/b.md; ls /v/c.md").reads == [
        "a.md",
        "/v/b.md",
    ]
    assert said(["bash", "-lc", "head -n 3 'x y/z.md'"]).reads == ["x y/z.md"]
    assert said("cat 'unclosed").reads == []


def test_heading_key_follows_obsidian() -> None:
    assert heading_key("C# tips") == heading_key("C tips") == heading_key("c  TIPS")
    assert heading_key("a:b") == heading_key("a b")


def test_a_50_mb_transcript_is_read_in_bounded_memory(tmp_path: Path, vault: Path) -> None:
    path = tmp_path / "big.jsonl"
    filler = tf.claude("user", [tf.tool_result("x" * 100_000)]) + "\n"
    with path.open("w") as fh:
        fh.write(tf.claude("assistant", [tf.text("[[patterns/registry#pin-test-clock]]")]) + "\n")
        for _ in range(100):  # 10 MB of ordinary tool output
            fh.write(filler)
        fh.write('{"type": "assistant", "message": "' + "y" * 40_000_000 + "\n")  # one 40 MB line
        fh.write(
            tf.claude("assistant", [tf.text("[[patterns/registry#grep-the-config-value]]")]) + "\n"
        )
    assert path.stat().st_size > 50_000_000
    got = tf.ingest_measured(vault, path)
    assert got["counted"] == ["pin-test-clock", "grep-the-config-value"]
    assert got["skipped"] == 1  # the 40 MB line
    # Python and vaultkeeper take about 20 MB and a line is read up to its cap (8 MB);
    # holding the 40 MB line, let alone the 50 MB file, would pass this bound
    assert got["rss_kb"] < 56_000, got


def test_promote_accepts_a_receipt_the_log_recorded(tmp_path: Path, vault: Path) -> None:
    from vaultkeeper.apply.batch import apply_decision
    from vaultkeeper.apply.decision import Decision

    transcript = tf.write(
        tmp_path / "s.jsonl",
        [tf.claude("assistant", [tf.text("[[patterns/registry#grep-the-config-value]]")])],
    )
    ingest(vault, [transcript], NOW)
    transcript.unlink()  # Claude Code cleans old transcripts; the log keeps the receipt
    receipt = f"{transcript}:1"
    # a path outside the vault is taken as written, like a URL: whether its file is
    # gone is not vaultkeeper's to tell (issue 32 item 3); a dry run says so
    other = apply_decision(
        vault, Decision("promote", "bisect-before-reading-diffs", receipt), NOW, dry_run=True
    )
    assert (other.outcome, other.evidence) == ("act", receipt)
    unrecorded = apply_decision(vault, Decision("promote", "grep-the-config-value", "mcp:x"), NOW)
    assert unrecorded.outcome == "defer"
    assert "is not a receipt" in unrecorded.reason
    done = apply_decision(vault, Decision("promote", "grep-the-config-value", receipt), NOW)
    assert (done.outcome, done.evidence) == ("act", receipt)
    skill = (vault / "skills/grep-the-config-value/SKILL.md").read_text()
    assert f"- {receipt} (added 2026-12-01)" in skill


MCP_SESSION = "mcp-20261130T100000Z-abc123"


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
