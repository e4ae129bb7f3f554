"""A kill at any write step of a real ingest never counts a session twice nor loses it
(issue 21 item 5), and transcripts ingested apart keep their own uses (item 9)."""

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
