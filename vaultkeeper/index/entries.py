"""What the index lists: one entry a note, or a registry block, and its line.

Each description
is served as to an agent (credentials masked, control characters stripped: agents
load the index first); a superseded entry's line starts ``(superseded by [[newer]])``;
a file that cannot be read is still listed, without a description.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from vaultkeeper import config
from vaultkeeper.index.files import ENTRY_LINE, is_index_file, section_lines
from vaultkeeper.registry.blocks import RegistryBlock, parsed_heads
from vaultkeeper.store.links import Resolver, parse_link
from vaultkeeper.store.model import Note, ParseError, Problem, read_note
from vaultkeeper.store.secrets import needs_serving, served
from vaultkeeper.store.text import Unreadable
from vaultkeeper.store.vault import rel
from vaultkeeper.upkeep.supersession import superseded_by


@dataclass(frozen=True)
class Entry:
    link: str  # link target as written: vault path without .md, maybe #heading
    folder: str  # vault-relative folder, "" at the root
    description: str
    key: tuple[str, str]  # (file, heading) the keywords are remembered by
    # the line as the index already held it, kept byte for byte: its file could not be
    # read now (an undecodable byte), so its description and keywords stay as they were
    kept: str | None = None


Key = tuple[int, int, int, int, int]  # a file's stat: device, inode, size, mtime_ns, ctime_ns


class Cache(Protocol):
    """What collect_entries asks of vaultkeeper.index.rows.Rows."""

    def key(self, path: str) -> Key | None: ...
    def get(self, rel: str, key: Key | None) -> list[Entry] | None: ...
    def keep(self, rel: str, key: Key | None, entries: list[Entry], text: str) -> None: ...


_COUNTER = re.compile(r"^[ \t]*[-*]?[ \t]*\*\*[^*]+:\*\*")
ROOT_GROUP = "(root)"


_LINKS: dict[str, str] = {}  # render_entries' links as served: a split renders each twice


def _link_line(link: str) -> str:
    line = _LINKS.get(link)
    if line is None:
        if len(_LINKS) > 500_000:  # a long-lived process (the MCP server) stays bounded
            _LINKS.clear()
        line = _LINKS[link] = _one_line(link)
    return line


def _one_line(text: object) -> str:
    line = str(text) if text is not None else ""
    if needs_serving(line):  # agents load the index first: no credential, no escape;
        line = served(line)  # before split(): a CR or a NEL would cut a token in two
    line = " ".join(line.split())
    for marker in (config.INDEX_START, config.INDEX_END):
        # a marker inside a description would cut the section short: Obsidian still
        # shows "&lt;!--" as "<!--"
        line = line.replace(marker, "&lt;" + marker[1:])
    return line


def _block_description(text: str) -> str:
    words: list[str] = []
    for line in text.splitlines()[1:]:
        if not line.strip() or _COUNTER.match(line):
            if words:
                break
            continue
        words.append(line.strip())
    return _one_line(" ".join(words))


def note_entries(note: Note) -> list[Entry]:
    """What the index lists of one readable file: its registry blocks, else the note."""
    if is_index_file(note.rel):
        return []
    folder = note.rel.rpartition("/")[0]
    blocks = _heads(note) if folder.split("/")[0] == config.PATTERNS_DIR else []
    base = note.rel.removesuffix(".md")
    if blocks:
        return [
            Entry(
                f"{base}#{b.name}",
                folder,
                _block_description(b.text),
                (note.rel, b.name.casefold()),
            )
            for b in blocks
        ]
    desc = _one_line(note.meta.get("description"))
    newer = superseded_by(note)
    if newer is not None:  # kept in the index, marked: never read as current truth
        desc = _one_line(f"(superseded by [[{newer}]]) {desc}").rstrip()
    return [Entry(base, folder, desc, (note.rel, ""))]


def _heads(note: Note) -> list[RegistryBlock]:
    """A registry file's blocks (as parse_blocks finds them); parsed once for a text
    (an apply re-reads the file it wrote)."""
    return parsed_heads(note.path, note.rel, note.text)


def collect_entries(
    vault: Path,
    md_files: Iterable[str | Path],
    cache: Cache | None = None,
    held: Callable[[], Mapping[str, list[Entry]]] | None = None,
) -> tuple[list[Entry], list[Problem], list[Problem]]:
    """Every entry of ``md_files``, then each problem file's; the problems, and of
    them the files whose text could not be read at all (an undecodable byte, an I/O
    error). Such a file keeps the lines the index holds for it now (``held()``, by
    file: asked only then), byte for byte: its blocks' lines and a person's keywords
    are not the index's to drop. Any other problem file (broken frontmatter) is listed
    without a description.

    ``cache`` (vaultkeeper.index.rows): a file whose stat is unchanged is not read.
    """
    entries: list[Entry] = []
    problems: list[Problem] = []
    unreadable: list[Problem] = []
    prefix = os.fspath(vault) + os.sep
    for path in md_files:
        full = os.fspath(path)
        name = full[len(prefix) :].replace(os.sep, "/") if full.startswith(prefix) else None
        if is_index_file(rel(vault, Path(path)) if name is None else name):
            continue  # no entry, and its problems are never reported: not worth a read
        if cache is None or name is None:
            key, kept = None, None
        else:
            key = cache.key(full)
            kept = cache.get(name, key)
        if kept is not None:
            entries.extend(kept)
            continue
        try:
            note = read_note(vault, Path(path))
        except ParseError as exc:
            problem = Problem(rel(vault, Path(path)), exc.line, exc.reason)
            (unreadable if isinstance(exc, Unreadable) else problems).append(problem)
            continue
        found = note_entries(note)
        if cache is not None and name == note.rel:
            cache.keep(name, key, found, note.text)
        entries.extend(found)
    held_now = held() if held is not None and unreadable else {}
    for problem in unreadable:
        lines = held_now.get(problem.path)
        if lines:  # a registry's every block line, a person's keywords: kept
            entries.extend(lines)
        else:
            problems.append(problem)  # listed without a description, as below
    for problem in problems:  # unreadable now, but still an entry of the vault
        if not is_index_file(problem.path):
            folder = problem.path.rpartition("/")[0]
            entries.append(Entry(problem.path.removesuffix(".md"), folder, "", (problem.path, "")))
    problems += [p for p in unreadable if p not in problems]
    problems.sort(key=lambda p: p.path)
    return entries, problems, unreadable


def held_lines(current: Mapping[str, str | None], resolver: Resolver) -> dict[str, list[Entry]]:
    """The entry lines the index files hold now, by the file each links to: what an
    unreadable file keeps (``collect_entries``)."""
    out: dict[str, list[Entry]] = {}
    for name, text in sorted(current.items()):
        for line in section_lines(text):
            m = ENTRY_LINE.match(line)
            if not m:
                continue
            target, sub, _ = parse_link(m.group(1))
            file = resolver.resolve(target, name).resolved
            if file is None:
                continue
            entry = Entry(m.group(1), file.rpartition("/")[0], "", (file, sub.casefold()), line)
            out.setdefault(file, []).append(entry)
    return out


def render_entries(entries: list[Entry], keywords: dict[tuple[str, str], str]) -> list[str]:
    lines: list[str] = []
    folder: str | None = None
    for entry in sorted(
        entries, key=lambda e: (e.folder.casefold(), e.folder, e.link.casefold(), e.link)
    ):
        if entry.folder != folder:
            folder = entry.folder
            lines.append(f"## {folder or ROOT_GROUP}")
        if entry.kept is not None:
            lines.append(entry.kept)
            continue
        link = _link_line(entry.link)
        if link != entry.link:  # a credential (or a control character) in a name or heading
            line = f"- {link} (its name holds a credential or a control character: rename it)"
        else:
            line = f"- [[{entry.link}]]"
        if entry.description:
            line += f" - {entry.description}"
        if entry.key in keywords:
            line += f"{config.INDEX_KEYWORDS_MARK}{keywords[entry.key]}"
        lines.append(line)
    return lines
