"""Links to a merged-away entry rewritten to the entry that stays: one edited line each.

``[[DROP]]``, ``[[path/DROP#Heading|alias]]``, ``![[registry#DROP]]`` (and the same in
frontmatter values) keep their heading, alias, table escape and embed mark; only the
part that names DROP changes. Index files are left to the index's regeneration. A note
whose frontmatter can't be parsed is still read for links, as plain text (its
frontmatter lines too): left alone, its links to DROP would break.

Only the notes that can hold such a link are parsed: a link meaning DROP names it (its
file's name, or the block's, in any case), or leads there from a note whose own path
holds that name (``[[.]]``). So a note of plain ASCII bytes without ``[[`` and that
name, compared ASCII-case-insensitively, holds none; every other note (any non-ASCII
byte: another case folding or normal form might match, a file that cannot be read) is
parsed as before. At 50,000 entries that is a few notes instead of every one.
"""

from __future__ import annotations

import os
import posixpath
import unicodedata
from pathlib import Path

from vaultkeeper.apply.edits import Source, read_source
from vaultkeeper.errors import GateRefused, VaultkeeperError
from vaultkeeper.index.files import is_index_file
from vaultkeeper.store.edit import replace_line
from vaultkeeper.store.links import Link, Resolver, extract_links, split_lines
from vaultkeeper.store.model import Note, ParseError, Problem, decode, load_notes, read_regular
from vaultkeeper.store.vault import resolve_inside, walk_files


def rewrite_links(
    vault: Path, drop_rel: str, drop_block: str | None, keep_link: str,
    texts: dict[str, tuple[Source, str]],
) -> int:  # fmt: skip
    """Every link meaning DROP now means KEEP: one edited line per link (into ``texts``)."""
    files, rels = _markdown(vault)
    wanted = _may_link(files, rels, drop_rel, drop_block)
    notes, problems = load_notes(vault, (Path(files[i]) for i in wanted))
    notes += [n for n in (_as_text(vault, p.path) for p in problems) if n is not None]
    # DROP's own file goes to .trash/: its links go with it
    found = [(n, extract_links(n)) for n in notes if n.rel != drop_rel or drop_block is not None]
    # a note that is not UTF-8 has no line vaultkeeper may edit: one linking to DROP
    # would keep a link to nothing, so the merge is refused (lint names such links too)
    loose = [n for n in (_as_bytes(vault, p) for p in problems) if n is not None]
    resolver = Resolver(_named_as(rels, found + [(n, extract_links(n)) for n, _ in loose]))
    for note, problem in loose:
        if note.rel == drop_rel and drop_block is None:
            continue
        for link in extract_links(note):
            if resolver.resolve(link.target, note.rel).resolved != drop_rel:
                continue
            if drop_block is not None and link.subpath.casefold() != drop_block.casefold():
                continue
            raise GateRefused(
                f"{note.rel}:{link.line} links to what the merge takes away ({link.raw}), "
                f"but the file is {problem.reason}: vaultkeeper cannot rewrite that link; "
                "save the file as UTF-8, then merge"
            )
    count = 0
    for note, links in found:
        edits: list[tuple[int, int, str]] = []
        for link in links:
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


def _markdown(vault: Path) -> tuple[list[str], list[str]]:
    """Every ``.md`` file of the vault (as iter_markdown lists them, as strings) and its
    vault-relative path: a Path each costs more than the walk, at 25,000 files."""
    top = os.fspath(vault)
    cut = len(top) + len(os.sep)
    files: list[str] = []
    rels: list[str] = []
    for full in walk_files(top):
        relative = full[cut:].replace(os.sep, "/")
        if relative.endswith(".md") and len(relative.rpartition("/")[2]) > 3:  # Path.suffix
            files.append(full)
            rels.append(relative)
    return files, rels


def _may_link(
    files: list[str], rels: list[str], drop_rel: str, drop_block: str | None
) -> list[int]:
    """The positions (in walk order) of the notes that may link to DROP: see the module
    docstring. Index files are never among them."""
    name = drop_block if drop_block is not None else drop_rel.rpartition("/")[2]
    if drop_block is None and name.casefold().endswith(".md"):
        name = name[:-3]
    keep = [i for i, r in enumerate(rels) if not is_index_file(r)]
    if not name or not name.isascii():
        return keep  # another case folding or normal form may match: read them all
    word = name.lower().encode("ascii")  # ASCII: casefolded as lower() does
    folded = name.casefold()
    return [i for i in keep if folded in _folded(rels[i]) or _holds(files[i], word)]


def _folded(path: str) -> str:
    """``path`` as link resolution compares it (NFC, casefolded; store.links)."""
    return path.casefold() if path.isascii() else unicodedata.normalize("NFC", path).casefold()


_CHUNK = 1 << 18
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)  # a FIFO is not waited on


def _holds(path: str, word: bytes) -> bool:
    """Whether the note at ``path`` may hold a link naming ``word`` (True when unsure).

    One open and (mostly) one read: a note that is no regular file reads as nothing or
    fails (True: parsed as before, which refuses it, as it did)."""
    try:
        fd = os.open(path, _FLAGS)
    except OSError:
        return True
    try:
        chunks = [os.read(fd, _CHUNK)]
        while len(chunks[-1]) == _CHUNK and len(chunks) < 256:  # a file of 64 MB: unsure
            chunks.append(os.read(fd, _CHUNK))
    except OSError:
        return True
    finally:
        os.close(fd)
    if len(chunks) == 256:
        return True
    raw = b"".join(chunks) if len(chunks) > 1 else chunks[0]
    return not raw.isascii() or (b"[[" in raw and word in raw.lower())


def _named_as(rels: list[str], found: list[tuple[Note, list[Link]]]) -> list[str]:
    """The paths a link of ``found`` may be resolved to: those whose last part (as link
    resolution compares it) is one a link asks for, with or without ``.md`` (in walk
    order: a Resolver of these resolves those links as one of every path does)."""
    names: set[str] = set()
    for note, links in found:
        for link in links:
            text = link.target.replace("\\", "/").strip()
            if text.startswith(("./", "../")):
                joined = posixpath.join(posixpath.dirname(note.rel), text)
                text = posixpath.normpath(joined)
            names.add(_folded(text.lstrip("/")).rsplit("/", 1)[-1])
    names |= {n + ".md" for n in names}
    return [r for r in rels if _folded(r).rsplit("/", 1)[-1] in names]


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


def _as_bytes(vault: Path, problem: Problem) -> tuple[Note, Problem] | None:
    """A note that is not UTF-8, its undecodable bytes read as U+FFFD, to find its
    links; None for any other problem (or no such file)."""
    if not problem.reason.startswith("not UTF-8"):
        return None
    try:
        path = resolve_inside(vault, problem.path)
        text = read_regular(path).decode("utf-8", "replace")
    except (OSError, ParseError, VaultkeeperError):
        return None
    return Note(path, problem.path, text, None, text, 1), problem


def _as_text(vault: Path, relative: str) -> Note | None:
    """A note whose frontmatter does not parse, as plain text; None if it can't be read."""
    try:
        path = resolve_inside(vault, relative)
        text = decode(read_regular(path))
    except (OSError, ParseError, VaultkeeperError):
        return None  # not readable as text: there is no line to edit
    return Note(path, relative, text, None, text, 1)
