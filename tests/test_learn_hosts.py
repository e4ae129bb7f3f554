"""ingest on transcripts and rollouts the real hosts wrote (tests/fixtures/hosts/).

Each test reads the newest recording of Claude Code or Codex run offline against a
scripted mock model (tools/hosts/record.py; the scenario's MANIFEST.md and commands.txt
say what was run) and checks what a user would notice: the success count in the
registry, and the usage log's events. Session ids, date folders and "now" come from the
recording (host_fixtures.py), so a re-recording passes unchanged.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from host_fixtures import CLAUDE, CODEX, after, claude_files, day, meta, noted, rollouts

from vaultkeeper.learn.ingest import ingest
from vaultkeeper.mcp.tools import VaultTools
from vaultkeeper.store.uses import read_events


def count(vault: Path, name: str) -> int:
    lines = (vault / "patterns/registry.md").read_text().split("\n")
    at = lines.index(f"### {name}")
    line = next(x for x in lines[at:] if x.startswith("**success count:**"))
    return int(line.split()[-1])


def copy(files: list[Path], dest: Path) -> list[Path]:
    """The recorded files, copied (a date folder keeps its layout: sub-agents are found)."""
    dest.mkdir(parents=True, exist_ok=True)
    return [Path(shutil.copy(f, dest / f.name)) for f in files]


def test_codex_namespaced_mcp_cite_and_link_count_once_and_its_read_is_logged(
    sample: Path, tmp_path: Path
) -> None:
    """codex-*/mcp: the rollout calls `cite` with namespace mcp__vaultkeeper (and
    `read`), then links [[patterns/registry#pin-test-clock]]; the server logged the cite."""
    (rollout,) = copy(rollouts(CODEX / "mcp"), tmp_path / "sessions")
    now = after(rollout)
    before = count(sample, "pin-test-clock")
    server = VaultTools(sample, lambda: now, f"mcp-{now:%Y%m%dT%H%M%SZ}-abc123")
    cited = server.cite("pin-test-clock", "tests/test_clock.py:12")
    assert cited["counted"] and count(sample, "pin-test-clock") == before + 1

    result = ingest(sample, [rollout], now)
    assert result.ok
    assert count(sample, "pin-test-clock") == before + 1  # the same use, not a second
    session = meta(rollout)["id"]
    logged = {(e.session, e.kind, e.target) for e in read_events(sample)}
    assert (session, "read", "patterns/registry.md") in logged


def _claude_files(scenario: str) -> list[Path]:
    return list(claude_files(CLAUDE / scenario).values())


# resume-fork: FIRST is given with --session-id, then --resume'd; FORK is --resume FIRST
# --fork-session, the scenario's other transcript
FIRST = noted(CLAUDE / "resume-fork", "first session id (given with --session-id)")
(FORK,) = set(claude_files(CLAUDE / "resume-fork")) - {FIRST}


def test_a_fork_session_does_not_count_its_source_s_lines_again_in_either_order(
    sample: Path, tmp_path: Path
) -> None:
    """claude-code-*/resume-fork: the fork's file copies FIRST's two assistant lines
    (pin-test-clock, grep-the-config-value) with their uuids and requestSessionId; only
    its own turn (bisect-before-reading-diffs) is new."""
    names = ("pin-test-clock", "grep-the-config-value", "bisect-before-reading-diffs")
    files = {p.stem: p for p in copy(_claude_files("resume-fork"), tmp_path / "proj")}
    assert set(files) == {FIRST, FORK}
    now = after(*files.values())
    orders = {"fork first": [FORK, FIRST], "source first": [FIRST, FORK], "together": None}
    base = {name: count(sample, name) for name in names}
    for order, steps in orders.items():
        vault = tmp_path / order.replace(" ", "-")
        shutil.copytree(sample, vault)
        if steps is None:
            assert ingest(vault, [files[FIRST], files[FORK]], now).ok
        else:
            for stem in steps:
                assert ingest(vault, [files[stem]], now).ok
        got = {name: count(vault, name) - base[name] for name in names}
        assert got == dict.fromkeys(names, 1), order
        sessions = {(e.session, e.target) for e in read_events(vault) if e.kind == "cite"}
        assert (FORK, "pin-test-clock") not in sessions
        assert (FORK, "bisect-before-reading-diffs") in sessions


def test_history_injected_through_stream_json_never_counts(sample: Path, tmp_path: Path) -> None:
    """claude-code-*/stream-json: an injected assistant line ("madeBy":"input")
    links bisect-before-reading-diffs; the model's own ("madeBy":"model") pin-test-clock."""
    (transcript,) = copy(_claude_files("stream-json"), tmp_path / "proj")
    assert '"madeBy":"input"' in transcript.read_text()
    before = {n: count(sample, n) for n in ("bisect-before-reading-diffs", "pin-test-clock")}
    assert ingest(sample, [transcript], after(transcript)).ok
    assert count(sample, "bisect-before-reading-diffs") == before["bisect-before-reading-diffs"]
    assert count(sample, "pin-test-clock") == before["pin-test-clock"] + 1


def test_a_codex_parent_brings_its_sub_agent_and_a_child_alone_counts_into_the_parent(
    sample: Path, tmp_path: Path
) -> None:
    """codex-*/subagent: the parent (the exec thread) spawned one sub-agent, whose rollout
    (same date folder, thread_spawn.parent_thread_id = the parent's id) alone links
    bisect-before-reading-diffs (three times); no hook ran for it."""
    name = "bisect-before-reading-diffs"
    recorded = rollouts(CODEX / "subagent")
    assert len(recorded) == 2
    parent, child = sorted(recorded, key=lambda p: isinstance(meta(p)["source"], dict))
    parent_id = meta(parent)["id"]
    assert meta(child)["source"]["subagent"]["thread_spawn"]["parent_thread_id"] == parent_id
    now = after(parent, child)
    for order in ("parent", "child by hand"):
        vault = tmp_path / order.replace(" ", "-")
        shutil.copytree(sample, vault)
        before = count(vault, name)
        folder = tmp_path / f"sessions-{order.replace(' ', '-')}" / day(parent)
        parent_copy, child_copy = copy([parent, child], folder)
        first = ingest(vault, [parent_copy if order == "parent" else child_copy], now)
        assert first.ok and count(vault, name) == before + 1, order
        assert [f.session for f in first.files] == [parent_id] * len(first.files)
        if order == "parent":
            assert [Path(f.path).name for f in first.files] == [parent.name, child.name]
        again = ingest(vault, [parent_copy, child_copy], now)  # a second ingest adds nothing
        assert again.ok and count(vault, name) == before + 1, order
        sessions = {e.session for e in read_events(vault) if e.target == name}
        assert sessions == {parent_id}, order
