"""The one place that writes files: atomic replace, and the store-wide writer lock."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.errors import VaultkeeperError


def atomic_write(path: Path, data: str | bytes) -> None:
    """Write ``data`` to ``path`` via a temp file in the same directory, fsync, os.replace.

    A reader sees the old file or the new one, never a partial write; a crash leaves
    at most a stray ``.vk-*.tmp`` file beside it.
    """
    raw = data.encode("utf-8") if isinstance(data, str) else data
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".vk-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        if not path.exists():
            os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    # The rename is durable only once the directory entry is flushed too.
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def append_line(path: Path, line: str) -> None:
    """Append one line (a journal record) with a single write and fsync."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = (line.rstrip("\n") + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def writer_lock(vault: Path, timeout: float = 30.0) -> Iterator[None]:
    """Hold the store-wide writer lock for the duration of one mutation."""
    from filelock import FileLock, Timeout  # not needed on the read-only paths

    lock_path = vault / config.STATE_DIR / config.WRITER_LOCK_FILE
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(lock_path), timeout=timeout)
    try:
        lock.acquire()
    except Timeout as exc:
        raise VaultkeeperError(
            f"{lock_path}: another vaultkeeper command is writing; try again"
        ) from exc
    try:
        yield
    finally:
        lock.release()
