"""Where ``[[note#Heading]]`` and ``[[note#^block]]`` lead: a note's headings and block ids.

A glance at the text settles most links exactly; mistune (CommonMark) parses the rest, so
code is never taken for a heading or an id. Matching follows Obsidian, leaning towards
"found": headings compare case-insensitively with punctuation, symbols and runs of spaces
ignored; ``#A#B`` finds B after A; block ids (``^id``: letters, digits, ``-``) end a
paragraph or list item and compare case-insensitively.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

_BLOCK_ID = re.compile(r"(?:^|\s)\^([A-Za-z0-9-]+)\s*$")
_BLOCK_NODES = frozenset({"paragraph", "block_text"})


@dataclass(frozen=True)
class Anchors:
    """A note's headings (matching keys, in document order) and its block ids (casefolded)."""

    headings: tuple[str, ...]
    blocks: frozenset[str]

    @functools.cached_property
    def at(self) -> dict[str, list[int]]:
        """Heading key -> its positions: a registry has thousands of headings and links."""
        positions: dict[str, list[int]] = {}
        for i, key in enumerate(self.headings):
            positions.setdefault(key, []).append(i)
        return positions


class _Blanks(dict[int, str]):
    """Each character of a category P, S, Z or C as a space, filled in as characters come:
    ``str.translate`` then applies heading_key's rule in C."""

    def __missing__(self, code: int) -> str:
        self[code] = " " if unicodedata.category(chr(code))[0] in "PSZC" else chr(code)
        return self[code]


_BLANKS = _Blanks()


@functools.lru_cache(maxsize=65536)  # a link's heading is asked for again and again
def heading_key(text: str) -> str:
    """What two headings must share to be the same link target."""
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    return " ".join(text.translate(_BLANKS).split()).casefold()


@functools.lru_cache(maxsize=1)
def _markdown() -> Any:
    import mistune  # only when some link points into a note: it costs ~25 ms to import

    return mistune.create_markdown(renderer=None)


def _walk(
    md: Any, tokens: list[Mapping[str, Any]], env: Any, out: tuple[list[str], set[str]]
) -> None:
    for token in tokens:
        kind = token.get("type")
        if kind == "heading":
            out[0].append(heading_key(str(token.get("text", ""))))
        elif kind in _BLOCK_NODES:
            text = str(token.get("text", ""))
            m = _BLOCK_ID.search(text)
            # an id only where the block's last inline node is text (not a code span)
            nodes = md.inline(text.strip(), env) if m else None
            if m and nodes and nodes[-1].get("type") == "text":
                out[1].add(m.group(1).casefold())
        elif kind != "block_code" and token.get("children"):
            _walk(md, token["children"], env, out)


def read_anchors(body: str) -> Anchors:
    """The anchors of a note's body (its text after the frontmatter): mistune's block
    pass, headings by their source text, inline parsing only where an id may end a block."""
    md = _markdown()
    state = md.block.state_cls()
    text = body.replace("\r\n", "\n").replace("\r", "\n")
    state.process(text if text.endswith("\n") else text + "\n")
    md.block.parse(state)
    found: tuple[list[str], set[str]] = ([], set())
    _walk(md, state.tokens, state.env, found)
    return Anchors(tuple(found[0]), frozenset(found[1]))


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


# An ATX heading line outside code fences and HTML blocks is a heading wherever it stands;
# anything less plain goes to mistune. Patterns start with a newline where they can: the
# regex engine then skips to candidates.
_ATX = re.compile(r"\n {0,3}#{1,6}(?:[ \t]+([^\n]*?))?[ \t]*(?=\n|\Z)")
_FENCE = re.compile(r"( {0,3})(`{3,}|~{3,})(.*)$")
_FENCE_ANYWHERE = re.compile(r"\n[ \t>*+.)0-9-]*(?:`{3,}|~{3,})")
# a fence opened on a list item's marker line ("- ```"): its item holds the lines below
_LISTED_FENCE = re.compile(r"[ \t>]*(?:[*+-]|[0-9]{1,9}[.)])[ \t][ \t>*+.)0-9-]*(?:`{3,}|~{3,})")
# HTML blocks: one that may run past a blank line (a comment, <?, <!X, CDATA, <pre>,
# <script>, <style>, <textarea>) sends the note to mistune; any other ends at the first
# blank line, so a line is outside them when no line since the last blank one may open
# one (a ``<`` after nothing but blanks, quote marks or list markers).
_HTML_PAST_BLANKS = re.compile(r"<[!?]|<(?:pre|script|style|textarea)(?![a-z0-9-])", re.I)
_HTML_LINE = re.compile(r"\n[ \t>*+.)0-9-]*<")
_BLANK_LINE = re.compile(r"\n[ \t\v\f]*(?=\n|\Z)")
# A setext underline below a line of text, and a ``#`` run after nothing but blanks, quote
# marks or list markers: either may make a heading the line scan does not take (quoted,
# indented, in a list item).
_UNDERLINE = re.compile(r"\n {0,3}(?:=+|-+)[ \t]*(?=\n|$)")
_HASHES = re.compile(r"\n[ \t>*+.)0-9-]*#{1,6}(?:[ \t][^\n]*|)(?=\n|\Z)")  # _ATX's lines too


def _html_lines(led: str) -> set[int]:
    """Where in ``led`` ("\\n" + text) lines start that an HTML block may hold (their
    newlines): from a line that may open one to the next blank line."""
    held: set[int] = set()
    for m in _HTML_LINE.finditer(led):
        blank = _BLANK_LINE.search(led, m.end())
        at, end = m.start(), len(led) if blank is None else blank.start()
        while 0 <= at < end and at not in held:
            held.add(at)
            at = led.find("\n", at + 1)
    return held


def _outside_fences(body: str) -> str | None:
    """The lines outside top-level code fences; None when the note has an HTML block that
    may run past a blank line, or a fence this line scan can't place (indented into a
    list, or where an HTML block may hold it)."""
    if "<" in body and _HTML_PAST_BLANKS.search(body):
        return None
    if not ("```" in body or "~~~" in body) or not _FENCE_ANYWHERE.search("\n" + body):
        return body
    lines = body.split("\n")
    kept: list[str] = []
    start = 0  # the first line of the run outside fences
    fence: tuple[str, int, int] | None = None  # the open fence's character, length, indent
    for n in [n for n, line in enumerate(lines) if "```" in line or "~~~" in line]:
        line = lines[n]
        m = _FENCE.match(line)
        if fence is not None:
            closes = m and m.group(2)[0] == fence[0] and len(m.group(2)) >= fence[1]
            if closes and m and not m.group(3).strip():
                if fence[2] and not _kept_in(lines[start : n + 1], fence[2]):
                    return None
                fence, start = None, n + 1
            continue
        if m:
            if m.group(2)[0] == "`" and "`" in m.group(3):
                return None  # not a fence, by CommonMark: let mistune say
            led = "\n" + "\n".join(lines[start : n + 1]) if "<" in body else ""
            if led and len(led) - len(line) - 1 in _html_lines(led):
                return None  # an HTML block above may hold the fence line
            kept.extend(lines[start:n])
            fence, start = (m.group(2)[0], len(m.group(2)), len(m.group(1))), n + 1
        elif line.lstrip().startswith(("```", "~~~")) or _LISTED_FENCE.match(line):
            return None  # a fence indented past 3 spaces or after a list marker: in an item
    if fence is not None:
        return None if fence[2] and not _kept_in(lines[start:], fence[2]) else "\n".join(kept)
    return "\n".join(kept + lines[start:])


def _kept_in(lines: list[str], indent: int) -> bool:
    """Whether a fence indented ``indent`` spaces holds ``lines`` (its inside, its closing
    line) wherever it stands: a list item it may open in goes on over lines indented as
    far, and blank ones, and ends at any other."""
    return all(line[:indent] == " " * indent or not line.strip(" \t\r") for line in lines)


def _underlined(text: str) -> bool:
    """Whether a setext underline in ``text`` stands below a line of text."""
    for m in _UNDERLINE.finditer(text) if "=" in text or "-" in text else ():
        if text[text.rfind("\n", 0, m.start()) + 1 : m.start()].strip():
            return True
    return False


# A line opening with ``[`` may be a link reference definition, not a paragraph. Any
# other inline mark before a line's closing `` ^id`` leaves the id the block's last text
# (a code span, link, emphasis or tag would have to end after it).
_REFERENCE = re.compile(r"\s*\[")


def _plain_blocks(text: str, html: set[int]) -> frozenset[str]:
    """Block ids that surely end a paragraph or list item: on a plain line of text (not a
    heading, quote, indented line or where an HTML block may run) followed by a blank line
    or the end."""
    found: set[str] = set()
    lines = text.split("\n")
    at = 0  # the newline before line n in "\n" + text
    for n, line in enumerate(lines):
        here, at = at, at + len(line) + 1
        if "^" not in line or (n + 1 < len(lines) and lines[n + 1].strip()):
            continue
        if line.startswith(("    ", "\t")) or line.lstrip().startswith((">", "#")):
            continue
        m = None if _REFERENCE.match(line) else _BLOCK_ID.search(line.strip())
        if m and here not in html:
            found.add(m.group(1).casefold())
    return frozenset(found)


class _Quick:
    """What a glance at a note's text settles: headings surely there, words surely not."""

    def __init__(self, body: str) -> None:
        self.body = body
        if "\r" in body:  # lines end as the parse ends them: a lone CR ends one too
            body = body.replace("\r\n", "\n").replace("\r", "\n")
        self.text = _outside_fences(body)
        text = self.text or ""
        led = "\n" + text
        html = _html_lines(led) if "<" in text else set()
        # keys of ATX headings; surely headings where no HTML block may hold them
        found = list(_ATX.finditer(led)) if "#" in text else []
        self.keys = tuple(heading_key(m.group(1) or "") for m in found)
        held = {n for n, m in enumerate(found) if m.start() in html}
        self.sure = frozenset(k for n, k in enumerate(self.keys) if n not in held)
        self.held = bool(held)  # some ATX line may be HTML: not every heading is known
        # block ids surely there
        plain = self.text is not None and "^" in body
        self.blocks = _plain_blocks(text, html) if plain else frozenset()

    @functools.cached_property
    def every(self) -> Anchors | None:
        """Every heading in order, when the glance sees them all."""
        text = self.text
        # a ``#`` line ATX does not take, or an underline: a heading the glance may miss
        if (
            text is None
            or self.held
            or _underlined(text)
            or len(_HASHES.findall("\n" + text)) > len(self.keys)
        ):
            return None
        return Anchors(self.keys, frozenset())

    @functools.cached_property
    def parsed(self) -> Anchors:
        """What mistune makes of the note, when the glance can't tell."""
        return read_anchors(self.body)

    @functools.cached_property
    def lowered(self) -> str:
        """The body casefolded: a block's ``^id`` is in it, if anywhere."""
        return self.body.casefold()

    @functools.cached_property
    def folded(self) -> str | None:
        """The body casefolded when it is NFC (else None): a heading's words are in it."""
        return self.lowered if unicodedata.is_normalized("NFC", self.body) else None


_glance = _Quick


def quick_missing(quick: _Quick, subpath: str) -> str | None | bool:
    """``missing`` where a glance settles it (a reason, or None: found); True: parse."""
    if subpath.startswith("^"):
        block = subpath[1:].strip()
        if block.casefold() in quick.blocks:
            return None
        # an id ends its block: after a blank, a quote mark or the start of a line
        ends = re.compile(r"(?:^|[\s>])\^" + re.escape(block.casefold()) + r"\s*$", re.M)
        return True if ends.search(quick.lowered.replace("\r", "\n")) else f"no block ^{block}"
    parts = [p.strip() for p in subpath.split("#") if p.strip()]
    key = heading_key(parts[0]) if len(parts) == 1 else ""
    if key and key in quick.sure:
        return None
    if quick.every is not None:  # every heading seen: as the parse would answer
        return missing(quick.every, subpath)
    if len(parts) != 1:
        return True
    if key and quick.folded is not None and any(w not in quick.folded for w in key.split()):
        return f"no heading {parts[0]!r}"  # a word no heading can hold: the note lacks it
    return True


class AnchorTable:
    """Anchors of the notes links point into, glanced at or parsed on first use, kept for
    the run (tests/test_index_headings.py holds the glance to the parse)."""

    def __init__(self, body_of: Callable[[str], str | None]) -> None:
        self._body_of = body_of  # vault-relative path -> the note's body, or None
        self._notes: dict[str, _Quick | None] = {}
        self._said: dict[tuple[str, str], str | None] = {}  # one heading, many links to it

    def missing(self, rel_path: str, subpath: str) -> str | None:
        """As ``missing``, for the note at ``rel_path``; None when that note can't be read."""
        if not subpath or not rel_path.casefold().endswith(".md"):
            return None  # ``#page=3`` of a PDF, a view of a .base: not ours to check
        key = (rel_path, subpath)
        if key not in self._said:
            if rel_path not in self._notes:
                body = self._body_of(rel_path)
                self._notes[rel_path] = None if body is None else _Quick(body)
            quick = self._notes[rel_path]
            said = None if quick is None else quick_missing(quick, subpath)
            if quick is not None and said is True:
                said = missing(quick.parsed, subpath)
            self._said[key] = said if isinstance(said, str) else None
        return self._said[key]
