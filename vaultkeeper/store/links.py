"""Obsidian links: where they are in a note, and which file each one means.

Extraction skips fenced code and inline code spans (they are not links in Obsidian) and
reads frontmatter values too (``categories: ["[[Books]]"]`` is a link). Resolution
follows Obsidian, never fuzzily: case-insensitive, ``.md`` optional, a unique file name
anywhere in the vault, or a path / path suffix; two candidate files are ambiguous.
"""

from __future__ import annotations

import bisect
import os
import posixpath
import re
import unicodedata
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from vaultkeeper.store.model import Note
from vaultkeeper.store.text import split_lines as split_lines
from vaultkeeper.store.vault import rel, walk_files

INNER = re.compile(r"\[\[([^\[\]\r\n]+?)\]\]")  # a link's text; a ``!`` before it embeds
_FENCE_OPEN = re.compile(r"^([ \t]*(?:>[ \t]*)*)(`{3,}|~{3,})(.*)$")
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`).*?(?<!`)\1(?!`)")


@dataclass(frozen=True)
class Fence:
    """A fenced code block: 1-based lines of its opening and closing fence."""

    start: int
    end: int | None  # None: never closed (runs to the end of the file)
    info: str  # the info string after the fence (language first)
    col: int  # 1-based column of the fence characters

    @property
    def language(self) -> str:
        return self.info.split()[0] if self.info.strip() else ""


class Link(NamedTuple):
    """One ``[[target#sub|alias]]`` (or ``![[...]]``) as written in a note (a tuple: a
    vault of 6,000 notes has 60,000 of them)."""

    target: str  # the path part, before ``#`` (empty for ``[[#Heading]]``)
    subpath: str  # ``Heading`` or ``^block`` without the ``#``, or ""
    alias: str
    embed: bool
    line: int
    col: int
    raw: str  # the whole link as written
    in_frontmatter: bool


_MAY_FENCE = re.compile(r"```|~~~")


def find_fences(text: str, at: int = 0, number: int = 1) -> list[Fence]:
    """Fenced blocks in ``text`` from offset ``at`` (line ``number``), indented or quoted
    too; a block closes at a line of the same fence character, at least as long, nothing
    after. Only the lines that hold ``` or ~~~ are looked at (most lines do not)."""
    marked: list[tuple[int, str]] = []  # (number, text) of each line holding a mark
    seen = at
    for m in _MAY_FENCE.finditer(text, at):
        if m.start() < seen:
            continue  # a second mark on a line already taken
        begin = text.rfind("\n", 0, m.start()) + 1
        end = text.find("\n", m.start())
        number += text.count("\n", seen, begin)
        seen = len(text) if end < 0 else end
        marked.append((number, text[begin:seen]))
    return _fences(marked)


def _fences(marked: Iterable[tuple[int, str]]) -> list[Fence]:
    fences: list[Fence] = []
    open_at: tuple[int, str, str, int] | None = None  # (line, mark, info, col)
    for number, line in marked:
        m = _FENCE_OPEN.match(line.rstrip("\r\n"))
        if not m or not line.lstrip(" \t>").startswith(("```", "~~~")):
            continue
        mark, rest = m.group(2), m.group(3)
        if open_at is None:
            if mark[0] == "`" and "`" in rest:
                continue  # an inline code span such as ```a``` , not a fence
            open_at = (number, mark, rest.strip(), len(m.group(1)) + 1)
        elif mark[0] == open_at[1][0] and len(mark) >= len(open_at[1]) and not rest.strip():
            fences.append(Fence(open_at[0], number, open_at[2], open_at[3]))
            open_at = None
    if open_at is not None:
        fences.append(Fence(open_at[0], None, open_at[2], open_at[3]))
    return fences


def code_spans(line: str) -> list[tuple[int, int]]:
    """0-based [start, end) ranges of inline code spans in one line: a run of backticks
    to the next run of as many (an unmatched run is literal backticks)."""
    return [m.span() for m in _CODE_SPAN.finditer(line)]


def parse_link(raw_inner: str) -> tuple[str, str, str]:
    """``target#sub|alias`` -> (target, subpath, alias); ``\\|`` (inside tables) splits too."""
    inner, _, alias = raw_inner.partition("|")
    inner = inner.removesuffix("\\")
    target, _, sub = inner.partition("#")
    return target.strip(), sub.strip(), alias.strip()


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


def extract_links(
    note: Note, fences: list[Fence] | None = None, only: Collection[str] | None = None
) -> list[Link]:
    """Every link in ``note``: in its frontmatter's values, then in its body outside code.

    The body's ``fences`` may be passed in; ``only``: just the links whose text between the
    brackets is one of these. The note is searched as one text: most lines hold no link.
    """
    text = note.text
    if "[[" not in text:
        return []
    body = len(text) - len(note.body)
    fm = note.frontmatter
    values = _strings(fm.data) if fm is not None else ()
    wanted = {m.group(1) for value in values if "[[" in value for m in INNER.finditer(value)}
    at, number = (text.find("\n") + 1, 2) if wanted else (body, note.body_line)
    if fences is None:
        fenced = "```" in note.body or "~~~" in note.body
        fences = find_fences(text, body, note.body_line) if fenced else []
    starts = [f.start for f in fences]  # in order, none inside another: bisect them
    ends = [len(text) if f.end is None else f.end for f in fences]
    out: list[Link] = []
    for m in INNER.finditer(text, at):
        if only is not None and m.group(1) not in only:
            continue
        start = m.start() - (text[m.start() - 1] == "!" if m.start() else 0)
        number += text.count("\n", at, start)
        at = start
        if start < body and m.group(1) not in wanted:
            continue  # in the frontmatter, a link only where a value holds it
        fence = bisect.bisect_right(starts, number) - 1
        if fence >= 0 and number <= ends[fence]:
            continue
        begin = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        line = text[begin : end if end >= 0 else len(text)]
        if "`" in line and any(a <= at - begin < b for a, b in code_spans(line)):
            continue
        target, sub, alias = parse_link(m.group(1))
        raw = text[start : m.end()]
        out.append(
            Link(target, sub, alias, start < m.start(), number, at - begin + 1, raw, start < body)
        )
    return out


def code_lines(fences: Iterable[Fence], total: int) -> set[int]:
    """1-based numbers of the lines inside fenced blocks (fences included)."""
    covered: set[int] = set()
    for fence in fences:
        covered.update(range(fence.start, (fence.end if fence.end is not None else total) + 1))
    return covered


def _key(text: str) -> str:
    return unicodedata.normalize("NFC", text).casefold()


@dataclass(frozen=True)
class Resolution:
    """Where a link leads: ``targets`` holds one path (resolved), none (broken) or more."""

    targets: tuple[str, ...]

    @property
    def resolved(self) -> str | None:
        return self.targets[0] if len(self.targets) == 1 else None

    @property
    def broken(self) -> bool:
        return not self.targets


class Resolver:
    """The vault's name table, built once per run from every file's vault-relative path."""

    def __init__(self, rel_paths: Iterable[str]) -> None:
        self._by_path: dict[str, str] = {}
        by_name: dict[str, list[str]] = {}
        for path in rel_paths:
            key = _key(path)
            self._by_path.setdefault(key, path)
            name = key.rsplit("/", 1)[-1]
            by_name.setdefault(name, []).append(path)
            if key.endswith(".md"):
                self._by_path.setdefault(key[:-3], path)
                by_name.setdefault(name[:-3], []).append(path)
        self._by_name = {name: tuple(dict.fromkeys(paths)) for name, paths in by_name.items()}

    @classmethod
    def for_vault(cls, vault: Path) -> Resolver:
        # cutting the vault's text off gives rel()'s answer without a Path per file
        prefix = os.fspath(vault) + os.sep
        return cls(
            f[len(prefix) :].replace(os.sep, "/") if f.startswith(prefix) else rel(vault, Path(f))
            for f in walk_files(vault)
        )

    def candidates(self, target: str) -> tuple[str, ...] | None:
        """The files ``target`` may mean from any note, before the near rule; None for a
        path from the note's folder (``./``, ``../``)."""
        text = target.replace("\\", "/").strip()
        if text.startswith(("./", "../")):
            return None
        key = _key(text.lstrip("/"))
        exact = self._by_path.get(key)
        if exact is not None:
            return (exact,)  # a full path from the vault root is definite
        unique = self._by_name.get(key.rsplit("/", 1)[-1], ())
        if "/" in key:
            suffix = "/" + key
            unique = tuple(
                c
                for c in unique
                if _key(c).endswith(suffix) or _key(c).removesuffix(".md").endswith(suffix)
            )
        return unique

    def resolve(self, target: str, source: str) -> Resolution:
        """The file(s) ``target`` (a link's path part) may mean, seen from note ``source``."""
        if not target:
            return Resolution((source,))  # [[#Heading]] points into the note itself
        return Resolution(self.near(self.candidates(target), target, source))

    def near(self, found: tuple[str, ...] | None, target: str, source: str) -> tuple[str, ...]:
        """``found`` (the target's candidates) as seen from note ``source``."""
        text = target.replace("\\", "/").strip()
        if found is None:
            joined = posixpath.normpath(posixpath.join(posixpath.dirname(source), text))
            hit = self._by_path.get(_key(joined))
            return (hit,) if hit is not None else ()
        here = posixpath.dirname(source)
        if len(found) > 1 and here:
            # Obsidian's rule for a name several files share: the one in the linking
            # note's own folder; only when none is there is the link ambiguous (VK302)
            near = self._by_path.get(_key(posixpath.join(here, _key(text.lstrip("/")))))
            if near is not None and near in found:
                return (near,)
        return found
