"""The saved last report's file, ``state/last-report.json``: where it is, its bytes, its faults.

Split from report.py, which keeps turning a Report into a dict and back; this module
handles only paths, JSON text and plain dicts (no report type), so report.py can use
it and re-export report_path without an import circle.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from vaultkeeper import config

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing too: a scan has no use for it at run time
    from typing import Any

WHERE = f"{config.STATE_DIR}/{config.LAST_REPORT_FILE}"
# what a bad file may raise, from reading its JSON to building the Report from it
NOT_A_REPORT = (ValueError, TypeError, KeyError, AttributeError, RecursionError)


def report_path(vault: Path) -> Path:
    return vault / config.STATE_DIR / config.LAST_REPORT_FILE


def write(vault: Path, data: dict[str, Any], fsync_dir: bool) -> None:
    from vaultkeeper.store.fsio import atomic_write

    # compact: the C encoder is several times faster than an indented dump
    text = json.dumps(data) + "\n"
    atomic_write(report_path(vault), text, fsync_dir=fsync_dir)


def read(vault: Path) -> tuple[dict[str, Any] | None, str | None]:
    """(the file's JSON object, None), or (None, why not: None when there is no file)."""
    path = report_path(vault)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"{WHERE}: unreadable ({exc.strerror}); ignored"
    try:
        data = json.loads(raw)
    except NOT_A_REPORT as exc:
        return None, not_a_report(exc)
    if not isinstance(data, dict):
        return None, f"{WHERE}: not a report (JSON, not an object); ignored"
    return data, None


def utc(text: str) -> dt.datetime:
    return dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.timezone.utc)


def not_a_report(exc: Exception) -> str:
    return f"{WHERE}: not a report ({_why(exc)}); ignored"


def _why(exc: Exception) -> str:
    """What is wrong with the file, in words: a note shows no Python exception text."""
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON: line {exc.lineno} column {exc.colno}: {exc.msg}"
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    if isinstance(exc, KeyError):
        return f"no {json.dumps(exc.args[0]) if exc.args else 'expected'} field"
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return "a field holds the wrong kind of value"
