"""ingest on transcripts and rollouts the real hosts wrote (tests/fixtures/hosts/).

Each test reads a recording of Claude Code 2.1.332 or Codex 0.169.0 run offline against a
scripted mock model (tools/hosts/record.py; the scenario's MANIFEST.md and commands.txt
say what was run) and checks what a user would notice: the success count in the
registry, and the usage log's events.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from vaultkeeper.learn.ingest import ingest
from vaultkeeper.mcp.tools import VaultTools
from vaultkeeper.store.uses import read_events

HOSTS = Path(__file__).parent / "fixtures" / "hosts"
CLAUDE = HOSTS / "claude-code-2.1.332"
CODEX = HOSTS / "codex-0.169.0"
NOW = dt.datetime(2026, 12, 1, 23, 0, tzinfo=dt.timezone.utc)


def count(vault: Path, name: str) -> int:
    lines = (vault / "patterns/registry.md").read_text().split("\n")
    at = lines.index(f"### {name}")
    line = next(x for x in lines[at:] if x.startswith("**success count:**"))
    return int(line.split()[-1])


def rollouts(scenario: Path) -> list[Path]:
    return sorted((scenario / "codex-sessions").rglob("rollout-*.jsonl"))


def copy(files: list[Path], dest: Path) -> list[Path]:
    """The recorded files, copied (a date folder keeps its layout: sub-agents are found)."""
    dest.mkdir(parents=True, exist_ok=True)
    return [Path(shutil.copy(f, dest / f.name)) for f in files]


def test_codex_namespaced_mcp_cite_and_link_count_once_and_its_read_is_logged(
    sample: Path, tmp_path: Path
) -> None:
    """codex-0.169.0/mcp: the rollout calls `cite` with namespace mcp__vaultkeeper (and
    `read`), then links [[patterns/registry#pin-test-clock]]; the server logged the cite."""
    (rollout,) = copy(rollouts(CODEX / "mcp"), tmp_path / "sessions")
    before = count(sample, "pin-test-clock")
    server = VaultTools(sample, lambda: NOW, "mcp-20261201T221028Z-abc123")
    cited = server.cite("pin-test-clock", "tests/test_clock.py:12")
    assert cited["counted"] and count(sample, "pin-test-clock") == before + 1

    result = ingest(sample, [rollout], NOW)
    assert result.ok
    assert count(sample, "pin-test-clock") == before + 1  # the same use, not a second
    session = "01a233a8-afb1-78c1-a222-2ca97d7692b5"
    logged = {(e.session, e.kind, e.target) for e in read_events(sample)}
    assert (session, "read", "patterns/registry.md") in logged


def _claude_files(scenario: str) -> list[Path]:
    return sorted((CLAUDE / scenario / "claude-projects").glob("*/*.jsonl"))


FIRST = "9ddd68eb-3244-4b09-868e-72a7a75727a6"  # resume-fork: --session-id, then --resume
FORK = "cc66db6d-3c2f-4fca-a20d-07e2344a7837"  # --resume FIRST --fork-session


def test_a_fork_session_does_not_count_its_source_s_lines_again_in_either_order(
    sample: Path, tmp_path: Path
) -> None:
    """claude-code-2.1.332/resume-fork: the fork's file copies FIRST's two assistant lines
    (pin-test-clock, grep-the-config-value) with their uuids and requestSessionId; only
    its own turn (bisect-before-reading-diffs) is new."""
    names = ("pin-test-clock", "grep-the-config-value", "bisect-before-reading-diffs")
    files = {p.stem: p for p in copy(_claude_files("resume-fork"), tmp_path / "proj")}
    assert set(files) == {FIRST, FORK}
    orders = {"fork first": [FORK, FIRST], "source first": [FIRST, FORK], "together": None}
    base = {name: count(sample, name) for name in names}
    for order, steps in orders.items():
        vault = tmp_path / order.replace(" ", "-")
        shutil.copytree(sample, vault)
        if steps is None:
            assert ingest(vault, [files[FIRST], files[FORK]], NOW).ok
        else:
            for stem in steps:
                assert ingest(vault, [files[stem]], NOW).ok
        got = {name: count(vault, name) - base[name] for name in names}
        assert got == dict.fromkeys(names, 1), order
        sessions = {(e.session, e.target) for e in read_events(vault) if e.kind == "cite"}
        assert (FORK, "pin-test-clock") not in sessions
        assert (FORK, "bisect-before-reading-diffs") in sessions


def test_history_injected_through_stream_json_never_counts(sample: Path, tmp_path: Path) -> None:
    """claude-code-2.1.332/stream-json: an injected assistant line ("madeBy":"input")
    links bisect-before-reading-diffs; the model's own ("madeBy":"model") pin-test-clock."""
    (transcript,) = copy(_claude_files("stream-json"), tmp_path / "proj")
    assert '"madeBy":"input"' in transcript.read_text()
    before = {n: count(sample, n) for n in ("bisect-before-reading-diffs", "pin-test-clock")}
    assert ingest(sample, [transcript], NOW).ok
    assert count(sample, "bisect-before-reading-diffs") == before["bisect-before-reading-diffs"]
    assert count(sample, "pin-test-clock") == before["pin-test-clock"] + 1


PARENT = "01a23393-c3a0-7910-91fc-42ee90d209b8"  # codex-0.169.0/subagent: the exec thread


def test_a_codex_parent_brings_its_sub_agent_and_a_child_alone_counts_into_the_parent(
    sample: Path, tmp_path: Path
) -> None:
    """codex-0.169.0/subagent: the parent spawned one sub-agent, whose rollout (same date
    folder, thread_spawn.parent_thread_id = PARENT) alone links bisect-before-reading-diffs
    (three times); no hook ran for it."""
    name = "bisect-before-reading-diffs"
    recorded = rollouts(CODEX / "subagent")
    assert len(recorded) == 2
    parent, child = sorted(recorded, key=lambda p: PARENT not in p.name)
    for order in ("parent", "child by hand"):
        vault = tmp_path / order.replace(" ", "-")
        shutil.copytree(sample, vault)
        before = count(vault, name)
        day = tmp_path / f"sessions-{order.replace(' ', '-')}" / "2026/12/01"
        parent_copy, child_copy = copy([parent, child], day)
        first = ingest(vault, [parent_copy if order == "parent" else child_copy], NOW)
        assert first.ok and count(vault, name) == before + 1, order
        assert [f.session for f in first.files] == [PARENT] * len(first.files)
        if order == "parent":
            assert [Path(f.path).name for f in first.files] == [parent.name, child.name]
        again = ingest(vault, [parent_copy, child_copy], NOW)  # a second ingest adds nothing
        assert again.ok and count(vault, name) == before + 1, order
        sessions = {e.session for e in read_events(vault) if e.target == name}
        assert sessions == {PARENT}, order


def _edited(source: Path, dest: Path, edit: Any) -> Path:
    """A recorded transcript with ``edit(obj)`` applied to each JSON line (None drops it)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for line in source.read_text().splitlines():
        obj = edit(json.loads(line))
        if obj is not None:
            lines.append(json.dumps(obj, separators=(",", ":")))
    dest.write_text("\n".join(lines) + "\n")
    return dest


def _reads(vault: Path) -> set[tuple[str, str]]:
    return {(e.session, e.target) for e in read_events(vault) if e.kind == "read"}


CODEX_SESSION = "01a233a8-afb1-78c1-a222-2ca97d7692b5"  # codex-0.169.0/mcp
READ_CALL = "call_vk_mcp_2"  # its `read` of patterns/registry.md


@pytest.mark.parametrize(
    ("flat", "output"),
    [
        # the host rejected the flat name: its tools had not arrived yet (issue 34 item 7)
        (True, "unsupported call: mcp__vaultkeeper__read"),
        # as codex-0.169.0/mcp-unapproved recorded a rejected call
        (
            False,
            [
                {"type": "input_text", "text": "Wall time: 0.0028 seconds\nOutput:"},
                {
                    "type": "input_text",
                    "text": "MCP tool call requires approval, but approval policy is never",
                },
            ],
        ),
        (False, {"content": "tool call error: connection closed", "success": False}),
    ],
)
def test_a_codex_mcp_read_the_host_rejected_is_no_read(
    sample: Path, tmp_path: Path, flat: bool, output: Any
) -> None:
    (rollout,) = rollouts(CODEX / "mcp")

    def reject(obj: dict[str, Any]) -> dict[str, Any] | None:
        payload = obj.get("payload", {})
        if payload.get("call_id") == READ_CALL and payload.get("type") == "function_call":
            if flat:
                payload["name"] = "mcp__vaultkeeper__read"
                del payload["namespace"]
        elif payload.get("call_id") == READ_CALL and payload.get("type") == "function_call_output":
            payload["output"] = output
        elif payload.get("type") == "item_completed" and payload["item"].get("id") == READ_CALL:
            return None  # the McpToolCall event: a rejected call made none
        return obj

    rejected = _edited(rollout, tmp_path / "sessions" / rollout.name, reject)
    assert ingest(sample, [rejected], NOW).ok
    assert (CODEX_SESSION, "patterns/registry.md") not in _reads(sample)

    (kept,) = copy([rollout], tmp_path / "as-recorded")  # the read that came back counts
    other = _edited(kept, kept, lambda o: _renamed(o, CODEX_SESSION, "other-session"))
    assert ingest(sample, [other], NOW).ok
    assert ("other-session", "patterns/registry.md") in _reads(sample)


def _renamed(obj: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    return json.loads(json.dumps(obj).replace(old, new))


def test_a_claude_code_mcp_read_that_failed_is_no_read(sample: Path, tmp_path: Path) -> None:
    """Claude Code records a rejected or failed call as a tool_result with is_error."""
    (recorded,) = _claude_files("mcp")
    session = recorded.stem

    def fail(obj: dict[str, Any]) -> dict[str, Any]:
        content = obj.get("message", {}).get("content") if obj.get("type") == "user" else None
        for block in content if isinstance(content, list) else ():
            if block.get("tool_use_id") == "toolu_vk_mcp_2":  # the read of the registry
                block["is_error"] = True
                block["content"] = (
                    "<tool_use_error>Error: No such tool available: mcp__vaultkeeper__read"
                    "</tool_use_error>"
                )
        return obj

    failed = _edited(recorded, tmp_path / "failed" / recorded.name, fail)
    assert ingest(sample, [failed], NOW).ok
    assert (session, "patterns/registry.md") not in _reads(sample)

    other = _edited(
        recorded, tmp_path / "ok" / "other.jsonl", lambda o: _renamed(o, session, "other")
    )
    assert ingest(sample, [other], NOW).ok
    assert ("other", "patterns/registry.md") in _reads(sample)


def test_a_codex_session_its_managed_daemon_keeps_alive_is_caught_up_at_the_next_start(
    sample: Path, tmp_path: Path
) -> None:
    """Interactive Codex keeps a session alive in `codex app-server --managed-daemon`
    after /quit: its SessionEnd fires only when the daemon exits (issue 34 item 8). The
    next session's start in the same folder catches it up (`ingest --missed-beside`, as
    the session-start hook runs it); the late SessionEnd's ingest then counts nothing
    again. docs/hosts.md says so."""
    from click.testing import CliRunner

    from vaultkeeper.cli import cli

    def vk(*args: str | Path) -> str:
        done = CliRunner().invoke(cli, ["--vault", str(sample), *map(str, args)])
        assert done.exit_code == 0, done.output
        return done.output

    earlier = tmp_path / "earlier.jsonl"  # an ingest before: the catch-up record starts
    earlier.write_text('{"type":"user","sessionId":"s0","message":{"content":"hi"}}\n')
    vk("ingest", earlier)
    day = tmp_path / "sessions" / "2026" / "12" / "01"
    (alive,) = copy(rollouts(CODEX / "plain"), day)  # /quit: no SessionEnd, no ingest
    later = alive.stat().st_mtime + 5
    os.utime(alive, (later, later))  # written after that ingest, as a live session is
    before = count(sample, "pin-test-clock")
    new = day / "rollout-2026-12-01T23-00-00-01a23399-0000-7000-8000-000000000000.jsonl"
    new.write_text(alive.read_text().splitlines()[0] + "\n")  # the next session, same cwd
    assert "pin-test-clock" in vk("ingest", "--missed-beside", new, "--cwd", "/HOME/proj")
    assert count(sample, "pin-test-clock") == before + 1
    with alive.open("a") as fh:  # the daemon exits: its SessionEnd ingests the whole rollout
        fh.write(alive.read_text().splitlines()[-1] + "\n")
    vk("ingest", alive)
    assert count(sample, "pin-test-clock") == before + 1  # once per session
    hosts = (Path(__file__).parent.parent / "docs" / "hosts.md").read_text()
    assert "--managed-daemon" in hosts and "ingest --missed-beside" in hosts
