"""Sessions whose end hook never ran: the next session's start ingests them.

Hosts cancel or kill SessionEnd hooks (Ctrl-C, some exits; an interactive Codex defers
SessionEnd by a minute or more), so a session's transcript may never reach ``ingest``.
Every ingest remembers, in ``state/machine.json`` (key ``ingested``), each file it read
and that file's modification time; the session-start hook then runs ``ingest --missed-beside
TRANSCRIPT`` (detached, bounded), which reads the transcripts of the same project
(Claude Code: the transcript's own folder; Codex: rollouts of the same cwd in its date
folder and the day before) that are newer than the first ingest and not yet recorded
at their current size and time. Replay-safe like every ingest: nothing counts twice.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from vaultkeeper.learn.transcripts import ROLLOUT_GLOB, meta
from vaultkeeper.store import machine

KEY = "ingested"  # in state/machine.json: {"since": first ingest, "files": {path: mtime}}
MAX_FILES = 50  # at one session start: the rest waits for the next
KEEP_DAYS = 30  # how long a file's record is kept


def _load(vault: Path) -> dict[str, Any]:
    data = machine.get(vault, KEY)
    return data if isinstance(data, dict) else {}


def _files(data: dict[str, Any]) -> dict[str, Any]:
    files = data.get("files")
    return dict(files) if isinstance(files, dict) else {}


def _stamp(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


def remember(vault: Path, files: list[Path], now: dt.datetime) -> None:
    """After an ingest: the files it read, at the modification time they had."""
    stamps = {str(p): s for p in files if (s := _stamp(p)) is not None}
    cutoff = now.timestamp() - KEEP_DAYS * 86400

    def change(had: Any) -> dict[str, Any]:
        data = had if isinstance(had, dict) else {}
        seen = {**_files(data), **stamps}
        seen = {k: v for k, v in seen.items() if isinstance(v, (int, float)) and v >= cutoff}
        since = data.get("since")
        return {
            "since": since if isinstance(since, (int, float)) else now.timestamp(),
            "files": seen,
        }

    machine.update(vault, KEY, change)


def missed(vault: Path, current: Path, cwd: str | None) -> list[Path]:
    """Transcripts of ``current``'s project not yet ingested as they are now (oldest first)."""
    data = _load(vault)
    since = data.get("since")
    if not isinstance(since, (int, float)):  # never ingested: nothing is "missed" yet
        return []
    seen = _files(data)
    found: list[tuple[float, Path]] = []
    for path in _same_project(current, cwd):
        stamp = _stamp(path)
        if path == current or stamp is None or stamp <= since:
            continue
        if seen.get(str(path)) != stamp:
            found.append((stamp, path))
    return [p for _, p in sorted(found)[-MAX_FILES:]]


def _same_project(current: Path, cwd: str | None) -> list[Path]:
    try:
        if not current.name.startswith("rollout-"):  # Claude Code: one folder per project
            return sorted(current.parent.glob("*.jsonl"))
        day = dt.date(*map(int, current.parent.parts[-3:]))
        before = day - dt.timedelta(days=1)
        folders = [current.parent, current.parent.parents[2] / before.strftime("%Y/%m/%d")]
    except (OSError, ValueError, TypeError, IndexError):
        return []
    out = []
    for folder in folders:
        for path in sorted(folder.glob(ROLLOUT_GLOB)) if folder.is_dir() else ():
            payload = meta(path)
            if payload is not None and (cwd is None or payload.get("cwd") == cwd):
                out.append(path)
    return out
