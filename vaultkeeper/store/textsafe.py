"""Make vault text inert before it reaches a person's terminal.

Text an agent wrote is shown at the prune prompt and in ``review``: an escape sequence
could draw a fake "what will be deleted", a CR or a bidi override make one thing look
like another. ``inert`` shows each as a visible escape (``\\x1b``); newline and tab stay.
"""

from __future__ import annotations

import re
from bisect import bisect_right

# C0 controls but tab and newline, DEL, the C1 controls (0x9b is a one-byte CSI on
# some terminals), the bidirectional marks, embeddings, overrides and isolates, and
# the Unicode line and paragraph separators, and lone surrogates (undecodable bytes a
# strict stream cannot print, and a C.UTF-8 one writes raw: 0x9b again).
_DANGEROUS = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
    "\ud800-\udfff]"
)


def _escape(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def inert(text: str) -> str:
    """``text`` with each dangerous character shown as its escape; anything else as is."""
    if text.isascii() and text.isprintable():
        return text  # the common case: nothing to look for
    return _DANGEROUS.sub(_escape, text)


def inert_line(text: str) -> str:
    """``inert`` for one output line: newline and tab shown escaped too, so a file name
    holding one cannot split a ``path:line: message`` line or forge the next one."""
    return inert(text).replace("\n", "\\n").replace("\t", "\\t")


def dangerous(text: str) -> list[tuple[int, str]]:
    """(0-based column, character) of each character ``inert`` would escape."""
    return [(m.start(), m.group()) for m in _DANGEROUS.finditer(text)]


# what lint looks for in a file: a CR is only a control when it ends no CRLF line
_IN_FILE = re.compile(
    "\r(?!\n)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029"
    "\u202a-\u202e\u2066-\u2069]"
)


def has_controls(text: str) -> bool:
    """True when a file's text holds a character ``inert`` escapes (CRLF endings aside)."""
    return _IN_FILE.search(text) is not None


# What ``neutral`` takes out of text served to an agent, before it is masked: terminal
# escape sequences (CSI, OSC, the other ESC sequences, their one-byte C1 forms), every
# C0 control but tab and newline (CR and BS included), DEL, the C1 controls, the
# bidirectional marks, embeddings, overrides and isolates, the zero-width and invisible
# characters (a token split by one would pass the masking), and the line separators.
_SEQUENCE = (
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d-\x9f])[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?"
)
_INVISIBLE = (
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]"
)
_NEUTRAL = re.compile(f"{_SEQUENCE}|{_INVISIBLE}")


_ONE = re.compile(_INVISIBLE)
# each character alone, and the one that makes an ESC a sequence (ESC [, ESC ])
_ALONE = re.compile(f"\x1b[\\[\\]PX^_]?|{_INVISIBLE}")


def neutral(text: str) -> str:
    """``text`` with what ``_NEUTRAL`` matches removed; tabs and newlines kept. Run before
    masking (``secrets.served``): a token cut by a DEL or a colour code is whole again."""
    if text.isprintable() or _ONE.search(text) is None:
        return text
    return _NEUTRAL.sub("", text)


def has_invisible(text: str) -> bool:
    """True when ``neutral`` would change ``text``: it holds a character it removes."""
    return not text.isprintable() and _ONE.search(text) is not None


def readings(text: str) -> list[tuple[str, list[tuple[int, int]]]]:
    """Three readings of ``text`` without what ``neutral`` removes, each with its offsets:
    whole sequences gone, each character gone alone (``ESC [ B`` keeps the ``B``), each
    sequence a space. Credentials are looked for in all three: stripping may take a
    character of a token, and a token glued to a word stands alone only in the third."""
    return [_without(_NEUTRAL, text), _without(_ALONE, text), _without(_NEUTRAL, text, " ")]


def _without(
    pattern: re.Pattern[str], text: str, sep: str = ""
) -> tuple[str, list[tuple[int, int]]]:
    """``text`` with ``pattern``'s matches replaced by ``sep``, and per replacement (its end
    in the result, characters taken out so far): what ``placed`` maps back with."""
    out: list[str] = []
    offsets: list[tuple[int, int]] = []
    pos = removed = 0
    for m in pattern.finditer(text):
        if m.start() == m.end():
            continue
        out.append(text[pos : m.start()])
        out.append(sep)
        at = m.start() - removed + len(sep)  # where what follows stands in the result
        removed += m.end() - m.start() - len(sep)
        offsets.append((at, removed))
        pos = m.end()
    out.append(text[pos:])
    return "".join(out), offsets


def placed(offsets: list[tuple[int, int]], pos: int) -> int:
    """Where position ``pos`` of a reading stands in the text it was read from."""

    i = bisect_right(offsets, pos, key=lambda o: o[0])
    return pos + (offsets[i - 1][1] if i else 0)
