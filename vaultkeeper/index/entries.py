"""What the index lists: one entry a note, or a registry block, and its line.

Split from vaultkeeper.index.build (which re-exports the public names). Each description
is served as to an agent (credentials masked, control characters stripped: agents
load the index first); a superseded entry's line starts ``(superseded by [[newer]])``;
a file that cannot be read is still listed, without a description.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.index.files import is_index_file
from vaultkeeper.registry.blocks import RegistryBlock, parse_blocks
from vaultkeeper.store.model import Problem, load_notes
from vaultkeeper.store.secrets import needs_serving, served
from vaultkeeper.upkeep.supersession import superseded_by

_COUNTER = re.compile(r"^[ \t]*[-*]?[ \t]*\*\*[^*]+:\*\*")
ROOT_GROUP = "(root)"


@dataclass(frozen=True)
class Entry:
    link: str  # link target as written: vault path without .md, maybe #heading
    folder: str  # vault-relative folder, "" at the root
    description: str
    key: tuple[str, str]  # (file, heading) the keywords are remembered by


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


def _block_description(block: RegistryBlock) -> str:
    words: list[str] = []
    for line in block.text.splitlines()[1:]:
        if not line.strip() or _COUNTER.match(line):
            if words:
                break
            continue
        words.append(line.strip())
    return _one_line(" ".join(words))


def collect_entries(vault: Path, md_files: Iterable[Path]) -> tuple[list[Entry], list[Problem]]:
    notes, problems = load_notes(vault, md_files)
    entries: list[Entry] = []
    for note in notes:
        if is_index_file(note.rel):
            continue
        folder = note.rel.rpartition("/")[0]
        blocks = (
            parse_blocks(note.path, note.rel, note.text)
            if folder.split("/")[0] == config.PATTERNS_DIR
            else []
        )
        base = note.rel.removesuffix(".md")
        if blocks:
            entries.extend(
                Entry(
                    f"{base}#{b.name}", folder, _block_description(b), (note.rel, b.name.casefold())
                )
                for b in blocks
            )
        else:
            desc = _one_line(note.meta.get("description"))
            newer = superseded_by(note)
            if newer is not None:  # kept in the index, marked: never read as current truth
                desc = _one_line(f"(superseded by [[{newer}]]) {desc}").rstrip()
            entries.append(Entry(base, folder, desc, (note.rel, "")))
    for problem in problems:  # unreadable now, but still an entry of the vault
        if not is_index_file(problem.path):
            folder = problem.path.rpartition("/")[0]
            entries.append(Entry(problem.path.removesuffix(".md"), folder, "", (problem.path, "")))
    return entries, problems


def render_entries(entries: list[Entry], keywords: dict[tuple[str, str], str]) -> list[str]:
    lines: list[str] = []
    folder: str | None = None
    for entry in sorted(
        entries, key=lambda e: (e.folder.casefold(), e.folder, e.link.casefold(), e.link)
    ):
        if entry.folder != folder:
            folder = entry.folder
            lines.append(f"## {folder or ROOT_GROUP}")
        link = _one_line(entry.link)
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
