"""The one place that writes files: atomic replace, and the store-wide writer lock (with
what this process wrote within a hold of it, and the patient hold a count takes)."""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import stat
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.errors import LockBusy, UnsafePathError, VaultkeeperError
from vaultkeeper.store.lockdir import lock_file, sweep_locks
from vaultkeeper.store.vault import own_dir

_changes = [0]  # files this process wrote or moved: whether a failed step changed anything
# For the kill tests only: "N" or "N:TERM" kills this process at its Nth write step.
_KILL_AT = os.environ.get("VAULTKEEPER_TEST_KILL_AT")
_steps = [0]


def _step() -> None:
    if _KILL_AT is None:
        return

    _steps[0] += 1
    at, _, how = _KILL_AT.partition(":")
    if at.isdigit() and _steps[0] == int(at):
        os.kill(os.getpid(), signal.SIGTERM if how == "TERM" else signal.SIGKILL)


# Every path this process wrote or moved, in order (``_written_rows``, ``written_since``).
_written: list[str] = []
_hold = [0, 0]  # outermost holds of the writer lock so far, and the current depth


def note_written(path: Path | str) -> None:
    """A file written or moved other than by atomic_write or move (os.replace)."""
    _written.append(str(path))


def _written_rows(vault: Path, written: list[str]) -> None:
    """The lessons a command wrote or moved, marked ``search_pending`` in the full-text
    index in the same step: the recall hook reads them again before serving anything."""
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


Mark = tuple[int, int]  # (which outermost hold, how many paths were written by then)


def hold_mark() -> Mark | None:
    """Where the current hold of the writer lock is in its writes; None when not held. A
    mark is worth nothing in the next hold: another process may have written between."""
    return (_hold[0], len(_written)) if _hold[1] else None


def written_since(at: Mark) -> list[str] | None:
    """Every path written or moved since ``at``, within the same hold; else None."""
    if not _hold[1] or _hold[0] != at[0] or len(_written) < at[1]:
        return None
    return list(_written[at[1] :])


def changes() -> int:
    """How many writes and moves this process has made so far (compare two readings)."""
    return _changes[0]


def move(source: Path, target: Path) -> None:
    """os.replace, counted as a change (a move into or out of .trash/)."""
    os.replace(source, target)
    _changes[0] += 1
    _written.extend((str(source), str(target)))


# Not tempfile: its imports (shutil, random, bz2, lzma) would cost a scan more than its writes.
_TEMP_FLAGS = (
    os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
)
_TEMP_TRIES = 100


def atomic_write(path: Path, data: str | bytes | Iterable[str], *, fsync_dir: bool = True) -> None:
    """Write ``data`` (text, bytes or pieces of text) to ``path`` via a temp file in the
    same folder, fsync, os.replace: a reader sees the old file or the new one, a crash
    leaves at most a hidden ``.<name>.*.vk-tmp``. An existing file keeps its mode, a new
    one gets 0644. ``fsync_dir=False`` leaves the rename unflushed (about 10 ms on ext4)
    where losing it in a crash is harmless.
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

    Never through a symlink (O_NOFOLLOW; with ``inside``, the folder must resolve inside
    the vault: the logs travel through git). After a torn last line a newline goes first.
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
    # One FileLock per lock file and process, so a mutation that calls another nests.
    # Imported here: 44-77 ms the brief, which takes no lock, would pay (docs/benchmarks.md)
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

    Re-entrant within one thread; serialises threads and processes: a file in the user's
    lock folder (store.lockdir), and the vault's ``state/`` folder flocked when it has one.
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
    """flock the vault's ``state/`` folder, once the lock file is held (the open folder,
    or None): a process with another /tmp (a service's, another user's) still waits."""
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
    """Remove atomic_write's temp files older than STALE_RUN_MS that a killed writer left
    in the vault root, patterns/ and state/; the names removed (under the writer lock)."""
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


NOTICE_S = 2.0  # a count that finds the lock busy this long says that it waits
PATIENT_S = 600.0  # then it waits this long at most, and fails saying so


@contextlib.contextmanager
def patient_lock(vault: Path, waiting: Callable[[], None] | None) -> Iterator[None]:
    """``writer_lock(vault)`` for work that must not be lost (a count): with ``waiting``, a
    busy lock is said once and waited for up to PATIENT_S (a dead holder's lock goes)."""
    if waiting is None:
        with writer_lock(vault):
            yield
        return
    with contextlib.ExitStack() as held:
        try:
            held.enter_context(writer_lock(vault, timeout=NOTICE_S))
        except LockBusy:
            waiting()
            held.enter_context(writer_lock(vault, timeout=PATIENT_S))
        yield
