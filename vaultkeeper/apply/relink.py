"""Links to a merged-away entry rewritten to the entry that stays: one edited line each.

``[[DROP]]``, ``[[path/DROP#Heading|alias]]``, ``![[registry#DROP]]`` (and the same in
frontmatter values) keep their heading, alias, table escape and embed mark; only the
part that names DROP changes. Index files are left to the index's regeneration. A note
whose frontmatter can't be parsed is still read for links, as plain text (its
frontmatter lines too): left alone, its links to DROP would break.
"""

from __future__ import annotations

from pathlib import Path

from vaultkeeper.apply.edits import Source, read_source
from vaultkeeper.errors import GateRefused, VaultkeeperError
from vaultkeeper.index.build import is_index_file
from vaultkeeper.store.edit import replace_line
from vaultkeeper.store.links import Resolver, extract_links, split_lines
from vaultkeeper.store.model import Note, ParseError, decode, load_notes, read_regular
from vaultkeeper.store.vault import iter_markdown, rel, resolve_inside


def rewrite_links(
    vault: Path, drop_rel: str, drop_block: str | None, keep_link: str,
    texts: dict[str, tuple[Source, str]],
) -> int:  # fmt: skip
    """Every link meaning DROP now means KEEP: one edited line per link (into ``texts``)."""
    paths = list(iter_markdown(vault))
    resolver = Resolver(rel(vault, p) for p in paths)
    notes, problems = load_notes(vault, (p for p in paths if not is_index_file(rel(vault, p))))
    notes += [n for n in (_as_text(vault, p.path) for p in problems) if n is not None]
    count = 0
    for note in notes:
        if note.rel == drop_rel and drop_block is None:
            continue  # DROP's own file goes to .trash/
        edits: list[tuple[int, int, str]] = []
        for link in extract_links(note):
            if resolver.resolve(link.target, note.rel).resolved != drop_rel:
                continue
            if drop_block is not None and link.subpath.casefold() != drop_block.casefold():
                continue
            edits.append((link.line, link.col, link.raw))
        if not edits:
            continue
        source = read_source(note.path, note.rel)
        if source.text != note.text:
            raise GateRefused(f"{note.rel} changed while the merge was planned; try again")
        text = source.text
        for number, col, raw in sorted(edits, reverse=True):  # right to left within a line
            line = split_lines(text)[number - 1].rstrip("\r\n")
            line = (
                line[: col - 1]
                + _relinked(raw, keep_link, drop_block is not None)
                + line[col - 1 + len(raw) :]
            )
            text = replace_line(text, number, line)
        texts[note.rel] = (source, text)
        count += len(edits)
    return count


def _relinked(raw: str, keep_link: str, block: bool) -> str:
    """``[[drop#sub\\|alias]]`` -> ``[[keep#sub\\|alias]]``, embed mark and alias kept."""
    bang = "!" if raw.startswith("!") else ""
    inner = raw[len(bang) + 2 : -2]
    bar = inner.find("|")
    head, tail = (inner, "") if bar == -1 else (inner[:bar], inner[bar:])
    escape = "\\" if head.endswith("\\") else ""  # a link inside a table writes \|
    mark, sub = head.removesuffix("\\").partition("#")[1:]
    target = keep_link if block else keep_link + mark + sub
    return f"{bang}[[{target}{escape}{tail}]]"


def _as_text(vault: Path, relative: str) -> Note | None:
    """A note whose frontmatter does not parse, as plain text; None if it can't be read."""
    try:
        path = resolve_inside(vault, relative)
        text = decode(read_regular(path))
    except (OSError, ParseError, VaultkeeperError):
        return None  # not readable as text: there is no line to edit
    return Note(path, relative, text, None, text, 1)
