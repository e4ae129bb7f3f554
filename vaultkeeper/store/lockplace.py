"""Where the writer lock's file lives outside the vault: the user's runtime folder.

A command run on someone else's vault (``lint --fix`` on an Obsidian vault) must leave
no file there it did not need to write, and a lock file in a ``state/`` folder made for
it would be one. So every writer also locks a file keyed by the vault's real path in a
folder of the user's own (``$XDG_RUNTIME_DIR/vaultkeeper/``, else
``$TMPDIR/vaultkeeper-<uid>/``); ``state/writer.lock`` is locked as well only where the
vault already has ``state/`` (a vaultkeeper vault), so two writers exclude each other
whichever of them made ``state/``. Plain ``os`` and ``hashlib``: the scan's report
guard (report/file.py) takes this lock too and imports nothing heavy.
"""

from __future__ import annotations

import hashlib
import os
import stat


def _folder() -> str:
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime) and os.path.isdir(runtime):
        return os.path.join(runtime, "vaultkeeper")
    temp = os.environ.get("TMPDIR", "")
    temp = temp if os.path.isabs(temp) and os.path.isdir(temp) else "/tmp"
    return os.path.join(temp, f"vaultkeeper-{getattr(os, 'getuid', lambda: 0)()}")


def outside_lock(vault: str | os.PathLike[str]) -> str | None:
    """The vault's lock file in the user's private folder (made 0700 when missing), or
    None when there is no such folder to be had (the vault's own state/ is used then).

    A folder someone else owns, that others may write, or that is a symlink is not
    private: another user could hold the lock or swap the file.
    """
    folder = _folder()
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    try:
        info = os.lstat(folder)
    except OSError:
        return None
    uid = getattr(os, "getuid", lambda: info.st_uid)()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != uid or info.st_mode & 0o022:
        return None
    real = os.path.realpath(vault).encode("utf-8", "surrogateescape")
    return os.path.join(folder, hashlib.blake2b(real, digest_size=16).hexdigest() + ".lock")
