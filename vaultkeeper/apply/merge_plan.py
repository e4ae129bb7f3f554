"""What ``apply merge KEEP DROP`` would write, worked out without writing anything.

Two registry blocks, or two live memory files of one project. KEEP gains a
``Merged from DROP`` part holding DROP's text (a memory file's description, label,
status, falsification condition and provenance with it); blocks add their success
counts and keep the later ``last used`` (one line each). Every link to DROP across the
vault is rewritten to KEEP, one line per link. merge.py asks the person and carries the
plan out; the plan's ``digest`` is what the person's yes is bound to.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.apply.decision import Decision
from vaultkeeper.apply.edits import Change, Source, read_source, unified_diff
from vaultkeeper.apply.gate import looks_like_path
from vaultkeeper.apply.lifecycle import load_entry
from vaultkeeper.apply.relink import rewrite_links
from vaultkeeper.apply.trash import block_removal
from vaultkeeper.errors import GateRefused, UsageError, VaultkeeperError
from vaultkeeper.registry import memo
from vaultkeeper.registry.blocks import BlockHead, RegistryBlock, is_counter_line, parse_heads
from vaultkeeper.registry.find import find_block
from vaultkeeper.store.edit import BOM, insert_line_after, replace_counter_value, replace_line
from vaultkeeper.store.links import split_lines
from vaultkeeper.store.model import file_hash, is_memory_path, parse_note
from vaultkeeper.store.vault import resolve_inside


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
    listed: str  # what the saved scan says of the pair, shown to the person
    diff_text: str  # every file's change, DROP's file going when DROP is a file

    @property
    def title(self) -> str:
        """One line for the person: what goes, where it goes, and what the scan said."""
        return (
            f"merge {self.drop.target} into {self.keep.target}: {self.drop.target} leaves the "
            f"vault (to {config.TRASH_DIR}/), {self.links} link(s) to it are rewritten to "
            f"{self.keep.target}. {self.listed}"
        )

    @property
    def digest(self) -> str:
        """What a person's yes is bound to: the whole diff, so any change since is seen."""
        return file_hash(self.diff_text)


def as_bytes(source: Source, text: str) -> bytes:
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


_CARRIED = (
    ("label", "Label"),
    ("status", "Status"),
    ("falsification_condition", "Falsification condition"),
)


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
    # what says how far to trust DROP's lesson, so the merge does not lose it
    for key, shown in _CARRIED:
        value = note.meta.get(key)
        if value not in (None, "") and not isinstance(value, (dict, list)):
            entry_lines.append(f"{shown}: {' '.join(str(value).split())}")
    prov = note.meta.get("provenance")
    if isinstance(prov, list) and prov:
        entry_lines.append("Provenance: " + ", ".join(str(p) for p in prov))
    body = note.body.strip("\r\n")
    head = text if text.endswith("\n") else text + nl
    return head + nl + nl.join(entry_lines) + nl + (nl + body + nl if body else "")


def _named(path: Path, relative: str, text: str, name: str) -> RegistryBlock:
    heads: list[BlockHead] | None = memo.recall(
        path, text
    )  # the registry file as find_block read it, mostly
    if heads is None:
        heads = memo.keep(path, text, parse_heads(path, relative, text))
    found = [h.block() for h in heads if h.name == name]
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
    changes = [Change(s.path, r, s.text, t, s.bom) for r, (s, t) in texts.items()]
    if drop.block is None:
        path = resolve_inside(vault, drop.rel)
        changes.append(Change(path, drop.rel, drop_text, None))
    listed = scan_listing(vault, keep, drop)
    return MergePlan(keep, drop, texts, drop_text, start, links, listed, unified_diff(changes))


def scan_listing(vault: Path, keep: Side, drop: Side) -> str:
    """Whether the saved scan listed KEEP and DROP as possible duplicates. Shown to the
    person, never a yes by itself: a listed pair still waits for their answer."""
    from vaultkeeper.scan.last import last_report

    try:
        report = last_report(vault)
    except (OSError, ValueError, VaultkeeperError):  # no saved scan: it listed nothing
        report = None
    if report is None:
        return "No saved scan to compare with (`vaultkeeper scan`): read both before answering."
    pairs = report.duplicates
    want = {keep.target, drop.target}
    for pair in pairs:
        if {pair.target("a"), pair.target("b")} == want:
            shared = " ".join(pair.shared)
            return (
                f"The scan listed them as possible duplicates (similarity "
                f"{pair.similarity:.2f}, shared: {shared})."
            )
    return "The scan did NOT list these two as possible duplicates: read both before answering yes."
