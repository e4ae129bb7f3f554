"""What a full scan flushes to disk: every file's bytes, and state/ once, at the end.

A folder fsync costs about as much as the rest of a small write (a journal commit on
ext4), so a scan flushes state/ once, after its last rename (the state file's
completion), which makes the report's rename durable too; the in-progress mark's
rename is left unflushed (lost in a crash, the file says what it said before). Every
file's bytes are flushed before its rename, so the state file is valid JSON after any
crash, as the spec's check 8 asks.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import stat
from pathlib import Path

import pytest

from tests.conftest import MakeVault, recall_on
from tests.test_scan_classify import spec_files
from vaultkeeper import config
from vaultkeeper.scan import classify as scan

NOW = dt.datetime(2026, 9, 1, 12, 0, tzinfo=dt.timezone.utc)


def test_a_scan_flushes_every_file_and_state_once_at_the_end(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = recall_on(make_vault(spec_files(NOW.date())))  # its index is written too
    state_dir = vault / config.STATE_DIR
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        kind = "folder" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file"
        events.append(f"fsync {kind}")
        real_fsync(fd)

    def replace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        events.append(f"rename {Path(dst).name}")
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    outcome = scan.run_scan(vault, now=NOW, env={}, force=True, pid=os.getpid())
    assert outcome.report is not None
    assert events == [
        "fsync file",
        f"rename {config.STATE_FILE}",  # in progress: not flushed
        # (the scan's rows go to the derived store: SQLite's own writes, not a rename)
        # (the report's row too: scan/last.py)
        "fsync file",
        f"rename {config.STATE_FILE}",
        "fsync folder",
        # then the full-text index (search/index.py): one SQLite transaction in the derived
        # store, no file of its own renamed into place
    ]
    done = json.loads((state_dir / config.STATE_FILE).read_text())
    assert done["state"] == "idle" and done["lastCompleted"] > 0 and done["pid"] is None
    assert outcome.report.promote


def test_other_writes_still_flush_their_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultkeeper.store.fsio import atomic_write

    kinds: list[bool] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        kinds.append(stat.S_ISDIR(os.fstat(fd).st_mode))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    atomic_write(tmp_path / "note.md", "x\n")
    assert kinds == [False, True]
