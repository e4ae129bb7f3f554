"""Reading a vault file's bytes as text, and the one error every reader raises: the
lowest layer of the model (vaultkeeper.store.model re-exports it)."""

from __future__ import annotations

import os
import stat


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split on ``\n`` only (not at form feeds or U+2028, as
    ``str.splitlines`` does): line numbers as editors and grep count them."""
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


class ParseError(ValueError):
    def __init__(self, reason: str, line: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line


class Unreadable(ParseError):
    """A file whose text could not be had at all (an I/O error, not a regular file,
    binary, not UTF-8), as against text that does not parse: a command that regenerates
    what it lists from the file keeps what it had (index.rows.collect_entries)."""


def decode(raw: bytes) -> str:
    """Bytes -> text, refusing binary and non-UTF-8 content with a one-line reason."""
    if b"\x00" in raw:
        raise Unreadable("binary file (NUL bytes), not markdown")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise Unreadable(f"not UTF-8 (byte 0x{raw[exc.start]:02x})", line) from None
    return text[1:] if text.startswith("\ufeff") else text


_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # POSIX only; elsewhere there are no FIFOs to meet


def read_regular(path: str | os.PathLike[str], follow: bool = True) -> bytes:
    """A regular file's bytes; raises ParseError (with no path) when it can't be read.

    Every reader of vault files goes through here: a FIFO or device is refused, never
    waited on (a non-blocking open, one fstat). ``follow=False``: O_NOFOLLOW, for state/.
    """
    flags = os.O_RDONLY | _NONBLOCK | (0 if follow else getattr(os, "O_NOFOLLOW", 0))
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise Unreadable(f"cannot read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Unreadable("not a regular file")
        data = os.read(fd, info.st_size + 1)
        if len(data) == info.st_size:
            return data
        chunks = [data]
        while chunks[-1]:  # it grew or shrank while we read, or the read came back short
            chunks.append(os.read(fd, 1 << 16))
        return b"".join(chunks)
    except OSError as exc:
        raise Unreadable(f"cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
