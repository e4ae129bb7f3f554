"""The scan cache on disk: a base file and, beside it, a delta of what changed since.

A session changes a few files, but rewriting the whole cache (about 2 MB at 10,000
entries) cost a session-end scan more than reading the changed files did. So a scan
writes only the entries that differ from the base (``state/scan-cache.delta.json``,
replaced whole each time, naming the base it applies to) while that delta stays small
beside the base, and writes a new base (with a new id, which retires the old delta)
when it does not. A small cache is always written whole.

Either file may be missing, foreign or corrupt: a bad base is ignored with its delta,
a bad delta or one for another base is ignored alone. Nothing here is trusted beyond
its keys (vaultkeeper.scan.cache): whatever is lost is only read again.
"""

from __future__ import annotations

import contextlib
import os
import time

from vaultkeeper import __version__, config
from vaultkeeper.scan.cache import FORMAT, ScanCache

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

MAX_BYTES = 256 * 1024 * 1024  # a bigger file is not ours to parse
# A base smaller than this is rewritten whole (as cheap as a delta); above it, a delta
# is written while it is at most DELTA_SHARE of the base's size (each scan reads both).
DELTA_MIN_BASE = 256 * 1024
DELTA_SHARE = 1 / 3


def path(vault: Path | str, name: str = config.SCAN_CACHE_FILE) -> str:
    return os.path.join(vault, config.STATE_DIR, name)


def _read(file: str) -> tuple[dict[str, Any] | None, int]:
    """A cache file's JSON object of this format and version, and its size; None when
    it is missing, not a regular file, too big or not ours."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(file, flags)  # non-blocking: a FIFO is refused, not waited on
    except OSError:
        return None, 0
    try:
        info = os.fstat(fd)
        if (info.st_mode & 0o170000) != 0o100000 or info.st_size > MAX_BYTES:
            return None, 0
        with os.fdopen(fd, "rb", closefd=False) as fh:
            raw = fh.read()
    except OSError:
        return None, 0
    finally:
        os.close(fd)
    import json

    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, too deep, a huge int
        return None, 0
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None, 0
    if data.get("version") != __version__:
        return None, 0
    if not isinstance(data.get("memory"), dict) or not isinstance(data.get("registry"), dict):
        return None, 0
    return data, len(raw)


def load(vault: Path | str) -> ScanCache:
    """The cache as the last scan left it; an empty one when there is none or it is not ours."""
    data, size = _read(path(vault))
    if data is None:
        return ScanCache()
    delta, _ = _read(path(vault, config.SCAN_CACHE_DELTA_FILE))
    if delta is not None and (data.get("id") is None or delta.get("base") != data.get("id")):
        delta = None  # written against another base: what it held is read again
    cache = ScanCache(data, delta)
    cache.base_bytes = size
    return cache


def save(vault: Path, cache: ScanCache) -> bool:
    """Write what this scan keeps, if it changed: as a delta while that stays small, else
    as a new base. Whether it wrote."""
    if not cache.changed():
        return False
    import json

    from vaultkeeper.store.fsio import atomic_write

    folder = vault / config.STATE_DIR
    try:
        if cache.base_id is not None and cache.base_bytes >= DELTA_MIN_BASE:
            changes = cache.delta()
            head = {"format": FORMAT, "version": __version__, "base": cache.base_id}
            text = json.dumps({**head, **changes}, separators=(",", ":"))
            if len(text) <= DELTA_SHARE * cache.base_bytes:
                atomic_write(folder / config.SCAN_CACHE_DELTA_FILE, text, fsync_dir=False)
                return True
        base_id = f"{time.time_ns():x}-{os.getpid():x}"
        atomic_write(folder / config.SCAN_CACHE_FILE, cache.to_json(base_id), fsync_dir=False)
    except OSError:
        return False  # only a shortcut: the scan stands without it (the next one reads all)
    with contextlib.suppress(OSError):
        os.unlink(folder / config.SCAN_CACHE_DELTA_FILE)  # retired by the new base's id
    return True
