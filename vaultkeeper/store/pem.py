"""Private-key blocks (PEM) in text: where one that holds key material ends.

Split from vaultkeeper.store.secrets, which masks what ``key_block`` finds. A key is
found however it was pasted: on one line, quoted (``> ``), commented (``# ``), in a
list (``* ``) or a table (``| ... |``), and encrypted (a blank line after the
``Proc-Type``/``DEK-Info`` headers).
"""

from __future__ import annotations

import re

BEGIN = r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
_END = re.compile(r"-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_OTHER_BEGIN = re.compile(r"-----BEGIN ")
# base64, or a Proc-Type/DEK-Info header, behind a quote, comment, list or table mark
_KEY_LINE = re.compile(r"[ \t>#*|+-]*[A-Za-z0-9+/=:, .-]*?[ \t|]*\r?")
_MARKS_ONLY = re.compile(r"[ \t>#*|]*\r?")  # a blank line, maybe quoted or commented
_HEADER = re.compile(r"[ \t>#*|]*(?:Proc-Type|DEK-Info):")
_KEY_BODY = re.compile(r"[A-Za-z0-9+/]{20,}")  # "...": a placeholder, not a key
_MAX_LINES = 200  # how far an END line is looked for


def _lines(text: str, pos: int) -> list[tuple[int, str]]:
    """(start, text) of the lines after the one ending at ``pos``, at most _MAX_LINES."""
    out: list[tuple[int, str]] = []
    nl = text.find("\n", pos)
    while nl != -1 and len(out) < _MAX_LINES:
        start = nl + 1
        nl = text.find("\n", start)
        out.append((start, text[start : len(text) if nl == -1 else nl]))
    return out


def _to_end(text: str, begin_end: int, lines: list[tuple[int, str]]) -> int | None:
    """End of the END line closing this block, when one comes before another BEGIN."""
    for start, line in lines:
        if _OTHER_BEGIN.search(line):  # the next block begins: this one has no END
            return None
        end = _END.search(line)
        if end:
            return start + end.end()
    return None


def _line_by_line(begin_end: int, lines: list[tuple[int, str]]) -> int:
    """End of the last key line of a block with no END line (a truncated paste)."""
    stop = begin_end
    after_header = False
    for start, line in lines:
        if _MARKS_ONLY.fullmatch(line):
            if not after_header:
                break
            after_header = False  # the one blank line of an encrypted key
            continue
        if not _KEY_LINE.fullmatch(line):
            break
        after_header = _HEADER.match(line) is not None
        stop = start + len(line.rstrip())
    return stop


def key_block(text: str, begin_end: int) -> int | None:
    """End of the private-key block whose BEGIN line ends at ``begin_end``; None if the
    block holds no key material (``...`` in documentation)."""
    nl = text.find("\n", begin_end)
    rest = text[begin_end : len(text) if nl == -1 else nl]
    if rest.strip(" \t\r|*#>"):  # the key on the BEGIN line (PEM as one line, or with \n)
        end = _END.search(rest)
        stop = begin_end + (end.end() if end else len(rest.rstrip()))
        return stop if _KEY_BODY.search(text, begin_end, stop) else None
    lines = _lines(text, begin_end)
    closed = _to_end(text, begin_end, lines)
    stop = _line_by_line(begin_end, lines) if closed is None else closed
    return stop if _KEY_BODY.search(text, begin_end, stop) else None
