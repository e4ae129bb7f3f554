"""``apply merge KEEP DROP``: fold a duplicate into the entry that stays, undoably.

Two registry blocks, or two live memory files of one project. KEEP gains a
``Merged from DROP`` part holding DROP's text; blocks add their success counts and keep
the later ``last used`` (one line each). Every link to DROP across the vault is
rewritten to KEEP, one line per link; DROP goes to ``.trash/<id>/`` with the original
bytes of every file the merge edited, so ``vaultkeeper restore <id>`` puts back all of
it, byte for byte. Never automatic: it takes an evidence receipt and is journaled.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.apply import journal
from vaultkeeper.apply.decision import ACT, SILENCE, Decision, Outcome, outcome_for
from vaultkeeper.apply.edits import Change, Source, check_index, read_source, reindex, unified_diff
from vaultkeeper.apply.gate import check_receipt, looks_like_path, slug
from vaultkeeper.apply.lifecycle import load_entry
from vaultkeeper.apply.relink import rewrite_links
from vaultkeeper.apply.trash import block_removal
from vaultkeeper.apply.unmerge import digest
from vaultkeeper.errors import GateRefused, NotFoundError, UsageError
from vaultkeeper.registry.blocks import RegistryBlock, is_counter_line, parse_blocks
from vaultkeeper.registry.find import find_block
from vaultkeeper.store.edit import BOM, insert_line_after, replace_counter_value, replace_line
from vaultkeeper.store.fsio import atomic_write, note_written, writer_lock
from vaultkeeper.store.links import split_lines
from vaultkeeper.store.model import is_memory_path, parse_note
from vaultkeeper.store.vault import rel, resolve_inside


@dataclass(frozen=True)
class Side:
    """KEEP or DROP: a block's name or a file's path, and where it lives."""

    target: str  # block name, or vault-relative path
    rel: str  # the file holding it
    link: str  # how a rewritten link names it (path without .md; block: path#name)
    block: RegistryBlock | None


@dataclass(frozen=True)
class MergePlan:
    keep: Side
    drop: Side
    texts: dict[str, tuple[Source, str]]  # rel -> (file as read, its new text)
    drop_text: str  # what .trash/ keeps: the block's lines, or the whole file
    removal_start: int
    links: int  # links rewritten


def _bytes(source: Source, text: str) -> bytes:
    return ((BOM if source.bom else "") + text).encode("utf-8")


def _side(vault: Path, target: str) -> Side:
    if looks_like_path(target):
        entry = load_entry(vault, target)
        if not is_memory_path(entry.rel):
            raise GateRefused(f"{entry.rel}: merge takes memory files (projects/P/memory/)")
        if entry.status == "archived":
            raise GateRefused(f"{entry.rel}: archived; merge live entries only")
        return Side(entry.rel, entry.rel, entry.rel.removesuffix(".md"), None)
    block = find_block(vault, target)
    base = block.rel.removesuffix(".md")
    return Side(block.name, block.rel, f"{base}#{block.name}", block)


def _sides(vault: Path, decision: Decision) -> tuple[Side, Side]:
    if not decision.drop:
        raise UsageError("merge needs KEEP and DROP")
    keep, drop = _side(vault, decision.target), _side(vault, decision.drop)
    if (keep.block is None) != (drop.block is None):
        raise GateRefused("merge two registry blocks or two memory files, not one of each")
    if keep.target == drop.target:
        raise GateRefused(f"{keep.target}: KEEP and DROP are the same entry")
    if keep.block is None and keep.rel.split("/")[1] != drop.rel.split("/")[1]:
        raise GateRefused(f"{keep.rel} and {drop.rel}: merge within one project only")
    if drop.block is not None and drop.block.promoted is not None:
        raise GateRefused(
            f"### {drop.target} is promoted to a skill; merge it the other way "
            "(KEEP the promoted one) or retire the skill first"
        )
    return keep, drop


def _block_edits(text: str, keep: RegistryBlock, drop: RegistryBlock) -> str:
    """KEEP's counters (count added, later last used) and the merged part after it."""
    if keep.count is None or drop.count is None or keep.count_line is None:
        bad = keep if keep.count is None else drop
        raise GateRefused(f"### {bad.name}: its success count is unreadable; fix it first")
    lines = split_lines(text)
    part = [line.rstrip("\r\n") for line in split_lines(drop.text)[1:] if not is_counter_line(line)]
    while part and not part[-1].strip():
        part.pop()
    inserted = ["", f"#### {config.MERGED_FROM} {drop.name}", *part]
    at = keep.end_line
    for line in reversed(inserted):
        text = insert_line_after(text, at, line)
    text = replace_line(
        text,
        keep.count_line,
        replace_counter_value(lines[keep.count_line - 1], str(keep.count + drop.count)),
    )
    if (
        drop.last_used is not None
        and keep.last_used_line is not None
        and (keep.last_used is None or drop.last_used > keep.last_used)
    ):
        old = lines[keep.last_used_line - 1]
        text = replace_line(
            text, keep.last_used_line, replace_counter_value(old, drop.last_used.isoformat())
        )
    return text


def _file_part(text: str, drop_rel: str, drop_text: str) -> str:
    """KEEP's file with DROP's description, provenance and body appended as a part."""
    entry_lines = []
    note = parse_note(Path(drop_rel), drop_rel, drop_text)
    name = note.get_str("name") or Path(drop_rel).stem
    nl = "\r\n" if "\r\n" in text else "\n"
    entry_lines.append(f"## {config.MERGED_FROM} {name}")
    entry_lines.append("")
    desc = note.get_str("description")
    if desc:
        entry_lines.append(f"Description: {' '.join(desc.split())}")
    prov = note.meta.get("provenance")
    if isinstance(prov, list) and prov:
        entry_lines.append("Provenance: " + ", ".join(str(p) for p in prov))
    body = note.body.strip("\r\n")
    head = text if text.endswith("\n") else text + nl
    return head + nl + nl.join(entry_lines) + nl + (nl + body + nl if body else "")


def _named(path: Path, relative: str, text: str, name: str) -> RegistryBlock:
    found = [b for b in parse_blocks(path, relative, text) if b.name == name]
    if len(found) != 1:
        raise GateRefused(f"### {name}: not one block in {relative} any more; try again")
    return found[0]


def plan(vault: Path, decision: Decision) -> MergePlan:
    """Read both sides fresh and work out every file's new text; writes nothing.

    Links are rewritten first (line counts stay), then DROP's block is cut and KEEP's
    counters and merged part are edited on top, so every edit sees the text it changes.
    """
    keep, drop = _sides(vault, decision)
    texts: dict[str, tuple[Source, str]] = {}
    drop_block = drop.target if drop.block is not None else None
    links = rewrite_links(vault, drop.rel, drop_block, keep.link, texts)

    def current(relative: str) -> tuple[Source, str]:
        if relative in texts:
            return texts[relative]
        source = read_source(resolve_inside(vault, relative), relative)
        return source, source.text

    start = 0
    if drop.block is not None:
        d_source, d_text = current(drop.rel)
        d_block = _named(d_source.path, drop.rel, d_text, drop.target)
        removal = block_removal(d_text, d_block)
        drop_text, start = removal.span, removal.start
        if keep.rel == drop.rel:  # one file: edit KEEP in the text without DROP
            k_block = _named(d_source.path, keep.rel, removal.new_text, keep.target)
            texts[drop.rel] = (d_source, _block_edits(removal.new_text, k_block, d_block))
        else:
            texts[drop.rel] = (d_source, removal.new_text)
            k_source, k_text = current(keep.rel)
            k_block = _named(k_source.path, keep.rel, k_text, keep.target)
            texts[keep.rel] = (k_source, _block_edits(k_text, k_block, d_block))
    else:
        drop_text = read_source(resolve_inside(vault, drop.rel), drop.rel).text
        k_source, k_text = current(keep.rel)
        texts[keep.rel] = (k_source, _file_part(k_text, drop.rel, drop_text))
    return MergePlan(keep, drop, texts, drop_text, start, links)


def merge(
    vault: Path, decision: Decision, now: dt.datetime, *, dry_run: bool = False, **_: object
) -> Outcome:
    """Gate, plan and carry out one merge (see the module docstring)."""
    receipt = check_receipt(vault, decision.evidence)
    try:
        with writer_lock(vault) if not dry_run else _nolock():
            found = plan(vault, decision)
            decision = replace(decision, target=found.keep.target, drop=found.drop.target)
            changes = [Change(s.path, r, s.text, t, s.bom) for r, (s, t) in found.texts.items()]
            if found.drop.block is None:
                path = resolve_inside(vault, found.drop.rel)
                changes.append(Change(path, found.drop.rel, found.drop_text, None))
            what = (
                f"merged {found.drop.target} into {found.keep.target}; "
                f"{found.links} link(s) rewritten"
            )
            if dry_run:
                return outcome_for(
                    decision, ACT, what, diff=unified_diff(changes), dry_run=True,
                    extra={"drop": found.drop.target},
                )  # fmt: skip
            check_index(vault)
            trash_id = journal.new_id(now)
            where = _carry_out(vault, found, trash_id)
            return reindex(vault, outcome_for(
                decision, ACT, f"{what}; {found.drop.target} moved to {where}/ "
                f"(undo: `vaultkeeper restore {trash_id}`)",
                evidence=receipt, id=trash_id,
                extra={"drop": found.drop.target, "trash": where, "links": found.links,
                       "files": sorted(found.texts), "source": found.drop.rel},
            ))  # fmt: skip
    except NotFoundError:
        done = journal.last_act(
            vault, "merge", decision.target, lambda r: r.get("drop") == decision.drop
        )
        if done is None:
            raise
        return outcome_for(
            decision, SILENCE, f"already applied: merged on {done.get('ts')}", id=done.get("id")
        )


class _nolock:  # noqa: N801 - a with-statement that holds nothing (a dry run writes nothing)
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _carry_out(vault: Path, found: MergePlan, trash_id: str) -> str:
    """Everything to .trash/ first (so a crash loses nothing), then the edits, then DROP."""
    folder = vault / config.TRASH_DIR / trash_id
    content = f"{slug(Path(found.drop.target).stem)}.md"
    edits: list[dict[str, Any]] = []
    for n, (relative, (source, text)) in enumerate(sorted(found.texts.items())):
        original = f"orig-{n}.bin"
        atomic_write(folder / original, _bytes(source, source.text))
        after = _bytes(source, text)
        edits.append({"path": relative, "original": original, "after": digest(after)})
    meta = {
        "id": trash_id,
        "kind": "merge",
        "drop_kind": "block" if found.drop.block is not None else "file",
        "source": found.drop.rel,
        "name": found.drop.target,
        "keep": found.keep.target,
        "content": content,
        "start": found.removal_start,
        "edits": edits,
    }
    if found.drop.block is not None:
        atomic_write(folder / content, found.drop_text)
    atomic_write(folder / config.TRASH_META_FILE, json.dumps(meta, indent=2) + "\n")
    for relative, (source, text) in found.texts.items():
        atomic_write(resolve_inside(vault, relative), _bytes(source, text))
    if found.drop.block is None:
        dropped = resolve_inside(vault, found.drop.rel)
        os.replace(dropped, folder / content)
        note_written(dropped)  # its row in the recall table goes (store.fsio.writer_lock)
    return rel(vault, folder)
