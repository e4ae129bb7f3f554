"""Where ``[[note#Heading]]`` and ``[[note#^block]]`` lead: a note's headings and block ids.

A note is parsed with mistune (a real CommonMark parser, AST mode), so a ``#`` or ``^id``
inside fenced, indented or inline code is never taken for a heading or a block id, and
setext headings count. Only notes that some link points into are parsed, each once.

Matching follows Obsidian, leaning towards "found": headings compare case-insensitively
with punctuation and symbols ignored and runs of spaces collapsed (Obsidian ignores the
characters that cannot appear in a link, ``# | ^ : [[ ]]`` and more), so a link Obsidian
follows is never reported; ``#A#B`` finds heading B after heading A. Block ids are the
``^id`` (letters, digits, ``-``) ending a paragraph or list item, or standing on their own
line after a block such as a table; they compare case-insensitively.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

_BLOCK_ID = re.compile(r"(?:^|\s)\^([A-Za-z0-9-]+)\s*$")
_BLOCK_NODES = frozenset({"paragraph", "block_text"})


@dataclass(frozen=True)
class Anchors:
    """A note's headings (matching keys, in document order) and its block ids (casefolded)."""

    headings: tuple[str, ...]
    blocks: frozenset[str]


def heading_key(text: str) -> str:
    """What two headings must share to be the same link target."""
    text = unicodedata.normalize("NFC", text)
    spaced = "".join(" " if unicodedata.category(c)[0] in "PSZC" else c for c in text)
    return " ".join(spaced.split()).casefold()


@functools.lru_cache(maxsize=1)
def _parser() -> Callable[[str], Any]:
    import mistune  # only when some link points into a note: it costs ~25 ms to import

    parse: Callable[[str], Any] = mistune.create_markdown(renderer=None)
    return parse


def _plain(nodes: list[Mapping[str, Any]]) -> Iterator[str]:
    for node in nodes:
        if "raw" in node:
            yield str(node["raw"])
        elif node.get("type") in ("softbreak", "linebreak"):
            yield " "
        if "children" in node:
            yield from _plain(node["children"])


def _walk(nodes: list[Mapping[str, Any]], headings: list[str], blocks: set[str]) -> None:
    for node in nodes:
        kind = node.get("type")
        children = node.get("children") or []
        if kind == "heading":
            headings.append(heading_key("".join(_plain(children))))
            continue
        if kind in _BLOCK_NODES:
            last = children[-1] if children else None
            if last is not None and last.get("type") == "text":  # a codespan is not an id
                m = _BLOCK_ID.search(str(last.get("raw", "")))
                if m:
                    blocks.add(m.group(1).casefold())
            continue
        if children and kind != "block_code":
            _walk(children, headings, blocks)


def read_anchors(body: str) -> Anchors:
    """The anchors of a note's body (its text after the frontmatter)."""
    headings: list[str] = []
    blocks: set[str] = set()
    _walk(_parser()(body), headings, blocks)
    return Anchors(tuple(headings), frozenset(blocks))


def missing(anchors: Anchors, subpath: str) -> str | None:
    """Why ``subpath`` (``Heading``, ``A#B`` or ``^id``, no leading ``#``) finds nothing
    in a note with ``anchors``; None when it is found."""
    if subpath.startswith("^"):
        block = subpath[1:].strip()
        return None if block.casefold() in anchors.blocks else f"no block ^{block}"
    parts = [p.strip() for p in subpath.split("#") if p.strip()]
    at = -1
    for n, part in enumerate(parts):
        key = heading_key(part)
        later = (i for i in range(at + 1, len(anchors.headings)) if anchors.headings[i] == key)
        found = next(later, None)
        if found is None:
            return f"no heading {part!r}" + (f" after heading {parts[n - 1]!r}" if n else "")
        at = found
    return None


class AnchorTable:
    """Anchors of the notes links point into, parsed on first use and kept for the run."""

    def __init__(self, body_of: Callable[[str], str | None]) -> None:
        self._body_of = body_of  # vault-relative path -> the note's body, or None
        self._cache: dict[str, Anchors | None] = {}

    def anchors(self, rel_path: str) -> Anchors | None:
        if rel_path not in self._cache:
            body = self._body_of(rel_path)
            self._cache[rel_path] = read_anchors(body) if body is not None else None
        return self._cache[rel_path]

    def missing(self, rel_path: str, subpath: str) -> str | None:
        """As ``missing``, for the note at ``rel_path``; None when that note can't be read."""
        if not subpath or not rel_path.casefold().endswith(".md"):
            return None  # ``#page=3`` of a PDF, a view of a .base: not ours to check
        found = self.anchors(rel_path)
        return None if found is None else missing(found, subpath)
