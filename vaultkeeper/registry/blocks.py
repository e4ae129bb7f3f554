"""The pattern registry: ``### name`` blocks whose bodies carry bold-markdown counters.

    ### my-pattern
    **success count:** 2
    **last used:** 2026-08-26
    **promoted:** 2026-09-01 -> [[skills/my-pattern/SKILL]]

A block runs from its heading to the next heading of level 1-3 (or the end of the file);
headings inside fenced code are not blocks. Which lines are headings, fences and counters
is registry/lines.py's; this module builds the blocks from them and loads the files.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from vaultkeeper import config
from vaultkeeper.registry.lines import (
    AGAIN,
    COUNT_AT,
    HEAD_FIELDS,
    LABEL_OF,
    LAST_AT,
    PROMOTED_AT,
    Found,
    body_start,
    heads_name,
    index_lines,
)
from vaultkeeper.registry.lines import block_hash as block_hash
from vaultkeeper.registry.lines import count_reason as count_reason
from vaultkeeper.registry.lines import first_paragraph as first_paragraph
from vaultkeeper.registry.lines import first_sentence as first_sentence
from vaultkeeper.registry.lines import is_counter_line as is_counter_line
from vaultkeeper.registry.lines import name_key as name_key
from vaultkeeper.registry.lines import registry_files as registry_files
from vaultkeeper.registry.lines import whole_count as whole_count
from vaultkeeper.store.model import ParseError, Problem, decode, parse_date, read_regular
from vaultkeeper.store.model import outside_problems as outside_problems
from vaultkeeper.store.vault import rel


class _BlockFields(NamedTuple):
    name: str
    path: Path
    rel: str
    line: int  # 1-based line of the ``### name`` heading
    end_line: int  # 1-based last line of the block (inclusive)
    text: str  # the block's lines exactly as in the file
    count: int | None  # type: ignore[assignment]  # over tuple.count, which nothing calls
    count_raw: str | None
    count_line: int | None
    last_used: dt.date | None
    last_used_raw: str | None
    last_used_line: int | None
    promoted: str | None
    promoted_line: int | None
    # (line, label) of a second counter line of a kind: which one counts is unclear
    repeated: tuple[tuple[int, str], ...] = ()


class RegistryBlock(_BlockFields):
    """One ``### name`` block: its lines as in the file, and its counters as read."""

    __slots__ = ()

    @property
    def hash(self) -> str:
        return block_hash(self.text)

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


class BlockHead:
    """A block as the scanner reads it: name, heading line and parsed counters.

    The full RegistryBlock (its text, end line and counter lines) is built by
    ``block()`` on demand: a scan needs it only for candidates and problems.
    """

    __slots__ = (
        *HEAD_FIELDS,
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

    def text(self) -> str:
        """The block's lines exactly as in the file (RegistryBlock.text)."""
        segment = self._nl_text[self._at + 1 : self._stop]
        cut = segment.find("\n", len(segment.rstrip()))  # trailing blank lines: the gap
        return segment if cut == -1 else segment[: cut + 1]

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

    def hash(self) -> str:
        """block_hash of the block's text: what a candidate and ``--expect-hash`` carry."""
        if self._hash is None:  # the scan cache may know it (keptheads)
            self._hash = block_hash(self.text())
        return self._hash

    def span(self) -> str:
        """Every character from the heading to the next heading: all a head depends on,
        its line aside (the scan cache's fingerprint of the block)."""
        return self._nl_text[self._at + 1 : self._stop]

    def bounds(self) -> tuple[int, int]:
        """Where span() is in the file's text with one "\n" put in front."""
        return self._at + 1, self._stop

    def problems(self) -> list[Problem]:
        return self.block().problems()

    def sentence(self) -> str:
        """The first sentence of the first paragraph: what the duplicates pass compares."""
        if self._sentence is None:  # the cache and the duplicates pass both ask
            self._sentence = first_sentence(self.lead())
        return self._sentence

    def block(self) -> RegistryBlock:
        text = self.text()
        lines = text.count("\n") + (0 if text.endswith("\n") else 1)
        return RegistryBlock(
            name=self.name,
            path=self.path,
            rel=self.rel,
            line=self.line,
            end_line=self.line + lines - 1,
            text=text,
            count=self.count,
            count_raw=self.count_raw,
            count_line=self._line(COUNT_AT),
            last_used=self.last_used,
            last_used_raw=self.last_used_raw,
            last_used_line=self._line(LAST_AT),
            promoted=self.promoted,
            promoted_line=self._line(PROMOTED_AT),
            repeated=tuple(
                (line, LABEL_OF[kind])
                for kind in (COUNT_AT, LAST_AT, PROMOTED_AT)
                if (line := self._line(kind + AGAIN)) is not None
            ),
        )


def parse_heads(path: Path, rel_path: str, text: str) -> list[BlockHead]:
    """Every ``### name`` block of one registry file, in file order, built lazily.

    A block runs from its heading to the next heading of level 1-3 outside fenced code;
    trailing blank lines belong to the gap. The first count / last-used / promoted line
    of each kind outside fenced code is the block's.
    """
    nl_text = "\n" + text  # offset i of nl_text is offset i - 1 of text
    heads, counters = index_lines(nl_text, body_start(text))
    return build_heads(path, rel_path, nl_text, heads, counters, len(nl_text), {})


def build_heads(
    path: Path,
    rel_path: str,
    nl_text: str,
    heads: list[tuple[int, str]],
    counters: list[Found],
    end: int,
    dates: dict[str, dt.date | None],
) -> list[BlockHead]:
    """The BlockHeads of what index_lines found; the last block runs to ``end``."""
    out: list[BlockHead] = []
    line, counted = 0, 0  # the line starting at offset ``counted`` of nl_text (its "\n"s before)
    last = len(heads) - 1
    for i, (at, name) in enumerate(heads):
        if not name:
            continue
        line += nl_text.count("\n", counted, at + 1)
        counted = at + 1
        stop = heads[i + 1][0] + 1 if i < last else end
        out.append(BlockHead(name, path, rel_path, line, counters[i], nl_text, (at, stop), dates))
    return out


@functools.lru_cache(maxsize=32)
def _parsed(path: Path, rel_path: str, text: str) -> tuple[BlockHead, ...]:
    return tuple(parse_heads(path, rel_path, text))


def parsed_heads(path: Path, rel_path: str, text: str) -> list[BlockHead]:
    """parse_heads, kept for the last few texts: a command reads a registry file several
    times (to find a block, under the writer lock, for the index). The key is the text
    itself, never a stat: a file edited between two reads is parsed again."""
    return list(_parsed(path, rel_path, text))


def parse_blocks(path: Path, rel_path: str, text: str) -> list[RegistryBlock]:
    """Every ``### name`` block of one registry file, in file order (see parse_heads)."""
    return [head.block() for head in parse_heads(path, rel_path, text)]


def load_heads(
    vault: Path, paths: Iterable[Path] | None = None, mentioning: tuple[str, ...] = ()
) -> tuple[list[BlockHead], list[Problem]]:
    """Every block in every registry file, built lazily; unreadable files (and symlinks
    out of the vault: never read) become problems. With ``mentioning`` (block names),
    only the files where one of them may head a block (lines.heads_name)."""
    heads: list[BlockHead] = []
    problems: list[Problem] = []
    outside: list[str] = []
    for path in registry_files(vault, outside) if paths is None else paths:
        rel_path = rel(vault, path)
        try:
            text = decode(read_regular(path))  # a FIFO named *.md is refused, not waited on
        except ParseError as exc:
            problems.append(Problem(rel_path, exc.line, exc.reason))
            continue
        if mentioning and not any(heads_name(text, name) for name in mentioning):
            continue
        heads += parsed_heads(path, rel_path, text)
    problems.extend(outside_problems(vault, outside))
    return heads, problems


def load_registry(
    vault: Path, paths: Iterable[Path] | None = None, mentioning: tuple[str, ...] = ()
) -> tuple[list[RegistryBlock], list[Problem]]:
    """Every block in every registry file (see load_heads); unreadable files become problems."""
    heads, problems = load_heads(vault, paths, mentioning)
    return [head.block() for head in heads], problems
