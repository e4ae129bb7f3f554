"""One index file's marked section, read back into its groups and edited line by line.

vaultkeeper.index.delta carries an apply's writes into the index without rendering it
all again; this is its view of one file's list: ``## folder`` groups in the order
render_entries writes them (folder casefolded, then as written), each one's entry lines
in link order (casefolded, then as written). A file's lines are taken out by their
link (``[[path]]`` or ``[[path#block]]``) and its new lines put where the sort puts
them, so the list reads as a regeneration writes it. Anything this reading can't
place surely (a line that is not ``- [[link]]...``, a link with brackets, a tie) makes
it give up: the caller then regenerates the index as before.
"""

from __future__ import annotations

import bisect
import re

from vaultkeeper import config
from vaultkeeper.index.entries import ROOT_GROUP
from vaultkeeper.index.files import subindex_line, with_section

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
