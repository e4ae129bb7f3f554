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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

_BLOCK_ID = re.compile(r"(?:^|\s)\^([A-Za-z0-9-]+)\s*$")
_BLOCK_NODES = frozenset({"paragraph", "block_text"})


@dataclass(frozen=True)
class Anchors:
    """A note's headings (matching keys, in document order) and its block ids (casefolded)."""

    headings: tuple[str, ...]
    blocks: frozenset[str]
    at: Mapping[str, tuple[int, ...]] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        # heading key -> its positions: a registry has thousands of headings and links
        positions: dict[str, list[int]] = {}
        for i, key in enumerate(self.headings):
            positions.setdefault(key, []).append(i)
        object.__setattr__(self, "at", {k: tuple(v) for k, v in positions.items()})


def heading_key(text: str) -> str:
    """What two headings must share to be the same link target."""
    text = unicodedata.normalize("NFC", text)
    spaced = "".join(" " if unicodedata.category(c)[0] in "PSZC" else c for c in text)
    return " ".join(spaced.split()).casefold()


@functools.lru_cache(maxsize=1)
def _markdown() -> Any:
    import mistune  # only when some link points into a note: it costs ~25 ms to import

    return mistune.create_markdown(renderer=None)


def _walk(md: Any, tokens: list[Mapping[str, Any]], env: Any, out: _Found) -> None:
    for token in tokens:
        kind = token.get("type")
        if kind == "heading":
            out.headings.append(heading_key(str(token.get("text", ""))))
        elif kind in _BLOCK_NODES:
            text = str(token.get("text", ""))
            m = _BLOCK_ID.search(text)
            # inline parsing only here, where an id may end the block: a closing code
            # span (`... ^id`) means it is code, not an id
            if m and _ends_in_text(md.inline(text.strip(), env)):
                out.blocks.add(m.group(1).casefold())
        elif kind != "block_code" and token.get("children"):
            _walk(md, token["children"], env, out)


def _ends_in_text(nodes: list[Mapping[str, Any]]) -> bool:
    return bool(nodes) and nodes[-1].get("type") == "text"


@dataclass
class _Found:
    headings: list[str]
    blocks: set[str]


def read_anchors(body: str) -> Anchors:
    """The anchors of a note's body (its text after the frontmatter).

    mistune's block pass finds headings, paragraphs and code; headings are matched on
    their source text (as Obsidian does), and inline parsing runs only on blocks that
    may end in an id -- on a registry of thousands of blocks that is most of the cost.
    """
    md = _markdown()
    state = md.block.state_cls()
    text = body.replace("\r\n", "\n").replace("\r", "\n")
    state.process(text if text.endswith("\n") else text + "\n")
    md.block.parse(state)
    found = _Found([], set())
    _walk(md, state.tokens, state.env, found)
    return Anchors(tuple(found.headings), frozenset(found.blocks))


def missing(anchors: Anchors, subpath: str) -> str | None:
    """Why ``subpath`` (``Heading``, ``A#B`` or ``^id``, no leading ``#``) finds nothing
    in a note with ``anchors``; None when it is found."""
    if subpath.startswith("^"):
        block = subpath[1:].strip()
        return None if block.casefold() in anchors.blocks else f"no block ^{block}"
    parts = [p.strip() for p in subpath.split("#") if p.strip()]
    at = -1
    for n, part in enumerate(parts):
        places = anchors.at.get(heading_key(part), ())
        found = next((i for i in places if i > at), None)
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
