"""A kill at any write step of a real ingest never counts a session twice nor loses it
and transcripts ingested apart keep their own uses."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests import transcript_fixtures as tf
from tests.conftest import MakeVault
from tests.test_learn_ingest import REGISTRY, counters
from vaultkeeper.learn.count import CiteCall, record
from vaultkeeper.learn.ingest import ingest
from vaultkeeper.store.uses import UseEvent, read_events

NOW = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.timezone.utc)
PATTERNS = ("pin-test-clock", "grep-the-config-value")


def transcripts(folder: Path) -> list[Path]:
    """Three sessions: each cites both patterns (the third twice, in two lines)."""
    out = []
    for i in range(3):
        lines = [
            tf.claude("assistant", [tf.text(f"[[patterns/registry#{p}]]")], session=f"s{i}")
            for p in (*PATTERNS, *PATTERNS[: i // 2])
        ]
        out.append(tf.write(folder / f"s{i}.jsonl", lines))
    return out


def killed_ingest(vault: Path, paths: list[Path], at: str) -> int:
    env = {**os.environ, "VAULTKEEPER_TEST_KILL_AT": at, "VAULTKEEPER_TODAY": "2026-12-01"}
    argv = [sys.executable, "-m", "vaultkeeper", "--vault", str(vault), "ingest"]
    done = subprocess.run([*argv, *map(str, paths)], env=env, capture_output=True, timeout=600)
    return done.returncode


@pytest.mark.parametrize("how", ["", ":TERM"])
def test_a_kill_at_every_write_step_counts_each_session_once(
    tmp_path: Path, make_vault: MakeVault, how: str
) -> None:
    pristine = make_vault({"patterns/registry.md": REGISTRY})
    before = {p: int(counters(pristine, p)[0]) for p in PATTERNS}
    paths = transcripts(tmp_path / "t")
    killed = 0
    for step in range(1, 200):
        vault = tmp_path / f"run{step}"
        shutil.copytree(pristine, vault)
        code = killed_ingest(vault, paths, f"{step}{how}")
        if code == 0:  # the ingest ran past its last write step: every step was tried
            break
        assert code == -(signal.SIGTERM if how else signal.SIGKILL)
        killed += 1
        ingest(vault, paths, NOW)  # the next run finishes (or redoes) the counting
        ingest(vault, paths, NOW)  # and one more counts nothing
        after = {p: int(counters(vault, p)[0]) for p in PATTERNS}
        assert after == {p: n + 3 for p, n in before.items()}, f"killed at step {step}"
        sessions = {(e.session, e.target) for e in read_events(vault)}
        assert sessions == {(f"s{i}", p) for i in range(3) for p in PATTERNS}
    assert killed >= 8  # the log, the registry, the journal, the saved report: many points


def test_a_server_line_stands_for_one_session_across_ingests(
    tmp_path: Path, make_vault: MakeVault
) -> None:
    """S1's cite call took the server's line; S2, ingested later with the same call but
    no server line of its own, used to be taken as covered by that same line."""
    vault = make_vault({"patterns/registry.md": REGISTRY})
    server = UseEvent("mcp-x", "mcp", "cite", "pin-test-clock", NOW.date(), "mcp:ev")
    record(vault, [server], NOW)
    assert counters(vault, "pin-test-clock")[0] == "3"
    for session in ("S1", "S2"):
        event = UseEvent(session, "claude-code", "cite", "pin-test-clock", NOW.date(), "t:1")
        call = CiteCall(session, "pin-test-clock", NOW.date(), "ev")
        record(vault, [event], NOW, calls=[call])
    assert counters(vault, "pin-test-clock")[0] == "4"  # S1 by the server, S2 itself


def _union(base: Path, ours: Path, theirs: Path, out: Path) -> None:
    """git's merge=union of an append-only log: base, then each side's new lines."""
    old = base.read_bytes() if base.exists() else b""
    added = [p.read_bytes()[len(old) :] if p.exists() else b"" for p in (ours, theirs)]
    out.write_bytes(old + b"".join(added))


def _sync(base: Path, one: Path, two: Path, into: Path) -> None:
    """Both machines' work merged as git would with vaultkeeper's drivers installed."""
    from vaultkeeper.registry.merge import merge_texts

    shutil.rmtree(into, ignore_errors=True)
    shutil.copytree(one, into)
    for log in ("state/uses.jsonl", "state/journal.jsonl"):
        _union(base / log, one / log, two / log, into / log)
    reg = "patterns/registry.md"
    texts = [(v / reg).read_text() for v in (base, one, two)]
    merged = merge_texts(texts[0], texts[1], texts[2], reg)
    assert merged.conflicts == 0
    (into / reg).write_bytes(merged.text)


@pytest.mark.skipif(shutil.which("git") is None, reason="the registry merge runs git")
def test_one_session_ingested_on_two_machines_counts_once_after_a_sync(
    tmp_path: Path, make_vault: MakeVault
) -> None:
    base = make_vault({"patterns/registry.md": REGISTRY})
    record(
        base, [UseEvent("old", "cli", "cite", "bisect-before-reading-diffs", NOW.date(), "x")], NOW
    )
    start = int(counters(base, "pin-test-clock")[0])
    grep_start = int(counters(base, "grep-the-config-value")[0])
    paths = transcripts(tmp_path / "t")[:1]
    one, two = tmp_path / "one", tmp_path / "two"
    shutil.copytree(base, one)
    shutil.copytree(base, two)
    ingest(one, paths, NOW)
    ingest(two, paths, NOW)
    merged = tmp_path / "merged"
    _sync(base, one, two, merged)
    assert int(counters(merged, "pin-test-clock")[0]) == start + 2  # the bug, before repair
    # both machines pull the merge and each ingests again before the next sync
    for side in (one, two):
        shutil.rmtree(side)
        shutil.copytree(merged, side)
        ingest(side, paths, NOW)
        assert int(counters(side, "pin-test-clock")[0]) == start + 1
    journal = (one / "state/journal.jsonl").read_text()
    assert "session(s) s0 counted on two machines before a sync" in journal
    # both took one off; after the next sync, the next counting puts one back
    again = tmp_path / "again"
    _sync(merged, one, two, again)
    ingest(again, paths, NOW)
    assert int(counters(again, "pin-test-clock")[0]) == start + 1
    assert int(counters(again, "grep-the-config-value")[0]) == grep_start + 1
    ingest(again, paths, NOW)
    assert int(counters(again, "pin-test-clock")[0]) == start + 1
