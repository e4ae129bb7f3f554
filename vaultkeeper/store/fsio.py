"""The one place that writes files: atomic replace, and the store-wide writer lock."""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import stat
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.errors import LockBusy, UnsafePathError, VaultkeeperError
from vaultkeeper.store.lockdir import lock_file, sweep_locks
from vaultkeeper.store.vault import own_dir

_changes = [0]  # files this process wrote or moved: whether a failed step changed anything
# For the kill tests only: "N" or "N:TERM" kills this process (SIGKILL, or SIGTERM) at
# its Nth write step (before and after each append, temp write and rename), to prove
# that a kill at any of them loses no count and counts nothing twice.
_KILL_AT = os.environ.get("VAULTKEEPER_TEST_KILL_AT")
_steps = [0]


def _step() -> None:
    if _KILL_AT is None:
        return

    _steps[0] += 1
    at, _, how = _KILL_AT.partition(":")
    if at.isdigit() and _steps[0] == int(at):
        os.kill(os.getpid(), signal.SIGTERM if how == "TERM" else signal.SIGKILL)


# Every path this process wrote or moved, in order: when the outermost hold of the writer
# lock ends after some, the lessons among them are marked for the recall (``_written_rows``).
_written: list[str] = []
_hold = [0, 0]  # outermost holds of the writer lock so far, and the current depth


def note_written(path: Path | str) -> None:
    """A file written or moved other than by atomic_write or move (os.replace)."""
    _written.append(str(path))


def _written_rows(vault: Path, written: list[str]) -> None:
    """The lessons a command wrote or moved, marked in the derived store's full-text
    index (``search_pending``, when it is kept), in the step that wrote them: the recall
    hook reads them again before it serves anything, so a lesson just archived is never
    served and one just made is. The hook's rows of other files are checked by stat key."""
    from vaultkeeper.store import db  # sqlite3: only once a command wrote
    from vaultkeeper.store.vault import is_memory_path

    rels = []
    for top in {os.path.abspath(vault), os.path.realpath(vault)}:
        base = top.rstrip(os.sep) + os.sep
        for path in written:
            full = os.path.abspath(path)
            if full.startswith(base) and is_memory_path(
                rel := full[len(base) :].replace(os.sep, "/")
            ):
                rels.append((rel,))
    if rels and os.path.isfile(db.path_of(vault)):
        with db.existing(vault) as conn:
            if conn is not None:
                with db.writing(conn):
                    conn.executemany(
                        "INSERT OR IGNORE INTO search_pending SELECT ? WHERE EXISTS "
                        "(SELECT 1 FROM search_meta WHERE key = 'built')",
                        rels,
                    )


def changes() -> int:
    """How many writes and moves this process has made so far (compare two readings)."""
    return _changes[0]


def move(source: Path, target: Path) -> None:
    """os.replace, counted as a change (a move into or out of .trash/)."""
    os.replace(source, target)
    _changes[0] += 1
    _written.extend((str(source), str(target)))


# Not tempfile and threading: a scan writes two files here, and those imports (shutil,
# random, bz2, lzma, weakref, typing with them) would cost it more than the writes.
_TEMP_FLAGS = (
    os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
)
_TEMP_TRIES = 100


def atomic_write(path: Path, data: str | bytes | Iterable[str], *, fsync_dir: bool = True) -> None:
    """Write ``data`` to ``path`` via a temp file in the same directory, fsync, os.replace.

    ``data`` may be pieces of text, written one after another: a big file (the scan
    cache) is then never held whole in memory, as text and again as bytes.

    A reader sees the old file or the new one, never a partial write; a crash leaves
    at most a stray hidden ``.<name>.*.vk-tmp`` file beside it (hidden files are never
    notes). An existing file keeps its permission bits; a new one gets 0644.

    ``fsync_dir=False`` leaves the rename unflushed (an fsync of a folder costs about
    10 ms on ext4, more than the rest of a small write): for the scanner's own state/
    files, when losing the rename in a crash is harmless or the caller's next write
    there flushes the folder anyway. The file's own bytes are always flushed.
    """
    pieces = [data] if isinstance(data, (str, bytes)) else data
    path.parent.mkdir(parents=True, exist_ok=True)
    # a 255-byte name plus the random part would exceed NAME_MAX
    prefix = f".{path.name[:80]}."
    fd, tmp = _mkstemp(path.parent, prefix, ".vk-tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            for piece in pieces:
                fh.write(piece.encode("utf-8") if isinstance(piece, str) else piece)
            fh.flush()
            os.fsync(fh.fileno())
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        if not path.exists():
            os.chmod(tmp, 0o644)
        _step()
        os.replace(tmp, path)
        _changes[0] += 1
        _written.append(str(path))
        _step()
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.filename == tmp:  # name the file, not our temp
            raise type(exc)(exc.errno, exc.strerror, str(path)) from None
        raise
    if fsync_dir:
        _fsync_dir(path.parent)


def _mkstemp(folder: Path, prefix: str, suffix: str) -> tuple[int, str]:
    """tempfile.mkstemp(suffix, prefix, folder): a new file only this process opened
    (mode 0600, never through a symlink), and its absolute path."""
    for _ in range(_TEMP_TRIES):
        name = os.path.join(folder, f"{prefix}{os.urandom(6).hex()}{suffix}")
        try:
            return os.open(name, _TEMP_FLAGS, 0o600), os.path.abspath(name)
        except FileExistsError:
            continue  # a name taken (by a stray temp file): draw another
    raise FileExistsError(f"{folder}: no free temporary name after {_TEMP_TRIES} tries")


def _fsync_dir(directory: Path) -> None:
    # The rename is durable only once the directory entry is flushed too.
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def append_line(path: Path, line: str, *, inside: Path | None = None) -> None:
    """Append one line (a journal record) with a single write and fsync.

    Never through a symlink: the file itself is opened with O_NOFOLLOW, and with
    ``inside`` (the vault) its folder must resolve inside it. The logs travel through
    git, so a symlink committed on one machine would otherwise make the next append on
    another write wherever it points. The line always starts a line of its own: after a
    torn last line (a write cut short, no newline) a newline goes first, so the new
    record is never glued to it.
    """
    if inside is not None:
        _refuse_folder_out(path, inside)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = (line.rstrip("\n") + "\n").encode("utf-8")
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | _NOFOLLOW, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP or os.path.islink(path):
            raise UnsafePathError(
                f"{path}: a symlink; refused (vaultkeeper never writes through one: "
                "make it a regular file)"
            ) from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafePathError(f"{path}: not a regular file; refused")
        if info.st_size and os.pread(fd, 1, info.st_size - 1) != b"\n":
            data = b"\n" + data
        _step()
        os.write(fd, data)
        _changes[0] += 1
        os.fsync(fd)
        _step()
    finally:
        os.close(fd)


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _refuse_folder_out(path: Path, vault: Path) -> None:
    """UnsafePathError when ``path``'s folder (an existing part of it) leads out of ``vault``."""
    root = os.path.realpath(vault)
    real = os.path.realpath(path.parent)
    if real != root and not real.startswith(root.rstrip(os.sep) + os.sep):
        raise UnsafePathError(
            f"{path}: its folder resolves to {real}, outside the vault {root}; refused"
        )


_LOCKS: dict[str, Any] = {}
_LOCKS_GUARD = threading.Lock()


def _file_lock(lock_path: Path) -> Any:
    # One FileLock object per lock file and process: FileLock counts re-acquisitions by
    # the same thread, so a mutation that calls another (apply -> record_uses) nests
    # instead of waiting for itself; other threads and processes still wait.
    # filelock is imported here: its import (44-77 ms) would cost the session-start brief,
    # which imports this module and takes no lock (docs/benchmarks.md, "Stand-ins")
    from filelock import FileLock

    key = str(lock_path.resolve())
    with _LOCKS_GUARD:
        lock = _LOCKS.get(key)
        if lock is None:
            lock = _LOCKS[key] = FileLock(key)
        return lock


@contextlib.contextmanager
def writer_lock(vault: Path, timeout: float = 30.0) -> Iterator[None]:
    """Hold the store-wide writer lock for the duration of one mutation.

    Re-entrant within one thread; serialises threads and processes. The lock is one
    file in the user's private lock folder (store.lockdir.lock_file), which every process
    of the user agrees on: a foreign vault gets no state/ folder or lock file of ours;
    where the vault has ``state/``, that folder is flocked too (_hold_state_folder: a
    process that sees another lock folder still waits). Only where no private folder can
    be had is the file ``state/writer.lock`` (made then).
    """
    from filelock import Timeout  # filelock: see _file_lock

    state = Path(own_dir(vault, config.STATE_DIR))
    where, fallback = lock_file(vault)
    paths = [Path(where)]
    if os.path.lexists(state) and not state.is_dir():  # mkdir's own words: "File exists"
        raise VaultkeeperError(
            f"{state}: exists and is not a folder; vaultkeeper keeps its state "
            "there: move that file away"
        ) from None
    if fallback:
        state.mkdir(parents=True, exist_ok=True)
    held: list[Any] = []
    outermost = False
    folder: int | None = None
    mark = len(_written)
    try:
        for path in paths:
            lock = _file_lock(path)
            try:
                lock.acquire(timeout=timeout)
            except Timeout as exc:
                raise LockBusy(
                    f"{path}: another vaultkeeper command is writing; try again"
                ) from exc
            held.append(lock)
        outermost = getattr(held[0], "lock_counter", 1) == 1
        _hold[0] += outermost
        _hold[1] += 1
        if outermost:  # the fallback's file is in state/ too: the folder excludes all
            folder = _hold_state_folder(state, timeout)  # closed below
        if outermost:  # the outermost hold: no writer is mid-write
            sweep_temps(vault)
        yield
    finally:
        _hold[1] -= len(held) == len(paths)
        try:
            if outermost and len(_written) > mark:
                done = _written[mark:]
                del _written[:]  # seen: a long-lived process (the MCP server) keeps no list
                with contextlib.suppress(Exception):  # a cache's upkeep never fails a write
                    _written_rows(vault, done)
        finally:
            if folder is not None:
                os.close(folder)  # lets go of its flock
            for lock in reversed(held):
                lock.release()
            if outermost and not fallback:  # the lock folder keeps only held locks
                with contextlib.suppress(OSError):
                    sweep_locks()


def _hold_state_folder(state: Path, timeout: float) -> int | None:
    """flock the vault's ``state/`` folder itself (no file of its own), once the user's
    lock file is held; the open folder, or None where there is no state/ folder.

    The user's lock folder is the same for every process of the user that sees the same
    /tmp: a process with a private /tmp (a service's), another user's or an older
    vaultkeeper's takes another file or none, and would write at the same time. They all
    share the vault, so its state/ folder excludes them too. Taken second, by the
    outermost hold only, and always in that order: no two writers wait on each other.
    """
    import fcntl

    try:
        fd = os.open(state, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None  # no state/ yet (a foreign vault), or not a folder: the lock file alone
    deadline = time.monotonic() + max(timeout, 0)
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                raise LockBusy(
                    f"{state}: another vaultkeeper command is writing; try again"
                ) from None
            time.sleep(0.01)  # filelock polls the same way
        except OSError:
            os.close(fd)
            return None  # a file system without flock on folders: the lock file alone


def sweep_temps(vault: Path) -> list[str]:
    """Remove atomic_write's temp files a killed writer left in the vault root,
    patterns/ and state/ (where most writes land); the names removed.

    Called under the writer lock, and only files older than STALE_RUN_MS go, so a
    write in progress (there is none: every store write holds the lock) is safe twice.
    """
    removed: list[str] = []
    now = time.time()
    for folder in (vault, vault / config.PATTERNS_DIR, vault / config.STATE_DIR):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if not (name.startswith(".") and name.endswith(".vk-tmp")):
                continue
            path = folder / name
            with contextlib.suppress(OSError):
                info = path.lstat()
                if stat.S_ISREG(info.st_mode) and now - info.st_mtime > config.STALE_RUN_MS / 1000:
                    path.unlink()
                    removed.append(name)
    return removed
