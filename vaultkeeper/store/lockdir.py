"""The writer lock's file, outside the vault: in one private folder per user.

A command on someone else's vault must leave no file there it did not need, so the lock
is a file keyed by the vault's real path in ``<temp root>/vaultkeeper-<uid>/`` (``/tmp``
or ``$VAULTKEEPER_LOCK_ROOT``; never a per-session variable such as ``$TMPDIR``, which a
cron job lacks). Where no private folder can be had, ``state/writer.lock`` is the lock.
The folder keeps only the locks in use (``sweep_locks``).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import stat

from vaultkeeper import config

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
