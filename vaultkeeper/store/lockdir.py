"""The user's lock folder keeps only the locks in use: ``sweep_locks`` removes the rest.

Every writer locks a file keyed by the vault's real path in the user's own folder
(store.vault.outside_lock); without this, the folder would gain one empty file per vault
ever touched. The writer lock (store.fsio.writer_lock) calls it once it has let go of
its own lock.
"""

from __future__ import annotations

import os
import stat

from vaultkeeper.store.vault import _lock_folder

_LOCK_SUFFIX = ".lock"
_LOCK_NAME_LEN = 32 + len(_LOCK_SUFFIX)  # blake2b(digest_size=16) in hex, as outside_lock names


def sweep_locks() -> int:
    """Remove every lock file in the user's lock folder that nobody holds (how many went):
    the folder keeps only the locks in use, not one file per vault ever touched.

    Safe against a writer mid-acquire: a file is removed only while this function holds
    its flock, and only if the name still leads to that file; a writer that opened the
    name before the removal finds its file unlinked once its own flock succeeds and opens
    the name again (filelock does so). A file held by anyone,
    this process included (flock is per open file), is left alone.
    """
    try:
        import fcntl
    except ImportError:  # not POSIX: no flock, nothing kept that could be told apart
        return 0
    folder = _lock_folder()
    try:
        info = os.lstat(folder)
        names = os.listdir(folder)
    except OSError:
        return 0
    uid = getattr(os, "getuid", lambda: info.st_uid)()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != uid or info.st_mode & 0o022:
        return 0  # not our private folder: touch nothing in it
    flags = os.O_RDWR | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    removed = 0
    for name in names:
        if len(name) != _LOCK_NAME_LEN or not name.endswith(_LOCK_SUFFIX):
            continue
        path = os.path.join(folder, name)
        try:
            fd = os.open(path, flags | getattr(os, "O_NONBLOCK", 0))
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
