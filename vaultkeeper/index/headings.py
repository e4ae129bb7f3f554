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


# every ASCII character of a category P, S, Z or C, as a space: heading_key's rule at once
_ASCII_BLANKS = {c: " " for c in range(128) if unicodedata.category(chr(c))[0] in "PSZC"}


@functools.lru_cache(maxsize=4096)  # a link's heading is asked for again and again
def heading_key(text: str) -> str:
    """What two headings must share to be the same link target."""
    if text.isascii():
        return " ".join(text.translate(_ASCII_BLANKS).split()).casefold()
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


# An ATX heading line (up to 3 spaces of indent, then 1-6 #, then a blank or the end)
# outside code fences, in a note with no HTML block, is a heading wherever it stands
# (ATX headings interrupt paragraphs and end indented code), so a link to it is found
# without parsing the note. Anything less plain goes to mistune.
_ATX = re.compile(r"^ {0,3}#{1,6}(?:[ \t]+(.*?))?[ \t]*$")
_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_ATX_LINES = re.compile(_ATX.pattern, re.M)
_HTML = re.compile(r"^ {0,3}<", re.M)
_FENCE_ANYWHERE = re.compile(r"^[ \t]*(?:`{3,}|~{3,})", re.M)


def _outside_fences(body: str) -> list[str] | None:
    """The lines outside top-level code fences; None when the note has an HTML block, or
    a fence this line scan can't place (indented into a list, say)."""
    if "<" in body and _HTML.search(body):
        return None
    if not ("```" in body or "~~~" in body) or not _FENCE_ANYWHERE.search(body):
        return body.split("\n")
    lines: list[str] = []
    fence: tuple[str, int] | None = None  # the open fence's character and length
    for line in body.split("\n"):
        if "```" not in line and "~~~" not in line:  # no fence opens or closes here
            if fence is None:
                lines.append(line)
            continue
        m = _FENCE.match(line)
        if fence is not None:
            closes = m and m.group(2)[0] == fence[0] and len(m.group(2)) >= fence[1]
            if closes and m and not m.group(3).strip():
                fence = None
            continue
        if m:
            if m.group(2)[0] == "`" and "`" in m.group(3):
                return None  # not a fence, by CommonMark: let mistune say
            if m.group(1):
                # indented 1-3 spaces it may open inside a list item above, which
                # ends at the next unindented line: its closing line opens a new fence
                return None
            fence = (m.group(2)[0], len(m.group(2)))
            continue
        if line.lstrip().startswith(("```", "~~~")):
            return None  # a fence indented past 3 spaces: inside a list item
        lines.append(line)
    return lines


# A setext underline below a line of text, and a ``#`` run after nothing but blanks, quote
# marks or list markers: either may make a heading the line scan does not take (quoted,
# indented, in a list item).
_UNDERLINE = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$", re.M)
_HASHES = re.compile(r"^[ \t>*+.)0-9-]*#{1,6}(?:[ \t].*|)$", re.M)


def _all_plain(text: str) -> bool:
    """Whether every heading in ``text`` (the lines outside fences) is a plain ATX line."""
    for m in _UNDERLINE.finditer(text) if "=" in text or "-" in text else ():
        end = m.start() - 1  # the newline before it (-1: the first line)
        if end > 0 and text[text.rfind("\n", 0, end) + 1 : end].strip():  # text above it
            return False
    return all(_ATX.match(m.group()) for m in _HASHES.finditer(text))


# What may keep a line's closing ``^id`` from ending its block's text (a code span, a
# link, emphasis, inline HTML, an escape): a line with none of these the glance reads.
_INLINE_MARKS = re.compile(r"[`<>\[\]*_\\&~$|!{}=]")


def _plain_blocks(lines: list[str]) -> frozenset[str]:
    """Block ids that surely end a paragraph or list item: on a plain line of text (not a
    heading, quote or indented line) followed by a blank line or the end."""
    found: set[str] = set()
    for n, line in enumerate(lines):
        if "^" not in line or (n + 1 < len(lines) and lines[n + 1].strip()):
            continue
        if line.startswith(("    ", "\t")) or line.lstrip().startswith((">", "#")):
            continue
        m = None if _INLINE_MARKS.search(line) else _BLOCK_ID.search(line.strip())
        if m:
            found.add(m.group(1).casefold())
    return frozenset(found)


class _Quick:
    """What a glance at a note's text settles: headings surely there, words surely not."""

    def __init__(self, body: str) -> None:
        self.body = body
        lines = _outside_fences(body)
        text = "" if lines is None else "\n".join(lines)
        found = _ATX_LINES.finditer(text) if "#" in text else ()
        keys = tuple(heading_key(m.group(1) or "") for m in found)
        # keys of ATX headings, where no fence or HTML block can hide one
        self.sure = frozenset(keys)
        # every heading in order, when the glance sees them all
        plain = lines is not None and _all_plain(text)
        self.every = Anchors(keys, frozenset()) if plain else None
        # block ids surely there
        self.blocks = _plain_blocks(lines) if lines is not None and "^" in body else frozenset()

    @functools.cached_property
    def lowered(self) -> str:
        """The body casefolded: a block's ``^id`` is in it, if anywhere."""
        return self.body.casefold()

    @functools.cached_property
    def folded(self) -> str | None:
        """The body casefolded when it is NFC (else None: no shortcut). A heading's words
        are each a part of the text it stands in; casefolding keeps that, NFC may not
        where the text was not NFC already."""
        return self.lowered if unicodedata.is_normalized("NFC", self.body) else None


_glance = _Quick


def quick_missing(quick: _Quick, subpath: str) -> str | None | bool:
    """``missing`` where a glance settles it (a reason, or None: found); True: parse."""
    if subpath.startswith("^"):
        block = subpath[1:].strip()
        if block.casefold() in quick.blocks:
            return None
        return True if "^" + block.casefold() in quick.lowered else f"no block ^{block}"
    if quick.every is not None:  # every heading seen: as the parse would answer
        return missing(quick.every, subpath)
    parts = [p.strip() for p in subpath.split("#") if p.strip()]
    if len(parts) != 1:
        return True
    key = heading_key(parts[0])
    if key and key in quick.sure:
        return None
    if key and quick.folded is not None and any(w not in quick.folded for w in key.split()):
        return f"no heading {parts[0]!r}"  # a word no heading can hold: the note lacks it
    return True


class AnchorTable:
    """Anchors of the notes links point into, parsed on first use and kept for the run.

    Most links into a note name an ATX heading that is plainly there, or words the note
    does not hold at all; a glance at the text answers those exactly, and mistune runs
    only on the notes where it does not (tests/test_index_headings.py checks the glance
    against the parse).
    """

    def __init__(self, body_of: Callable[[str], str | None]) -> None:
        self._body_of = body_of  # vault-relative path -> the note's body, or None
        self._cache: dict[str, Anchors | None] = {}
        self._quick: dict[str, _Quick | None] = {}

    def anchors(self, rel_path: str) -> Anchors | None:
        if rel_path not in self._cache:
            body = self._body_of(rel_path)
            self._cache[rel_path] = read_anchors(body) if body is not None else None
        return self._cache[rel_path]

    def missing(self, rel_path: str, subpath: str) -> str | None:
        """As ``missing``, for the note at ``rel_path``; None when that note can't be read."""
        if not subpath or not rel_path.casefold().endswith(".md"):
            return None  # ``#page=3`` of a PDF, a view of a .base: not ours to check
        if rel_path not in self._cache:
            if rel_path not in self._quick:
                body = self._body_of(rel_path)
                self._quick[rel_path] = None if body is None else _glance(body)
            quick = self._quick[rel_path]
            if quick is None:
                return None
            settled = quick_missing(quick, subpath)
            if settled is None or isinstance(settled, str):
                return settled
        found = self.anchors(rel_path)
        return None if found is None else missing(found, subpath)
