"""The recall table builder's own files under state/, beside the table it writes.

- ``recall-lookup.keys.json``: each lesson file's stat key as the table was built from
  it (and whether that key was settled, scan.cache.key_of). Small: a scan loads it to
  find the few lessons that changed since the table was built.
- ``recall-lookup.recs.json``: what a build read of each lesson (its project, anchors'
  files, globs, served line and words), under the key it was read at. Large: loaded
  only when the table is built again, so that only changed files are read then.
- ``recall-lookup.sig``: a hash of every lesson's stat key when the table (with the rows
  over it) was last found true; its time is when.

Each file is dropped as a whole when another version of the table, or another
vaultkeeper's masking (the served lines are masked when read), wrote it.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

import vaultkeeper
from vaultkeeper import config
from vaultkeeper.scan.cache import key_of
from vaultkeeper.store.fsio import atomic_write

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_LEGACY = ("recall-lookup.json", "recall-lookup.text")  # version 2's table, in two files
RECS_FILE = "recall-lookup.recs.json"  # under state/, beside config.RECALL_LOOKUP_KEYS_FILE


def state_file(vault: Path, name: str) -> Path:
    return vault / config.STATE_DIR / name


def load(vault: Path, name: str, field: str) -> dict[str, Any]:
    """The ``field`` mapping of state/``name`` as this version wrote it, else {}."""
    try:
        data = json.loads(state_file(vault, name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != config.RECALL_LOOKUP_VERSION:
        return {}
    if data.get("masked_by") != vaultkeeper.__version__:
        return {}  # texts masked by another version's patterns: every lesson read again
    found = data.get(field)
    return found if isinstance(found, dict) else {}


def save(vault: Path, name: str, field: str, value: dict[str, Any]) -> None:
    body = {"version": config.RECALL_LOOKUP_VERSION, "masked_by": vaultkeeper.__version__}
    body[field] = value
    atomic_write(state_file(vault, name), json.dumps(body, ensure_ascii=False), fsync_dir=False)


def newer(sig_file: Path, after: tuple[Path, ...], table_file: Path) -> bool:
    """Whether the table exists and was last found true after each of ``after`` was
    last written (the scan cache's base file, which must exist; its delta file and the
    rows over the table, when there are any)."""
    try:
        table_file.stat()
        found = sig_file.stat().st_mtime_ns
    except OSError:
        return False
    for n, path in enumerate(after):
        try:
            if found < path.stat().st_mtime_ns:
                return False
        except FileNotFoundError:
            if n == 0:
                return False
        except OSError:
            return False
    return True


def stat_of(path: Path) -> list[int] | None:
    """A file's stat key (scan.cache.key_of's), None when it is not there."""
    try:
        return key_of(path.stat(), 0)[0]
    except OSError:
        return None


def read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None


def tidy(vault: Path) -> None:
    """Drop version 2's table files, the hook's ask for a table once there is one, and
    recall session files older than ``RECALL_SESSION_MAX_DAYS``."""
    state = vault / config.STATE_DIR
    table = (state / config.RECALL_LOOKUP_FILE).is_file()
    for name in _LEGACY + ((config.RECALL_LOOKUP_WANT_FILE,) if table else ()):
        with contextlib.suppress(OSError):
            (state / name).unlink()
    folder = state / config.RECALL_SESSIONS_DIR
    cutoff = time.time() - config.RECALL_SESSION_MAX_DAYS * 86400
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.is_file(follow_symlinks=False) and entry.stat().st_mtime < cutoff:
                os.unlink(entry.path)
        except OSError:
            continue
