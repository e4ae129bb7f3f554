"""What a review of one adopted auto-memory folder finds, as of ``today``.

- *promote*: a memory used in ``NATIVE_PROMOTE_SESSIONS`` or more sessions is a
  candidate to become a vault lesson (``vaultkeeper native promote``);
- *prune*: never used and idle past the prune age (by the file's time), a candidate to
  leave the folder with a person's yes (``vaultkeeper native prune``);
- *lost to the caps*: what Claude Code never shows: files past the newest 200 the
  recall reads, an index past 200 lines or 25,000 bytes, files past 4,096 bytes;
- problems: no or an overlong ``description``, index lines pointing at no file, files
  no index line names, credentials (their kind and line, never the value), and possible
  duplicates by the vault's own measure.

Counts come from the vault's ``patterns/native-memory.md`` (counts.py): a memory with
no block there was never used.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.native.counts import block_name, counters
from vaultkeeper.native.files import NativeFolder, read_folder
from vaultkeeper.native.folders import Folder
from vaultkeeper.store import secrets
from vaultkeeper.upkeep.duplicates import Item, find_pairs


@dataclass(frozen=True)
class Finding:
    """One line of the review: what, where (``file`` or ``file:line``), what to do."""

    kind: str  # promote | prune | cap | problem | duplicate | secret
    where: str
    text: str

    def line(self) -> str:
        return f"{self.kind} {self.where} -- {self.text}"


@dataclass(frozen=True)
class FolderReview:
    folder: Folder
    files: int
    used_recently: int  # used within the last 90 days
    never_used: int
    index_lines: int
    index_bytes: int
    findings: tuple[Finding, ...] = field(default_factory=tuple)

    def of(self, kind: str) -> list[Finding]:
        return [f for f in self.findings if f.kind == kind]

    def to_dict(self) -> dict[str, Any]:
        return {
            "project": self.folder.project,
            "path": self.folder.path,
            "files": self.files,
            "used_last_90_days": self.used_recently,
            "never_used": self.never_used,
            "index_lines": self.index_lines,
            "index_bytes": self.index_bytes,
            "caps": {
                "files": config.NATIVE_RECALL_MAX_FILES,
                "index_lines": config.NATIVE_INDEX_MAX_LINES,
                "index_bytes": config.NATIVE_INDEX_MAX_BYTES,
                "file_bytes": config.NATIVE_FILE_SHOWN_BYTES,
            },
            "findings": [f.__dict__ for f in self.findings],
        }


def _caps(read: NativeFolder) -> list[Finding]:
    shown, files = config.NATIVE_FILE_SHOWN_BYTES, config.NATIVE_RECALL_MAX_FILES
    past = f"past the newest {files} files: the recall never reads it; " + (
        "promote, merge or prune older memories"
    )
    out = [Finding("cap", m.file, past) for m in read.memories[files:]]
    for m in read.memories:
        if m.size > shown:
            why = f"{m.size} bytes: the recall shows only the first {shown}; " + (
                "split it or put the point first"
            )
            out.append(Finding("cap", m.file, why))
    index, most = read.index, config.NATIVE_INDEX_MAX_LINES
    if index is not None and len(index.lines) > most:
        why = f"{len(index.lines)} lines: lines past {most} are never loaded; " + (
            "one short line per memory"
        )
        out.append(Finding("cap", f"{config.NATIVE_INDEX_FILE}:{most + 1}", why))
    if index is not None and index.size > config.NATIVE_INDEX_MAX_BYTES:
        why = f"{index.size} bytes: past {config.NATIVE_INDEX_MAX_BYTES} the rest is " + (
            "never loaded; shorten the lines"
        )
        out.append(Finding("cap", config.NATIVE_INDEX_FILE, why))
    return out


def _problems(read: NativeFolder) -> list[Finding]:
    out: list[Finding] = []
    most = config.NATIVE_DESCRIPTION_MAX
    for m in read.memories:
        if m.problem:
            out.append(Finding("problem", m.file, m.problem))
        elif m.description is None:
            out.append(Finding("problem", m.file, "no `description`: recall cannot select it"))
        elif len(m.description) > most:
            why = f"`description` is {len(m.description)} characters (over {most}): one line"
            out.append(Finding("problem", m.file, why))
        for hit in secrets.find(m.text):
            out.append(Finding("secret", f"{m.file}:{hit.line}", f"a {hit.kind}: remove it"))
    if read.index is not None:
        named = {name for _, name in read.index.targets}
        files = {m.file for m in read.memories}
        for number, name in read.index.targets:
            if name not in files:
                where = f"{config.NATIVE_INDEX_FILE}:{number}"
                out.append(
                    Finding("problem", where, f"points at {name}, which is not in the folder")
                )
        for m in read.memories:
            if m.file not in named:
                out.append(Finding("problem", m.file, f"no line in {config.NATIVE_INDEX_FILE}"))
    return out


def _duplicates(read: NativeFolder, project: str) -> list[Finding]:
    group = f"memory:{project}"
    items = [
        Item(group, m.file, m.file, 1, f"{m.name or m.file} {m.description or ''}")
        for m in read.memories
    ]
    return [
        Finding(
            "duplicate",
            f"{p.a_path} ~ {p.b_path}",
            f"similarity {p.similarity:.2f}, both say: {' '.join(p.shared)}",
        )
        for p in find_pairs(items)
    ]


def review(vault: Path, folder: Folder, today: dt.date) -> FolderReview:
    read = read_folder(Path(folder.path))
    if read.refused is not None:  # a symlink now: nothing in it is listed, let alone pruned
        why = f"{read.refused}: adopt the real folder (vaultkeeper native adopt)"
        problem = Finding("problem", "(folder)", why)
        return FolderReview(folder, 0, 0, 0, 0, 0, (problem,))
    counts = counters(vault)
    recent_since = today - dt.timedelta(days=config.NATIVE_RECENT_DAYS)
    idle_since = today - dt.timedelta(days=config.PRUNE_IDLE_DAYS)
    findings: list[Finding] = []
    recent = never = 0
    for m in read.memories:
        count, last, promoted = counts.get(block_name(folder.project, m.file), (None, None, None))
        if count:
            recent += int(last is not None and last >= recent_since)
            if count >= config.NATIVE_PROMOTE_SESSIONS and promoted is None:
                why = (
                    f"used in {count} sessions: make it a vault lesson (vaultkeeper native promote)"
                )
                findings.append(Finding("promote", m.file, why))
            continue
        never += 1
        changed = m.modified or dt.datetime.fromtimestamp(m.mtime, dt.timezone.utc).date()
        if changed < idle_since:
            why = f"never used, unchanged for {(today - changed).days} days"
            findings.append(
                Finding("prune", m.file, f"{why} (vaultkeeper native prune asks a person)")
            )
    findings += _caps(read) + _problems(read) + _duplicates(read, folder.project)
    index = read.index
    return FolderReview(
        folder,
        len(read.memories),
        recent,
        never,
        0 if index is None else len(index.lines),
        0 if index is None else index.size,
        tuple(findings),
    )
