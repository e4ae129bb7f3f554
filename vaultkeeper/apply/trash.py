"""Move deleted content into the vault's ``.trash/`` (Obsidian's own trash), and back.

Each deletion gets ``.trash/<id>/`` holding the content exactly as it was and
``trash.json`` saying where it came from; ``restore`` (vaultkeeper.apply.restore) puts
it back, byte-identical when the file has not changed since, and without losing
anything when it has.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.apply import journal
from vaultkeeper.apply.edits import Change, Source, write
from vaultkeeper.apply.gate import slug
from vaultkeeper.errors import GateRefused, UsageError
from vaultkeeper.index.files import index_keywords
from vaultkeeper.registry.blocks import RegistryBlock
from vaultkeeper.store.fsio import atomic_write, move
from vaultkeeper.store.model import file_hash, split_lines
from vaultkeeper.store.vault import own_dir, rel


@dataclass(frozen=True)
class Removal:
    """A registry block cut from its file, with what it takes to put it back exactly."""

    start: int  # 0-based index of the first removed line
    span: str  # the removed lines (the block and the blank lines that went with it)
    before_line: str | None  # the line just above the cut (None: start of file)
    after_line: str | None  # the line just below it (None: end of file)
    new_text: str


@dataclass(frozen=True)
class Trashed:
    id: str
    kind: str  # "block" | "file"
    source: str  # vault-relative file it came from
    trash: str  # vault-relative folder now holding it
    hash_before: str
    hash_after: str | None  # the source file after a block's removal


def block_removal(text: str, block: RegistryBlock) -> Removal:
    """The block plus the blank lines after it; at the end of a file, the ones before it."""
    lines = split_lines(text)
    start, stop = block.line - 1, block.end_line
    while stop < len(lines) and not lines[stop].strip():
        stop += 1
    if stop == len(lines):
        while start > 0 and not lines[start - 1].strip():
            start -= 1
    return Removal(
        start=start,
        span="".join(lines[start:stop]),
        before_line=lines[start - 1] if start > 0 else None,
        after_line=lines[stop] if stop < len(lines) else None,
        new_text="".join(lines[:start] + lines[stop:]),
    )


def trash_folder(vault: Path, trash_id: str) -> Path:
    if not re.fullmatch(journal.ID_PATTERN, trash_id):
        raise UsageError(f"{trash_id!r}: not a trash id (like 20261201-101500-a1b2c3)")
    return Path(own_dir(vault, config.TRASH_DIR)) / trash_id


def keywords_key(meta: dict[str, Any]) -> tuple[str, str]:
    """The index's key for what a trash record holds: (file, heading casefolded or "")."""
    if meta.get("kind") == "merge" and meta.get("drop_kind") == "file":
        return str(meta["source"]), ""  # a merged file's record names it by its path
    return str(meta["source"]), str(meta.get("name", "")).casefold()


def with_keywords(vault: Path, meta: dict[str, Any]) -> dict[str, Any]:
    """``meta`` plus the keywords a person added on the entry's index line, if any:
    the index drops the line with the entry, and restore puts them back."""
    words = index_keywords(vault).get(keywords_key(meta))
    return meta if words is None else {**meta, "keywords": words}


def trash_block(
    vault: Path, block: RegistryBlock, source: Source, removal: Removal, trash_id: str
) -> Trashed:
    folder = trash_folder(vault, trash_id)
    try:
        content = f"{slug(block.name)}.md"
    except GateRefused:  # a name with no ASCII letter or digit (### \u2603) still goes
        content = "block.md"
    meta: dict[str, object] = {
        "id": trash_id,
        "kind": "block",
        "source": block.rel,
        "name": block.name,
        "content": content,
        "start": removal.start,
        "before_line": removal.before_line,
        "after_line": removal.after_line,
        "hash_before": file_hash(source.text),
        "hash_after": file_hash(removal.new_text),
        "block_hash": block.hash,
    }
    meta = with_keywords(vault, meta)
    # Content and metadata land in .trash/ before the cut, so a crash loses nothing.
    atomic_write(folder / content, removal.span)
    atomic_write(folder / config.TRASH_META_FILE, json.dumps(meta, indent=2) + "\n")
    write(Change(source.path, block.rel, source.text, removal.new_text, source.bom))
    return Trashed(
        trash_id,
        "block",
        block.rel,
        rel(vault, folder),
        file_hash(source.text),
        file_hash(removal.new_text),
    )


def trash_file(vault: Path, path: Path, source: Source, trash_id: str) -> Trashed:
    folder = trash_folder(vault, trash_id)
    relative = rel(vault, path)
    meta = {
        "id": trash_id,
        "kind": "file",
        "source": relative,
        "content": path.name,
        "hash_before": file_hash(source.text),
    }
    meta = with_keywords(vault, meta)
    atomic_write(folder / config.TRASH_META_FILE, json.dumps(meta, indent=2) + "\n")
    move(path, folder / path.name)  # a move: the bytes stay exactly as they were
    return Trashed(trash_id, "file", relative, rel(vault, folder), file_hash(source.text), None)
