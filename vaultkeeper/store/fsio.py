"""The one place that writes files: atomic replace, and the store-wide writer lock.

The lock is a file keyed by the vault's real path in the user's private folder
``<temp root>/vaultkeeper-<uid>/`` (``/tmp`` or ``$VAULTKEEPER_LOCK_ROOT``; never a
per-session variable such as ``$TMPDIR``, which a cron job lacks), so a command on someone
else's vault leaves no file there; ``state/writer.lock`` only where no private folder can
be had. The folder keeps only the locks in use (``sweep_locks``). A hold also knows what
this process wrote within it, and a count takes it patiently (``patient_lock``).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
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
from vaultkeeper.store.vault import is_ours, own_dir
from vaultkeeper.store.walk import inside

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
_last: list[str] = []  # what the last outermost hold wrote or moved (``last_written``)


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


def last_written() -> list[str]:
    """Every path the last outermost hold of the writer lock wrote or moved, in order."""
    return list(_last)


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
    fd = open_append(path)
    try:
        info = os.fstat(fd)
        if info.st_size and os.pread(fd, 1, info.st_size - 1) != b"\n":
            data = b"\n" + data
        _step()
        os.write(fd, data)
        _changes[0] += 1
        os.fsync(fd)
        _step()
    finally:
        os.close(fd)


def open_append(path: Path, create: int = os.O_CREAT) -> int:
    """``path`` open to append: never through a symlink, only a regular file (``create``
    0: a missing file is FileNotFoundError, so a writer can be refused before it writes)."""
    try:
        fd = os.open(path, os.O_RDWR | create | os.O_APPEND | _NOFOLLOW, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP or os.path.islink(path):
            raise UnsafePathError(
                f"{path}: a symlink; refused (vaultkeeper never writes through one: "
                "make it a regular file)"
            ) from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UnsafePathError(f"{path}: not a regular file; refused")
    return fd


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _refuse_folder_out(path: Path, vault: Path) -> None:
    """UnsafePathError when ``path``'s folder (an existing part of it) leads out of ``vault``."""
    root, real = os.path.realpath(vault), os.path.realpath(path.parent)
    if not inside(root, real):
        raise UnsafePathError(
            f"{path}: its folder resolves to {real}, outside the vault {root}; refused"
        )


LOCK_WAIT_S = 30.0  # a writer waits this long for the lock, then fails saying so
NOTICE_S = 2.0  # a count that finds the lock busy this long says that it waits
PATIENT_S = 600.0  # then it waits this long at most, and fails saying so
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
def writer_lock(vault: Path, timeout: float = LOCK_WAIT_S) -> Iterator[None]:
    """Hold the store-wide writer lock for the duration of one mutation.

    Re-entrant within one thread; serialises threads and processes: a file in the user's
    lock folder, and the vault's ``state/`` folder flocked when it has one.
    """
    from filelock import Timeout  # filelock: see _file_lock

    state = Path(own_dir(vault, config.STATE_DIR))
    where, fallback = lock_file(vault)
    if os.path.lexists(state) and not state.is_dir():  # mkdir's own words: "File exists"
        raise VaultkeeperError(
            f"{state}: exists and is not a folder; vaultkeeper keeps its state "
            "there: move that file away"
        ) from None
    if fallback:
        state.mkdir(parents=True, exist_ok=True)
    mark = len(_written)
    lock = _file_lock(Path(where))
    try:
        lock.acquire(timeout=timeout)
    except Timeout as exc:
        raise LockBusy(f"{where}: another vaultkeeper command is writing; try again") from exc
    outermost = getattr(lock, "lock_counter", 1) == 1
    _hold[0] += outermost
    if outermost:
        del _last[:]
    _hold[1] += 1
    folder: int | None = None
    try:
        if outermost:  # no writer is mid-write; the fallback's file is in state/ too
            folder = _hold_state_folder(state, timeout)  # closed below
            sweep_temps(vault)
        yield
    finally:
        _hold[1] -= 1
        try:
            if outermost and len(_written) > mark:
                done = _written[mark:]
                del _written[:]  # seen: a long-lived process (the MCP server) keeps no list
                _last[:] = done
                with contextlib.suppress(Exception):  # a cache's upkeep never fails a write
                    _written_rows(vault, done)
        finally:
            if folder is not None:
                os.close(folder)  # lets go of its flock
            lock.release()
            if outermost and not fallback:  # the lock folder keeps only held locks
                with contextlib.suppress(OSError):
                    sweep_locks()


def _hold_state_folder(state: Path, timeout: float) -> int | None:
    """flock the vault's ``state/`` folder, once the lock file is held (the open folder,
    or None): a process with another /tmp (a service's, another user's) still waits."""
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
    in the vault root, patterns/ and state/, and in state/ what an older vaultkeeper
    derived (OLD_DERIVED) in a vault laid out by vaultkeeper (a person's Obsidian vault
    may have a ``state/`` of its own); the names removed (under the writer lock). Regular
    files only: a link, FIFO or folder of such a name stays."""
    removed: list[str] = []
    now = time.time()
    state = vault / config.STATE_DIR
    ours: list[bool] = []  # asked once, when a name of OLD_DERIVED is there
    for folder in (vault, vault / config.PATTERNS_DIR, state):
        if folder != vault and folder.is_symlink():
            continue  # never list, let alone remove, through a link out of the vault
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            old = folder == state and name in OLD_DERIVED
            if old and not ours:
                ours.append(is_ours(vault))
            old = old and ours[0]
            if not old and not (name.startswith(".") and name.endswith(".vk-tmp")):
                continue
            path = folder / name
            with contextlib.suppress(OSError):
                info = path.lstat()
                if stat.S_ISREG(info.st_mode) and (
                    old or now - info.st_mtime > config.STALE_RUN_MS / 1000
                ):
                    path.unlink()
                    removed.append(name)
    return removed


# What versions before the one derived store (issue 35) kept under state/, all derived
# and rebuilt now as rows of vaultkeeper.db: no ledger, log, lock or machine record (an
# older machine's files are machine.json's to move in, store/machine.py).
OLD_DERIVED = frozenset((
    "scan-cache.json", "scan-cache.delta.json", "index-cache.json", "index-stamp.json",
    "brief-patterns.json", "brief-lessons.json", "lint-summary.json", "native-review.json",
    "anchors-cache.json", "last-report.json", "recall-lookup.json", "recall-lookup.bin",
    "recall-lookup.keys.json", "recall-lookup.recs.json", "recall-lookup.over.json",
    "recall-lookup.sig", "recall-lookup.want",
))  # fmt: skip


@contextlib.contextmanager
def patient_lock(vault: Path, waiting: Callable[[], None] | None) -> Iterator[None]:
    """``writer_lock(vault)`` for work that must not be lost (a count): with ``waiting``, a
    busy lock is said once and waited for up to PATIENT_S (a dead holder's lock goes)."""
    with contextlib.ExitStack() as held:
        try:
            held.enter_context(writer_lock(vault, LOCK_WAIT_S if waiting is None else NOTICE_S))
        except LockBusy:
            if waiting is None:
                raise
            waiting()
            held.enter_context(writer_lock(vault, timeout=PATIENT_S))
        yield


_LOCK_SUFFIX = ".lock"
_LOCK_NAME_LEN = 32 + len(_LOCK_SUFFIX)  # blake2b(digest_size=16) in hex


def lock_folder() -> str:
    """The user's lock folder, the same for every process of the user."""
    root = os.environ.get(config.ENV_LOCK_ROOT) or config.LOCK_ROOT
    return os.path.join(root, f"vaultkeeper-{os.getuid()}")


def _private(folder: str) -> bool:
    """A folder of this user's that nobody else may write, and no symlink."""
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o022


def outside_lock(vault: str | os.PathLike[str]) -> str | None:
    """The vault's lock file in the user's private folder (made 0700 when missing), or
    None when the folder is not private (another user's, writable by others, a symlink)."""
    folder = lock_folder()
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    if not _private(folder):
        return None
    real = os.path.realpath(vault).encode("utf-8", "surrogateescape")
    return os.path.join(folder, hashlib.blake2b(real, digest_size=16).hexdigest() + _LOCK_SUFFIX)


def lock_file(vault: str | os.PathLike[str]) -> tuple[str, bool]:
    """(the writer lock's file, whether it is the fallback in the vault's ``state/``)."""
    outside = outside_lock(vault)
    if outside is not None:
        return outside, False
    return os.path.join(vault, config.STATE_DIR, config.WRITER_LOCK_FILE), True


def sweep_locks() -> int:
    """Remove every lock file in the user's lock folder that nobody holds (how many went).

    A file goes only while this holds its flock and the name still leads to it: a writer
    that opened it before finds it unlinked and opens the name again (filelock does so).
    """
    folder = lock_folder()
    if not _private(folder):
        return 0  # not our private folder: touch nothing in it
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    flags = os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    removed = 0
    for name in names:
        if len(name) != _LOCK_NAME_LEN or not name.endswith(_LOCK_SUFFIX):
            continue
        path = os.path.join(folder, name)
        try:
            fd = os.open(path, flags)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held by someone: OSError, kept
            mine = os.fstat(fd)
            if stat.S_ISREG(mine.st_mode) and os.path.samestat(mine, os.lstat(path)):
                os.unlink(path)
                removed += 1
        except OSError:
            pass
        finally:
            os.close(fd)  # releases the flock
    return removed
