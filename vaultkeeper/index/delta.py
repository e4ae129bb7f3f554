"""An apply's index check and update: its own writes carried into the index files entry
by entry, without rendering the whole index when it can.

``check`` runs before the first write, ``reindex`` after the writes, in one hold of the
writer lock. When the stamp (vaultkeeper.index.rows) showed the index up to date before
the first write and every file written since is one this process wrote, the index a
regeneration would write differs from the one on disk only in those files' lines: each
written note's lines are taken out of its index file and its entries' new lines put
where the sort puts them (``Listing``: one index file's marked section as its groups),
keeping their ``-- keywords:``; the root's line of that sub-index follows, and the stamp
is recorded again.

Whatever this can't settle surely gives up before anything is written, and the index is
regenerated: a note that no longer parses, a written index file, a note at the root of a
split index, a written path another file's link could also name (``a.md`` beside
``A.md``, or a registry whose links ``patterns/r#x`` a note ``patterns/r#x.md`` shares),
a sub-index emptied, the split coming or going. Either way the index files end byte for
byte as a regeneration writes them.
"""

from __future__ import annotations

import bisect
import dataclasses
import os
import re
from collections.abc import Collection
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.index import linknames, rows
from vaultkeeper.index.build import IndexResult, build_index
from vaultkeeper.index.files import (
    Keywords,
    bom_of,
    is_index_file,
    read_index,
    subindex_line,
    subindex_name,
    subindex_preamble,
    with_section,
)
from vaultkeeper.index.rows import (
    ROOT_GROUP,
    Entry,
    Stamp,
    State,
    note_entries,
    read_by_index,
    record,
    render_entries,
    row_of,
    sha,
    stat_key,
)
from vaultkeeper.store import fsio
from vaultkeeper.store.fsio import atomic_write
from vaultkeeper.store.links import parse_link
from vaultkeeper.store.model import ParseError, decode, parse_note
from vaultkeeper.store.text import read_regular
from vaultkeeper.store.vault import resolve_inside
from vaultkeeper.store.walk import APART_NAMES, apart


def carry(
    vault: Path, known: Stamp, written: list[str], unlisted: Collection[str] = ()
) -> Stamp | None:
    """Carry ``written`` (paths this process wrote or moved since the stamp was checked)
    into the index files: the stamp now; None when it can't be done surely (nothing
    written then). ``unlisted``: written files whose edit changes nothing the index
    lists (a registry block's counter line added after its heading or another counter
    line, the file as the stamp vouched for it before): only their keys follow."""
    try:
        return _carry(vault, known, written, unlisted)
    except (Unsure, ParseError):
        return None


def _carry(vault: Path, known: Stamp, written: list[str], unlisted: Collection[str]) -> Stamp:
    top = os.fspath(vault)
    state, racy = dict(known.state), dict(known.racy)
    same = set(_relative(top, list(unlisted)))
    paths: list[str] = []  # the walked paths written, added or gone: their rows change
    notes: list[str] = []  # the possible entries among them
    for relative in dict.fromkeys(_relative(top, written)):
        full = os.path.join(top, relative.replace("/", os.sep))
        if os.path.islink(full) or is_index_file(relative):
            raise Unsure(relative)
        if not _walked(top, relative):
            continue
        paths.append(relative)
        if relative in same and relative in state and os.path.isfile(full):
            state[relative] = stat_key(full)  # before the read, as _entries takes it
            racy[relative] = sha(read_regular(full))
            continue
        if os.path.lexists(full):
            state[relative] = None  # keyed below when it is a possible entry
        else:
            state.pop(relative, None)
        if read_by_index(relative, known.templates):
            notes.append(relative)
    if not paths:
        return known
    if not notes and same.issuperset(paths):  # no line changes: only their keys follow
        stamp = dataclasses.replace(known, state=state, racy=racy)
        record(vault, stamp, {p: row_of(p, state[p], None) for p in paths}, paths=paths)
        return stamp
    _check_names(top, paths, notes)
    listings: dict[str, Listing] = {}

    def listing(name: str, folder_top: str) -> Listing:
        if name not in listings:
            if name in known.files:
                text = read_index(vault / name)
                if text is None:
                    raise Unsure(name)
                listings[name] = Listing(name, text)
            elif known.split and name != config.INDEX_FILE:
                listings[name] = Listing(name, subindex_preamble(folder_top), new=True)
            else:
                raise Unsure(name)
            if listings[name].tail and name != config.INDEX_FILE:
                raise Unsure(name)  # a folder named like the root's sub-index heading
        return listings[name]

    tops: set[str] = set()
    for relative in notes:
        folder = relative.rpartition("/")[0]
        folder_top = folder.split("/")[0]
        if known.split and not folder_top:
            raise Unsure(relative)  # the root's own entries sit above its sub-index lines
        name = subindex_name(folder_top) if known.split else config.INDEX_FILE
        entries = _entries(top, relative, state, racy)
        _replace(listing(name, folder_top), relative, folder, entries)
        tops.add(folder_top)
    root = listing(config.INDEX_FILE, "")
    if bool(root.tail) != known.split:
        raise Unsure(config.INDEX_FILE)
    edited = [listings[subindex_name(t)] for t in sorted(tops)] if known.split else [root]
    lines, size = known.unsplit
    for one in edited:
        lines += len(one.added) - len(one.removed)
        size += _size(one.added, root.nl) - _size(one.removed, root.nl)
    if known.split:
        for folder_top in sorted(tops):
            if not listings[subindex_name(folder_top)].count():
                raise Unsure(folder_top)  # its sub-index would be left unused
            root.list_top(folder_top)
    if (lines > config.INDEX_MAX_LINES or size > config.INDEX_MAX_BYTES) != known.split:
        raise Unsure(config.INDEX_FILE)  # the split comes or goes: regenerate
    files = set(known.files)
    for name, one in sorted(listings.items()):
        tail = name == config.INDEX_FILE and known.split  # the root lists sub-indexes
        if name in files and not one.added and not one.removed and not tail:
            continue  # no line of it changed
        text = one.new_text()
        if name in files and text == one.text:
            continue
        paths.append(name)
        target = resolve_inside(vault, name)
        data = bom_of(vault / name) + text.encode("utf-8")
        atomic_write(target, data)
        state[name], racy[name] = stat_key(os.path.join(top, name)), sha(data)
        files.add(name)
    count = known.entries + sum(
        sum(line.startswith("- [[") for line in one.added)
        - sum(line.startswith("- [[") for line in one.removed)
        for one in listings.values()
    )
    stamp = dataclasses.replace(
        known, state=state, files=sorted(files), unsplit=(lines, size), racy=racy, entries=count
    )
    record(vault, stamp, {p: row_of(p, state[p], None) for p in paths if p in state}, paths=paths)
    return stamp


def _relative(top: str, written: list[str]) -> list[str]:
    """The written paths inside the vault, vault-relative (as given, or resolved)."""
    prefixes = {top + os.sep, os.path.realpath(top) + os.sep}
    out = []
    for path in written:
        prefix = next((p for p in prefixes if path.startswith(p)), None)
        if prefix is not None:
            out.append(path[len(prefix) :].replace(os.sep, "/"))
    return out


def _walked(top: str, relative: str) -> bool:
    """Whether the vault's walk (store.walk) lists this new file."""
    parts = relative.split("/")
    if any(p.startswith(".") for p in parts) or (
        len(parts) > 1 and parts[0] in config.EXCLUDED_DIRS
    ):
        return False
    folder = top
    for part in parts[:-1]:
        folder = os.path.join(folder, part)
        if part in APART_NAMES:
            return False
        if os.path.islink(folder) or not os.path.isdir(folder):
            raise Unsure(relative)
        if apart(set(os.listdir(folder))):
            return False
    return True


def _check_names(top: str, paths: list[str], notes: list[str]) -> None:
    """Each written file's link names are its own: no other file in a folder of the same
    folded path shares them (``a.md`` beside ``A.md``, ``a`` or ``a.md.md``), and no other
    file or folder beside a written note is named as its block links are (``r#x.md``)."""
    for relative in paths:
        folder, _, name = relative.rpartition("/")
        mine, exact = linknames.names_of(name), os.path.join(top, folder) if folder else top
        for where in _folders(top, folder):
            for other in os.listdir(where):
                clash = linknames.names_of(other) & mine and (other != name or where != exact)
                if clash and not os.path.isdir(os.path.join(where, other)):
                    raise Unsure(relative)
    for relative in notes:
        folder, _, name = relative.rpartition("/")
        there = os.path.join(top, folder)
        if os.path.isdir(there) and any(n.startswith(name[:-3] + "#") for n in os.listdir(there)):
            raise Unsure(relative)


def _folders(top: str, folder: str) -> list[str]:
    """The folders below ``top`` whose path folds as ``folder`` does; one of them a
    symlink: Unsure (regenerate), never listed (it may lead out of the vault)."""
    found = [top]
    for part in folder.split("/") if folder else []:
        want = linknames.folded(part)
        found = [
            os.path.join(f, n)
            for f in found
            for n in os.listdir(f)
            if linknames.folded(n) == want and os.path.isdir(os.path.join(f, n))
        ]
        if any(os.path.islink(f) for f in found):
            raise Unsure(folder)
    return found


def _entries(top: str, relative: str, state: State, racy: dict[str, str]) -> list[Entry]:
    """The note's entries now ([] when it is gone), its key and digest kept for the stamp."""
    if relative not in state:
        return []
    full = os.path.join(top, relative.replace("/", os.sep))
    key = stat_key(full)  # before the read: a write after it changes the key
    raw = read_regular(full)
    entries = note_entries(parse_note(Path(full), relative, decode(raw)))
    state[relative], racy[relative] = key, sha(raw)
    return entries


def _replace(listing: Listing, relative: str, folder: str, entries: list[Entry]) -> None:
    """The note's old lines out, its entries' lines in, each keeping its keywords."""
    base = relative[:-3]
    keywords: dict[tuple[str, str], str] = {}
    for line in listing.mine(folder, base):
        mark = line.rfind(config.INDEX_KEYWORDS_MARK)
        words = line[mark + len(config.INDEX_KEYWORDS_MARK) :].strip() if mark != -1 else ""
        if not words:
            continue
        target, sub, _ = parse_link(link_of(line))
        text = target.replace("\\", "/").strip()
        if (
            not text
            or text.startswith(("./", "../"))
            or linknames.folded(text.lstrip("/")) not in linknames.names_of(relative)
        ):
            raise Unsure(line)  # the keywords may be another file's
        keywords.setdefault((relative, sub.casefold()), words)
    links = [e.link for e in entries]
    if len(set(links)) != len(links):
        raise Unsure(relative)  # two blocks of one name: their order is the file's
    if any(e.folder != folder for e in entries):
        raise Unsure(relative)
    ordered = sorted(entries, key=lambda e: order(e.link))  # as render_entries sorts them
    lines = render_entries(ordered, keywords)[1:]  # one folder: one heading
    for entry, line in zip(ordered, lines, strict=True):
        if not line.startswith(f"- [[{entry.link}]]"):
            raise Unsure(line)  # a link served otherwise (a credential in a name)
    listing.replace(folder, base, lines)


def _size(lines: list[str], nl: str) -> int:
    return sum(len(line.encode("utf-8")) for line in lines) + len(lines) * len(nl)


SUBINDEXES = "## sub-indexes"
_SUBLINE = re.compile(r"^- \[\[_index-(.*)\]\] - (.*)/$")


class Unsure(Exception):
    """The listing can't be edited surely: regenerate instead."""


def link_of(line: str) -> str:
    """The link of an entry line ``- [[link]]...`` (nothing else may follow ``]]`` but
    `` - description`` or the keywords)."""
    end = line.find("]]", 4)
    if not line.startswith("- [[") or end == -1:
        raise Unsure(line)
    link, rest = line[4:end], line[end + 2 :]
    if "[" in link or "]" in link or (rest and not rest.startswith(" -")):
        raise Unsure(line)
    return link


def order(link: str) -> tuple[str, str]:
    return link.casefold(), link


class Listing:
    """The section of one index file as groups: folder -> its entry lines."""

    def __init__(self, name: str, text: str, *, new: bool = False) -> None:
        self.name, self.text = name, text
        self.nl = "\r\n" if "\r\n" in text else "\n"
        start = text.find(config.INDEX_START)
        end = text.find(config.INDEX_END, start + 1) if start != -1 else -1
        body = text[start + len(config.INDEX_START) : end] if end != -1 else ""
        if not new and (len(body) < len(self.nl) or not body.startswith(self.nl)):
            raise Unsure(name)  # not as a regeneration writes it
        if not new and not body.endswith(self.nl):
            raise Unsure(name)
        lines = body.split(self.nl)[1:-1] if body else []
        self.tail: list[str] = []  # the root's sub-index lines, after SUBINDEXES
        if SUBINDEXES in lines:
            at = lines.index(SUBINDEXES)
            lines, self.tail = lines[:at], lines[at + 1 :]
        self.folders: list[str] = []
        self.groups: dict[str, list[str]] = {}
        # what changed: lines in, lines out (entries and headings; not the tail)
        self.added: list[str] = []
        self.removed: list[str] = []
        for line in lines:  # an entry line's link is read where it is looked at
            if line.startswith("## "):
                folder = "" if line[3:] == ROOT_GROUP else line[3:]
                if folder in self.groups or folder == ROOT_GROUP:
                    raise Unsure(line)
                self.folders.append(folder)
                self.groups[folder] = []
            elif not self.folders or not line.startswith("- [["):
                raise Unsure(line)  # a line served otherwise may be any note's
            else:
                self.groups[self.folders[-1]].append(line)

    def lines(self) -> list[str]:
        out: list[str] = []
        for folder in self.folders:
            out.append(f"## {folder or ROOT_GROUP}")
            out.extend(self.groups[folder])
        if self.tail:
            out.append(SUBINDEXES)
            out.extend(self.tail)
        return out

    def mine(self, folder: str, base: str) -> list[str]:
        """The lines of the note whose links are ``base`` or ``base#...``."""
        return [line for line in self.groups.get(folder, []) if _is_of(line, base)]

    def replace(self, folder: str, base: str, new: list[str]) -> None:
        """The note's lines (see ``mine``) replaced by ``new``, each where the sort puts it."""
        lines = self.groups.get(folder, [])
        at = [i for i, line in enumerate(lines) if _is_of(line, base)]
        old = [lines[i] for i in at]
        if old == new:
            return  # its lines as they were (a registry's status or counter line edited)
        if [link_of(x) for x in old] == [link_of(x) for x in new]:
            for i, line in zip(at, new, strict=True):  # the same links: each in its place
                lines[i] = line
        else:
            for i in reversed(at):
                del lines[i]
            for line in new:
                self._put(folder, line)
        self.removed.extend(old)
        self.added.extend(new)
        if folder in self.groups and not self.groups[folder]:  # gone with its last line
            self.folders.remove(folder)
            del self.groups[folder]
            self.removed.append(f"## {folder or ROOT_GROUP}")

    def _put(self, folder: str, line: str) -> None:
        if folder not in self.groups:
            at = bisect.bisect_left(self.folders, order(folder), key=order)
            self.folders.insert(at, folder)
            self.groups[folder] = []
            self.added.append(f"## {folder or ROOT_GROUP}")
        lines = self.groups[folder]
        want = order(link_of(line))
        at = bisect.bisect_left(lines, want, key=lambda x: order(link_of(x)))
        if at < len(lines) and link_of(lines[at]) == want[1]:
            raise Unsure(line)  # a tie: the regeneration's order is the walk's
        lines.insert(at, line)

    def count(self) -> int:
        return sum(len(lines) for lines in self.groups.values())

    def list_top(self, top: str) -> None:
        """The root's line for the sub-index of ``top``, added where it is missing."""
        tops = []
        for line in self.tail:
            m = _SUBLINE.match(line)
            if m is None or m.group(1) != m.group(2):
                raise Unsure(line)
            tops.append(m.group(1))
        line = subindex_line(top)
        if top in tops:
            self.tail[tops.index(top)] = line
        else:
            at = bisect.bisect_left(tops, order(top), key=order)
            self.tail.insert(at, line)

    def new_text(self) -> str:
        return with_section(self.text, self.lines())


def _is_of(line: str, base: str) -> bool:
    """Whether an entry line is one of the note ``base``'s (its link ``base``,
    ``base#...``); the link read surely where it may be."""
    if not line.startswith(base, 4):
        return False
    link = link_of(line)
    return link == base or link.startswith(base + "#")


# vault -> the stamp a check found true, and where the writes stood then
_HELD: dict[str, tuple[Stamp, fsio.Mark]] = {}


def check(vault: Path) -> None:
    """Raise as ``build_index(check=True)`` would; reads only the walk when it can."""
    key = os.path.abspath(vault)
    _HELD.pop(key, None)
    rows.LAST.pop(key, None)
    found = rows.check(vault)
    if found is None:
        build_index(vault, check=True, stamped=False)
        found = rows.LAST.pop(key, None)
    at = fsio.hold_mark()
    if found is not None and at is not None:
        _HELD[key] = (found, at)


def reindex(
    vault: Path, keep: Keywords | None = None, unlisted: Collection[str] = ()
) -> IndexResult | Stamp:
    """Bring the index up to date after the writes since ``check`` (see the module doc):
    the regeneration's result, or the stamp the writes were carried into."""
    held = _HELD.pop(os.path.abspath(vault), None)
    if held is not None and not keep:
        written = fsio.written_since(held[1])
        carried = None if written is None else carry(vault, held[0], written, unlisted)
        if carried is not None:
            return carried
    return build_index(vault, keep=keep, stamped=False)  # written since: no stamp holds
