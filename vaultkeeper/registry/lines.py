"""The registry's text rules: which files it is, and which lines are headings, fences and
counters, found in one pass.

Split from registry.py, which builds blocks (RegistryBlock, BlockHead) and loads files
from what this finds; everything here works on paths, text and plain values alone. Its
public names are re-exported from registry.py, where callers import them.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import unicodedata
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.store.model import ParseError, split_frontmatter
from vaultkeeper.store.vault import iter_markdown, links_out

# The rules, line by line (a line's trailing CR is not part of it):
# - a heading (CommonMark ATX): up to 3 spaces, 1-6 #, then a blank and text, or nothing;
#   a closing run of # counts only after a blank (so `### C#` is named "C#"). Levels
#   1-3 end a block; a level-3 heading with a name opens one;
# - a fence: up to 3 blanks and ``` or ~~~ (3 or more); it closes at the same character,
#   at least as many, with nothing after it; lines inside are never headings or counters;
# - a counter: up to 3 spaces, an optional list marker, the bold label, then the value
#   (4 spaces or a tab before it make it indented code: an example, not the counter).
_LABELS = (config.COUNT_LABEL, config.LAST_USED_LABEL, config.PROMOTED_LABEL)

# One pass over a whole file finds the lines that may matter (a registry may hold
# thousands of blocks). The pattern matches a "\n" and the line after it, in the text
# with one "\n" put in front (so the first line too follows a "\n"). The last group that
# took part says which kind: 2 a heading (1 its #s, 2 the rest), 3 a fence, 4-6 the rest
# of a count, last-used or promoted line. The leading "\n" lets the regex engine skip to
# candidates fast; the rest of each rule is applied to the few lines found.
_LINES_NL = re.compile(
    r"\n(?: {0,3}(#{1,3})([^\n]*)|[ \t]{0,3}(`{3,}|~{3,})[^\n]*| {0,3}(?:[-*][ \t]*)?(?:"
    + "|".join(f"{re.escape(x)}([^\n]*)" for x in _LABELS)
    + "))",
    re.I,
)
_HEAD, _FENCE_MARK, COUNT_AT, LAST_AT, PROMOTED_AT = 2, 3, 4, 5, 6
_NO_NAME = ""  # a heading without a name: it ends a block but opens none
AGAIN = 10  # kind + AGAIN: the second line of that counter kind in one block
LABEL_OF = {COUNT_AT: config.COUNT_LABEL, LAST_AT: config.LAST_USED_LABEL}
LABEL_OF[PROMOTED_AT] = config.PROMOTED_LABEL


# What a scan reads of a block, whether parsed now (BlockHead) or kept by the scan
# cache (keptheads.CachedHead): the attributes both have.
HEAD_FIELDS = (
    "name",
    "path",
    "rel",
    "line",
    "count",
    "count_raw",
    "last_used",
    "last_used_raw",
    "promoted",
)


@functools.lru_cache(maxsize=1)
def _counter_lines() -> re.Pattern[str]:
    labels = "|".join(re.escape(x) for x in _LABELS)
    return re.compile(rf" {{0,3}}(?:[-*][ \t]*)?(?:{labels})[^\n]*\n?\Z", re.I)


def _heading_name(rest: str) -> str | None:
    """The heading rule for the text after a line's run of #: None (not a heading),
    _NO_NAME, or the name (the closing run of # and the blanks around it removed)."""
    rest = rest.rstrip("\r")
    if not rest or not rest.strip(" \t"):
        return _NO_NAME
    if rest[0] not in " \t":
        return None  # `###x`, or a fourth # (levels 4-6 neither open nor end a block)
    body = rest.rstrip(" \t")
    bare = body.rstrip("#")
    if bare != body and (not bare or bare[-1] in " \t"):
        body = bare.rstrip(" \t")  # a closing run of #, after a blank
    return body.lstrip(" \t")


def first_paragraph(text: str) -> str:
    """The first run of prose lines in ``text`` (a block's lines after its heading), on
    one line: leading blank lines skipped, ended by a blank or a counter line."""
    words: list[str] = []
    for line in text.split("\n"):
        if not line.strip() or is_counter_line(line):
            if words:
                break
            continue
        words.append(line.strip())
    return " ".join(words)


def first_sentence(text: str) -> str:
    """A registry block's description: its first paragraph's first sentence (up to the
    first ``.``, ``!`` or ``?`` followed by a blank; str.find, not a regex: it runs once
    per block in every scan)."""
    cut = len(text)
    for mark in (". ", "! ", "? "):
        at = text.find(mark, 0, cut)
        if at != -1:
            cut = at + 1
    return text[:cut]


def heads_name(text: str, name: str) -> bool:
    """Whether some line of ``text`` may be a heading named ``name``: the name after a
    blank, and nothing but blanks and #s after it on its line. False means no block of
    the file is called ``name`` (a file is read whole to tell which lines are headings,
    the fences around them decide; this only rules files out)."""
    at = text.find(name)
    while at != -1:
        end = text.find("\n", at)
        rest = text[at + len(name) : len(text) if end == -1 else end]
        if text[at - 1 : at] in (" ", "\t") and not rest.rstrip("\r").strip(" \t#"):
            return True
        at = text.find(name, at + 1)
    return False


def is_counter_line(line: str) -> bool:
    """True when ``line`` would be read as a block's count, last-used or promoted line."""
    return _counter_lines().match(line) is not None


def name_key(name: str) -> str:
    """What makes two block names one for a reader: case and Unicode form (NFKC) aside."""
    return unicodedata.normalize("NFKC", name).casefold()


def block_hash(text: str) -> str:

    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def body_start(text: str) -> int:
    """Offset where a leading frontmatter block ends (0 when there is none)."""
    if not text.startswith("---"):  # most registry files: no frontmatter to look into
        return 0
    try:
        yaml_text, _, body_offset = split_frontmatter(text)
    except ParseError:
        return 0
    return 0 if yaml_text is None else body_offset


Found = dict[int, tuple[str, int]]  # counter kind -> (rest of its line, offset of its "\n")


def index_lines(nl_text: str, start: int) -> tuple[list[tuple[int, str]], list[Found]]:
    """One pass over the "\n"-led text: the headings of level 1-3 outside fenced code
    (offset of the "\n" before each, and its name or _NO_NAME) and, per heading, the first
    counter line of each kind (group number -> (rest of the line, offset of its "\n"))."""
    heads, counters, _ = index_range(nl_text, start, len(nl_text))
    return heads, counters


def index_range(
    nl_text: str, start: int, end: int
) -> tuple[list[tuple[int, str]], list[Found], bool]:
    """index_lines of ``nl_text[start:end]`` (``start`` at a "\n" outside fenced code),
    and whether a fence is still open at ``end``."""
    heads: list[tuple[int, str]] = []
    counters: list[Found] = []
    fence: str | None = None
    current: Found | None = None  # the open block's counters
    for m in _LINES_NL.finditer(nl_text, start, end):
        kind = m.lastindex or 0
        if kind == _FENCE_MARK:
            mark = m.group(3)
            if fence is None:
                fence = mark
            elif mark[0] == fence[0] and len(mark) >= len(fence):
                line = nl_text[m.start() + 1 : m.end()].rstrip("\r")
                if not line.strip().strip(mark[0]):
                    fence = None
        elif fence is not None:
            continue
        elif kind == _HEAD:
            name = _heading_name(m.group(2))
            if name is None:
                continue
            current = {} if name and len(m.group(1)) == 3 else None
            heads.append((m.start(), name if current is not None else _NO_NAME))
            counters.append(current if current is not None else {})
        elif current is not None and kind not in current:
            current[kind] = (m.group(kind), m.start())
        elif current is not None and kind + AGAIN not in current:
            current[kind + AGAIN] = (m.group(kind), m.start())  # a second one: lint says so
    return heads, counters, fence is not None


def whole_count(raw: str | None) -> int | None:
    """ASCII digits only (no sign, no Unicode digits, no underscores), and not too many:
    int() raises ValueError past 4300 digits."""
    if raw is None or len(raw) > config.COUNT_MAX_DIGITS or not (raw.isascii() and raw.isdigit()):
        return None
    return int(raw)


def count_reason(raw: str) -> str:
    """Why a count line's value ``raw`` is not a count; a long run of digits is named by
    its length, not printed."""
    if raw.isascii() and raw.isdigit():
        return f"success count of {len(raw)} digits is too long (at most {config.COUNT_MAX_DIGITS})"
    return f"success count {raw!r} is not a whole number"


def registry_files(vault: Path, outside: list[str] | None = None) -> list[Path]:
    """The registry's files: patterns/**.md; ``outside`` collects the symlinks out of
    the vault left out (patterns/ itself, when it is one)."""
    patterns = vault / config.PATTERNS_DIR
    if patterns.is_symlink():  # the vault walk never follows a linked folder
        if outside is not None and links_out(os.path.realpath(vault), str(patterns)):
            outside.append(str(patterns))
        return []
    if not patterns.is_dir():
        return []
    return sorted(iter_markdown(vault, under=patterns, outside=outside))
