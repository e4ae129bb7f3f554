"""Make vault text inert before it reaches a person's terminal.

Text an agent wrote (a block's body, a queued ask's reason) is shown at the prune
prompt and in ``review``, right above ``[y/N]``. An escape sequence in it could
clear the screen and draw a fake "what will be deleted"; a carriage return or a
bidirectional override could make one thing look like another. ``inert`` shows
every such character as a visible escape (``\\x1b``, ``\\u202e``) so what is on the
screen is what is in the file. Newline and tab stay: they only lay text out.
"""

from __future__ import annotations

import functools
import re

# C0 controls but tab and newline, DEL, the C1 controls (0x9b is a one-byte CSI on
# some terminals), the bidirectional marks, embeddings, overrides and isolates, and
# the Unicode line and paragraph separators, and lone surrogates (undecodable bytes a
# strict stream cannot print, and a C.UTF-8 one writes raw: 0x9b again).
_DANGEROUS = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
    "\ud800-\udfff]"
)


@functools.lru_cache(maxsize=256)
def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def _replace(m: re.Match[str]) -> str:
    return _escape(m.group())


def inert(text: str) -> str:
    """``text`` with each dangerous character shown as its escape; anything else as is."""
    if text.isascii() and text.isprintable():
        return text  # the common case: nothing to look for
    return _DANGEROUS.sub(_replace, text)


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
