"""A scan that runs while an apply changes entries saves a report that knows the apply."""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import MakeVault
from tests.test_apply_resync import HELD, MEMORY, REGISTRY
from vaultkeeper.apply.batch import apply_decision
from vaultkeeper.apply.decision import Decision
from vaultkeeper.report import file as reportguard
from vaultkeeper.report.candidates import report_path
from vaultkeeper.scan import classify as scan
from vaultkeeper.store.lockdir import lock_file

NOW = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)


@pytest.fixture
def vault(make_vault: MakeVault) -> Path:
    root: Path = make_vault(
        {
            "patterns/registry.md": REGISTRY,
            MEMORY: HELD,
            "projects/api/notes.md": "---\nname: notes\n---\nline 1\nline 2\n",
        }
    )
    assert scan.run_scan(root, now=NOW, env={}, force=True, pid=os.getpid()).report
    return root


def held_out(vault: Path) -> list[str]:
    return [c["path"] for c in json.loads(report_path(vault).read_text())["held_out"]]


def test_an_apply_during_a_scan_is_not_undone_by_its_report(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = scan.classify_and_keep
    calls: list[int] = []

    def classify_then_apply(*args: Any, **kwargs: Any) -> Any:
        found = real(*args, **kwargs)  # the files as they were when the scan read them
        calls.append(len(found.held_out))
        if len(calls) == 1:  # an agent re-validates the lesson before the scan saves
            done = apply_decision(
                vault, Decision("revalidate", MEMORY, "projects/api/notes.md:4", "pass"), NOW
            )
            assert done.outcome == "act", done.reason
            assert held_out(vault) == []  # the apply kept the saved report true
        return found

    monkeypatch.setattr(scan, "classify_and_keep", classify_then_apply)
    outcome = scan.run_scan(vault, now=NOW, env={}, force=True, pid=os.getpid())
    assert calls == [1, 0]  # read again once the report had changed under it
    assert outcome.report is not None and outcome.report.held_out == ()
    assert held_out(vault) == []
    assert "status: active" in (vault / MEMORY).read_text()


def test_with_no_apply_meanwhile_the_files_are_read_once(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = scan.classify_and_keep
    calls: list[int] = []
    monkeypatch.setattr(scan, "classify_and_keep", lambda *a, **k: calls.append(1) or real(*a, **k))
    scan.run_scan(vault, now=NOW, env={}, force=True, pid=os.getpid())
    assert calls == [1] and held_out(vault) == [MEMORY]


def test_the_lock_is_the_one_apply_holds(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """fsio.writer_lock is filelock's FileLock on the user's lock file for the vault: while
    another process holds it, the scan cannot have it; once it lets go, the scan can."""
    lock, _ = lock_file(vault)
    code = (
        "import sys, filelock\n"
        "with filelock.FileLock(sys.argv[1]):\n"
        "    print('held', flush=True)\n"
        "    sys.stdin.readline()\n"
        "print('free', flush=True)\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code, str(lock)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert holder.stdin is not None and holder.stdout is not None
    try:
        assert holder.stdout.readline() == "held\n"
        monkeypatch.setattr(reportguard, "WAIT_S", 0.05)
        with reportguard.locked(vault) as held:
            assert held is False
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.stdout.readline() == "free\n"
        with reportguard.locked(vault) as held:
            assert held is True
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)


def test_a_held_lock_is_waited_for_at_most_wait_s(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lock, _ = lock_file(vault)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # another open file: it excludes the scan's
        monkeypatch.setattr(reportguard, "WAIT_S", 0.05)
        with reportguard.locked(vault) as held:
            assert held is False
        # the scan still completes and saves its report
        outcome = scan.run_scan(vault, now=NOW, env={}, force=True, pid=os.getpid())
        assert outcome.report is not None and held_out(vault) == [MEMORY]
    finally:
        os.close(fd)
    with reportguard.locked(vault) as held:
        assert held is True
