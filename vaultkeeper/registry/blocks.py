"""The pattern registry: ``### name`` blocks whose bodies carry bold-markdown counters.

    ### my-pattern
    **success count:** 2
    **last used:** 2026-08-26
    **promoted:** 2026-09-01 -> [[skills/my-pattern/SKILL]]

A block runs from its heading to the next heading of level 1-3 (or the end of the file);
headings inside fenced code are not blocks. One regex pass over a file finds which lines
are headings, fences and counters; the blocks are built from them, lazily.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import re
import unicodedata
from collections.abc import Collection, Iterable
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.errors import NotFoundError, VaultkeeperError
from vaultkeeper.store.model import (
    ParseError,
    Problem,
    decode,
    outside_problems,
    parse_date,
    read_regular,
    split_frontmatter,
)
from vaultkeeper.store.vault import iter_markdown, links_out, rel

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


_COUNTER_LINE = re.compile(
    rf" {{0,3}}(?:[-*][ \t]*)?(?:{'|'.join(map(re.escape, _LABELS))})[^\n]*\n?\Z", re.I
)


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
    return _COUNTER_LINE.match(line) is not None


def name_key(name: str) -> str:
    """What makes two block names one for a reader: case and Unicode form (NFKC) aside."""
    return unicodedata.normalize("NFKC", name).casefold()


def block_hash(text: str) -> str:
    """sha256 of a block's text: what a candidate and ``--expect-hash`` carry."""
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
    heads: list[tuple[int, str]] = []
    counters: list[Found] = []
    fence: str | None = None
    current: Found | None = None  # the open block's counters
    for m in _LINES_NL.finditer(nl_text, start):
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
    return heads, counters


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


class RegistryBlock:
    """One ``### name`` block: its name, heading line and counters read at once; its
    text, hash, last line and counter lines' numbers only when asked (a scan needs them
    for candidates and problems only)."""

    __slots__ = (
        "name",
        "path",
        "rel",
        "line",  # 1-based line of the ``### name`` heading
        "count",
        "count_raw",
        "last_used",
        "last_used_raw",
        "promoted",
        "_nl_text",
        "_at",
        "_stop",
        "_found",
        "_sentence",
        "_hash",
    )

    def __init__(
        self,
        name: str,
        path: Path,
        rel_path: str,
        line: int,
        found: Found,
        nl_text: str,
        span: tuple[int, int],
        dates: dict[str, dt.date | None],
    ) -> None:
        self.name, self.path, self.rel, self.line = name, path, rel_path, line
        self._nl_text, (self._at, self._stop), self._found = nl_text, span, found
        self._sentence: str | None = None
        self._hash: str | None = None
        got = found.get(COUNT_AT)
        self.count_raw = None if got is None else got[0].rstrip("\r").strip(" \t")
        self.count = whole_count(self.count_raw)
        got = found.get(LAST_AT)
        self.last_used_raw = last = None if got is None else got[0].rstrip("\r").strip(" \t")
        if last is not None and last not in dates:
            dates[last] = parse_date(last)  # a registry repeats its dates many times
        self.last_used = None if last is None else dates[last]
        got = found.get(PROMOTED_AT)
        self.promoted = None if got is None else got[0].rstrip("\r").strip(" \t")

    def _line(self, kind: int) -> int | None:
        got = self._found.get(kind)
        if got is None:
            return None
        return self.line + self._nl_text.count("\n", self._at + 1, got[1] + 1)

    @property
    def count_line(self) -> int | None:
        return self._line(COUNT_AT)

    @property
    def last_used_line(self) -> int | None:
        return self._line(LAST_AT)

    @property
    def promoted_line(self) -> int | None:
        return self._line(PROMOTED_AT)

    @property
    def repeated(self) -> tuple[tuple[int, str], ...]:
        """(line, label) of a second counter line of a kind: which one counts is unclear."""
        return tuple(
            (line, LABEL_OF[kind])
            for kind in (COUNT_AT, LAST_AT, PROMOTED_AT)
            if (line := self._line(kind + AGAIN)) is not None
        )

    @property
    def text(self) -> str:
        """The block's lines exactly as in the file (trailing blank lines are the gap)."""
        segment = self._nl_text[self._at + 1 : self._stop]
        cut = segment.find("\n", len(segment.rstrip()))
        return segment if cut == -1 else segment[: cut + 1]

    @property
    def end_line(self) -> int:
        """1-based last line of the block (inclusive)."""
        text = self.text
        return self.line + text.count("\n") - text.endswith("\n")

    @property
    def hash(self) -> str:
        """block_hash of the block's text: what a candidate and ``--expect-hash`` carry."""
        if self._hash is None:  # keptheads may know it
            self._hash = block_hash(self.text)
        return self._hash

    def lead(self, limit: int = 400) -> str:
        """The block's first paragraph, on one line and at most ``limit`` characters read:
        what it says it is (the index shows the same paragraph)."""
        text = self._nl_text
        start = text.find("\n", self._at + 1) + 1
        if start == 0:
            return ""
        stop = min(self._stop, start + limit)
        end = text.find("\n\n", start, stop)
        chunk = text[start : stop if end == -1 else end]
        if "**" not in chunk and "\r" not in chunk and chunk[:1] not in ("\n", ""):
            return chunk.replace("\n", " ").strip()  # the common case: no line to skip
        return first_paragraph(text[start:stop])

    def span(self) -> str:
        """Every character from the heading to the next heading: all the block's facts
        depend on, its line aside (keptheads' fingerprint of the block)."""
        return self._nl_text[self._at + 1 : self._stop]

    def bounds(self) -> tuple[int, int]:
        """Where span() is in the file's text with one "\n" put in front."""
        return self._at + 1, self._stop

    def sentence(self) -> str:
        """The first sentence of the first paragraph: what the duplicates pass compares."""
        if self._sentence is None:
            self._sentence = first_sentence(self.lead())
        return self._sentence

    def problems(self) -> list[Problem]:
        """Why this block's counters can't be trusted, if they can't (one per counter)."""
        where, head = self.rel, f"### {self.name}"
        out: list[Problem] = []
        if self.count_raw is None:
            out.append(Problem(where, self.line, f"{head}: no {config.COUNT_LABEL} line"))
        elif self.count is None:
            out.append(Problem(where, self.count_line, f"{head}: {count_reason(self.count_raw)}"))
        if self.last_used_raw is None:
            out.append(Problem(where, self.line, f"{head}: no {config.LAST_USED_LABEL} line"))
        elif self.last_used is None:
            raw = self.last_used_raw
            reason = f"{head}: last used {raw!r} is not an ISO date (YYYY-MM-DD)"
            out.append(Problem(where, self.last_used_line, reason))
        for line, label in self.repeated:
            reason = f"{head}: a second {label} line (the first one counts); keep one"
            out.append(Problem(where, line, reason))
        return out


def parse_blocks(path: Path, rel_path: str, text: str) -> list[RegistryBlock]:
    """Every ``### name`` block of one registry file, in file order.

    A block runs from its heading to the next heading of level 1-3 outside fenced code;
    trailing blank lines belong to the gap. The first count / last-used / promoted line
    of each kind outside fenced code is the block's.
    """
    nl_text = "\n" + text  # offset i of nl_text is offset i - 1 of text
    heads, counters = index_lines(nl_text, body_start(text))
    dates: dict[str, dt.date | None] = {}
    end = len(nl_text)
    out: list[RegistryBlock] = []
    line, counted = 0, 0  # the line starting at offset ``counted`` of nl_text (its "\n"s before)
    last = len(heads) - 1
    for i, (at, name) in enumerate(heads):
        if not name:
            continue
        line += nl_text.count("\n", counted, at + 1)
        counted = at + 1
        stop = heads[i + 1][0] + 1 if i < last else end
        found, span = counters[i], (at, stop)
        out.append(RegistryBlock(name, path, rel_path, line, found, nl_text, span, dates))
    return out


parse_heads = parse_blocks  # the scan's name for it


_CURRENT: dict[Path, tuple[str, str, tuple[RegistryBlock, ...]]] = {}  # path: (rel, text, blocks)


def parsed_heads(path: Path, rel_path: str, text: str) -> list[RegistryBlock]:
    """parse_blocks, kept for each registry file's current text only: a command reads a
    file several times (to find a block, under the writer lock, for the index). The key
    is the text itself, never a stat: an edited file is parsed again and its older parse
    dropped, so a long-running MCP server holds one parse per registry file."""
    kept = _CURRENT.get(path)
    if kept is None or kept[0] != rel_path or kept[1] != text:
        kept = _CURRENT[path] = (rel_path, text, tuple(parse_blocks(path, rel_path, text)))
    return list(kept[2])


def load_registry(
    vault: Path, paths: Iterable[Path] | None = None, mentioning: tuple[str, ...] = ()
) -> tuple[list[RegistryBlock], list[Problem]]:
    """Every block in every registry file; unreadable files (and symlinks out of the
    vault: never read) become problems. With ``mentioning`` (block names), only the
    files where one of them may head a block (heads_name)."""
    blocks: list[RegistryBlock] = []
    problems: list[Problem] = []
    outside: list[str] = []
    files = registry_files(vault, outside) if paths is None else list(paths)
    for path in files:
        rel_path = rel(vault, path)
        try:
            text = decode(read_regular(path))  # a FIFO named *.md is refused, not waited on
        except ParseError as exc:
            problems.append(Problem(rel_path, exc.line, exc.reason))
            continue
        if mentioning and not any(heads_name(text, name) for name in mentioning):
            continue
        blocks += parsed_heads(path, rel_path, text)
    problems.extend(outside_problems(vault, outside))
    if paths is None:  # every registry file listed: a deleted or renamed one's parse goes
        for gone in set(list(_CURRENT)) - set(files):
            if gone.is_relative_to(vault):
                _CURRENT.pop(gone, None)
    return blocks, problems


load_heads = load_registry  # the scan's name for it


# -- finding one block by name, as the applier and ``use`` do: the one block, or a
# one-line reason (unknown, a near miss in case, duplicated, an unreadable file)

# Up to this many names, only the registry files whose text holds one are parsed; past
# it, looking for each in every file costs about what parsing them all does.
FEW_NAMES = 16


def find_block(vault: Path, name: str) -> RegistryBlock:
    """The one block called ``name``; unknown or duplicated names are errors."""
    return pick_block(name, *named_blocks(vault, [name]))


def named_blocks(vault: Path, names: Collection[str]) -> tuple[list[RegistryBlock], list[Problem]]:
    """The blocks called one of ``names`` (every block, when one of them heads none: a
    "did you mean" looks at them all), and the registry files that could not be read.
    A file whose text holds none of the names has no such block (its heading would hold
    it), so it is not parsed."""
    if not names:
        return [], []
    mentioning = tuple(names) if len(names) <= FEW_NAMES else ()
    blocks, problems = load_registry(vault, mentioning=mentioning)
    found = [b for b in blocks if b.name in names]
    if len({b.name for b in found}) == len(set(names)):
        return found, problems
    return load_registry(vault) if mentioning else (blocks, problems)


def pick_block(name: str, blocks: list[RegistryBlock], problems: list[Problem]) -> RegistryBlock:
    """find_block's verdict on ``name`` among ``blocks`` (named_blocks'): the one, or why not."""
    matches = [b for b in blocks if b.name == name]
    if not matches:
        hint = ""
        similar = [b for b in blocks if b.name.lower() == name.lower()]
        if similar:
            hint = f" (did you mean {similar[0].name!r} at {similar[0].rel}:{similar[0].line}?)"
        elif problems:
            hint = f" ({len(problems)} registry file(s) could not be read; first: {problems[0]})"
        raise NotFoundError(f"{name}: no ### {name} block in {config.PATTERNS_DIR}/{hint}")
    if len(matches) > 1:
        where = ", ".join(f"{b.rel}:{b.line}" for b in matches)
        raise VaultkeeperError(f"{name}: {len(matches)} registry blocks share this name ({where})")
    return matches[0]
