"""The recall hook's own files, opened so that nothing planted under state/ can steer it.

The hook runs on every prompt and file tool call of an agent, and state/ may hold what
git brought (``uses.jsonl`` travels with the vault after ``hooks install git``): a
symlink there would make each prompt write to a file of someone else's choosing, a FIFO
would block the hook for ever. So every file it opens -- the usage log, the hook log,
the recall session folder and file -- is opened here: never through a symlink
(``O_NOFOLLOW``; a folder is ``lstat``ed), never waiting on a FIFO (``O_NONBLOCK``, then
``fstat``: a regular file or nothing). The database is checked the same way
(vaultkeeper.recall.lookup.open_db).
"""

from __future__ import annotations

import os
import stat

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def open_confined(path: str, flags: int, mode: int = 0o644) -> int:
    """A file descriptor of ``path``, a regular file: never through a symlink, never
    waiting on a FIFO (OSError otherwise, the descriptor closed)."""
    fd = os.open(path, flags | _NOFOLLOW | _NONBLOCK | _CLOEXEC, mode)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{os.path.basename(path)}: not a regular file; refused")
    except BaseException:
        os.close(fd)
        raise
    return fd


def own_folder(path: str) -> None:
    """``path`` a real folder (made when missing), never a symlink to elsewhere."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        os.mkdir(path)
        info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode):
        raise OSError(f"{os.path.basename(path)}: not a folder (a symlink?); refused")


def append_line(path: str, text: str) -> None:
    """``text`` (whole lines) appended to ``path`` in one write, after a newline when
    the file's last line was left torn (a reader skips that one, never ours)."""
    fd = open_confined(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            text = "\n" + text
        os.write(fd, text.encode("utf-8"))
    finally:
        os.close(fd)


def read_small(path: str, limit: int) -> bytes:
    """A regular file's bytes (b"" when absent); ValueError past ``limit`` bytes, found
    by its size before anything is read."""
    try:
        fd = open_confined(path, os.O_RDONLY)
    except FileNotFoundError:
        return b""
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            raise ValueError(f"{size} bytes")
        return os.read(fd, size + 1)
    finally:
        os.close(fd)


def session_name(session: str) -> str:
    """The session's file name: the id with every byte but letters, digits, ``-`` and
    ``.`` written as ``_XX`` (hex), so two ids never share a file (``a/b``, ``a_b``)."""
    out = []
    for c in session:
        if c.isascii() and (c.isalnum() or c in "-."):
            out.append(c)
        else:
            out.extend(f"_{b:02x}" for b in c.encode("utf-8", "surrogatepass"))
    name = "".join(out)
    return "_" + name if name.startswith(".") or not name else name
