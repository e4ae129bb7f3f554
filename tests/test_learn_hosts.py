"""ingest on transcripts and rollouts the real hosts wrote (tests/fixtures/hosts/).

Each test reads a recording of Claude Code 2.1.332 or Codex 0.169.0 run offline against a
scripted mock model (tools/hosts/record.py; the scenario's MANIFEST.md and commands.txt
say what was run) and checks what a user would notice: the success count in the
registry, and the usage log's events.
"""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

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
