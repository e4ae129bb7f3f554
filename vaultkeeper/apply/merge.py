"""``apply merge KEEP DROP``: fold a duplicate into the entry that stays, on a person's yes.

Merging takes DROP out of the vault, so it is a deletion and is gated as ``apply prune``
is (prune.py): with a terminal the caller passes ``confirm`` and only a ``y``/``yes``
typed there merges; without one (``confirm=None``: an agent's shell, a hook, a batch
piped in) the request is queued for ``vaultkeeper review`` and the outcome is ``ask``.
No flag, environment variable or batch field stands in for the person. The yes is bound
to the exact diff the person was shown (MergePlan.digest): if anything in it
changed before the write, nothing is merged. That the scan listed the pair as possible
duplicates is shown to the person; it is never a yes by itself.

What it writes (``plan``, worked out without writing anything): KEEP gains DROP's
text, counts add up, links follow. DROP goes to ``.trash/<id>/`` with the original and
merged bytes of every file edited, so ``vaultkeeper restore <id>`` takes the merge back
off (``unmerge``), even after a later ``use`` of KEEP: a file changed since gets exactly
the merge's lines taken off by a line-wise three-way merge (``take_off``). Journaled,
and it takes an evidence receipt.

Links to DROP are rewritten to KEEP, one edited line each (``rewrite_links``):
``[[DROP]]``, ``[[path/DROP#Heading|alias]]``, ``![[registry#DROP]]`` (frontmatter values
too) keep their heading, alias, table escape and embed mark. Index files are left to the
index's regeneration; a note whose frontmatter can't be parsed is read as plain text. Only
the notes with a link naming DROP's file are parsed: what each note's links name is kept
in the store by its stat key (``link_names``), so a merge stats every note and reads only
those changed since (a row is used only while its file's key matches).
"""

from __future__ import annotations

import datetime as dt
import os
import posixpath
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.apply import journal, trash
from vaultkeeper.apply.decision import ACT, Decision, Outcome, outcome_for
from vaultkeeper.apply.edits import Change, Source, check_index, read_source, reindex, unified_diff
from vaultkeeper.apply.gate import check_receipt, looks_like_path, slug
from vaultkeeper.apply.lifecycle import load_entry
from vaultkeeper.apply.prune import Confirm, ask_first, planned
from vaultkeeper.apply.trash import block_removal
from vaultkeeper.errors import GateRefused, UsageError, VaultkeeperError
from vaultkeeper.index import linknames, rows
from vaultkeeper.index.files import is_index_file
from vaultkeeper.registry.blocks import (
    RegistryBlock,
    is_counter_line,
    named_blocks,
    parsed_heads,
    pick_block,
)
from vaultkeeper.store import db
from vaultkeeper.store.edit import BOM, insert_line_after, replace_counter_value, replace_line
from vaultkeeper.store.fsio import atomic_write, move, writer_lock
from vaultkeeper.store.links import Link, Resolver, extract_links, split_lines
from vaultkeeper.store.model import (
    Note,
    ParseError,
    Problem,
    decode,
    file_hash,
    load_notes,
    parse_note,
    read_regular,
)
from vaultkeeper.store.vault import is_memory_path, own_dir, resolve_inside, walk_files

NEEDS_PERSON = "merging takes {drop} out of the vault: it needs a person's yes at a terminal"


def merge(
    vault: Path,
    decision: Decision,
    now: dt.datetime,
    *,
    dry_run: bool = False,
    confirm: Confirm | None = None,
    **_: object,
) -> Outcome:
    """Gate, plan, ask, and carry out one merge (see the module docstring)."""
    receipt = check_receipt(vault, decision.evidence)
    match = lambda r: r.get("drop") == decision.drop  # noqa: E731
    found = planned(vault, decision, plan, "merged", match)  # carry_out plans again, locked
    if isinstance(found, Outcome):
        return found
    decision = replace(decision, target=found.keep.target, drop=found.drop.target)
    extra = {"drop": found.drop.target}
    if dry_run:
        what = f"merge {found.drop.target} into {found.keep.target}; {found.links} link(s)"
        return outcome_for(
            decision, ACT, f"{what} rewritten", diff=found.diff_text, dry_run=True, extra=extra
        )
    own_dir(vault, config.TRASH_DIR)  # refused before anyone is asked, not after a yes
    seen = found.digest
    why = "a person answered yes"
    yes = lambda via: carry_out(vault, decision, now, seen, why, via, receipt)  # noqa: E731
    asked = NEEDS_PERSON.format(drop=found.drop.target)
    return ask_first(vault, decision, now, found, seen, confirm, yes, asked, "kept both", extra)


def carry_out(
    vault: Path,
    decision: Decision,
    now: dt.datetime,
    expected: str,
    why: str,
    via: str = config.CONFIRMED_VIA_TERMINAL,
    receipt: str | None = None,
) -> Outcome:
    """Merge after a person's yes, if the diff is still exactly what they were shown."""
    receipt = receipt if receipt is not None else check_receipt(vault, decision.evidence)
    with writer_lock(vault):
        found = plan(vault, decision)
        if found.digest != expected:
            raise GateRefused(
                f"{found.keep.target} / {found.drop.target} changed after the merge was "
                "shown; nothing merged, decide again"
            )
        check_index(vault)
        trash_id = journal.new_id(now)
        where = _carry_out(vault, found, trash_id)
        journal.close_for(vault, found.drop.target, "yes", now)  # every ask about DROP answered
        for ask in journal.pending(vault):  # and this merge, asked twice or from elsewhere
            if (ask.action, ask.target, ask.drop) == (
                "merge",
                found.keep.target,
                found.drop.target,
            ):
                journal.close(vault, ask.id, "yes", now)
        return reindex(vault, outcome_for(
            replace(decision, target=found.keep.target, drop=found.drop.target), ACT,
            f"{why}: merged {found.drop.target} into {found.keep.target}; {found.links} "
            f"link(s) rewritten; {found.drop.target} moved to {where}/ "
            f"(undo: `vaultkeeper restore {trash_id}`)",
            evidence=receipt, id=trash_id,
            extra={"drop": found.drop.target, "trash": where, "links": found.links,
                   "files": sorted(found.texts), "source": found.drop.rel,
                   "confirmed_via": via},
        ))  # fmt: skip


def _carry_out(vault: Path, found: MergePlan, trash_id: str) -> str:
    """Everything to .trash/ first (so a crash loses nothing), then the edits, then DROP."""
    content = f"{slug(Path(found.drop.target).stem)}.md"
    files: dict[str, Any] = {}
    edits: list[dict[str, Any]] = []
    for n, (relative, (source, text)) in enumerate(sorted(found.texts.items())):
        after = as_bytes(source, text)
        # what the merge wrote too, so undo can take exactly that off a file changed since
        files.update({f"orig-{n}.bin": as_bytes(source, source.text), f"after-{n}.bin": after})
        edits.append(
            {"path": relative, "original": f"orig-{n}.bin", "merged": f"after-{n}.bin",
             "after": rows.sha(after)}
        )  # fmt: skip
    if found.drop.block is not None:
        files[content] = found.drop_text
    meta = {
        "kind": "merge",
        "drop_kind": "block" if found.drop.block is not None else "file",
        "source": found.drop.rel,
        "name": found.drop.target,
        "keep": found.keep.target,
        "content": content,
        "start": found.removal_start,
        "edits": edits,
    }
    where = trash.put_away(vault, trash_id, meta, files)  # DROP's index keywords kept too
    for relative, (source, text) in found.texts.items():
        atomic_write(resolve_inside(vault, relative), as_bytes(source, text))
    if found.drop.block is None:
        dropped = resolve_inside(vault, found.drop.rel)
        move(dropped, vault / where / content)  # counted; its row in the recall table goes (fsio)
    return where


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
    diff_text: str  # every file's change, DROP's file going when DROP is a file
    vault: Path

    @property
    def title(self) -> str:
        """One line for the person: what goes, where it goes, and what the scan said
        (read only here: a merge queued without a person shows nobody the title)."""
        return (
            f"merge {self.drop.target} into {self.keep.target}: {self.drop.target} leaves the "
            f"vault (to {config.TRASH_DIR}/), {self.links} link(s) to it are rewritten to "
            f"{self.keep.target}. {scan_listing(self.vault, self.keep, self.drop)}"
        )

    @property
    def digest(self) -> str:
        """What a person's yes is bound to: the whole diff, so any change since is seen."""
        return file_hash(self.diff_text)


def as_bytes(source: Source, text: str) -> bytes:
    return ((BOM if source.bom else "") + text).encode("utf-8")


def _side(vault: Path, target: str, named: tuple[list[RegistryBlock], list[Problem]]) -> Side:
    if looks_like_path(target):
        entry = load_entry(vault, target)
        if not is_memory_path(entry.rel):
            raise GateRefused(f"{entry.rel}: merge takes memory files (projects/P/memory/)")
        if entry.status == "archived":
            raise GateRefused(f"{entry.rel}: archived; merge live entries only")
        return Side(entry.rel, entry.rel, entry.rel.removesuffix(".md"), None)
    block = pick_block(target, *named)
    base = block.rel.removesuffix(".md")
    return Side(block.name, block.rel, f"{base}#{block.name}", block)


def _sides(vault: Path, decision: Decision) -> tuple[Side, Side]:
    if not decision.drop:
        raise UsageError("merge needs KEEP and DROP")
    names = [t for t in (decision.target, decision.drop) if not looks_like_path(t)]
    named = named_blocks(vault, names)  # the registry read once for both
    keep, drop = _side(vault, decision.target, named), _side(vault, decision.drop, named)
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
    heads = parsed_heads(path, relative, text)  # the registry file as find_block read it
    found = [h for h in heads if h.name == name]
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
    return MergePlan(keep, drop, texts, drop_text, start, links, unified_diff(changes), vault)


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


def rewrite_links(
    vault: Path, drop_rel: str, drop_block: str | None, keep_link: str,
    texts: dict[str, tuple[Source, str]],
) -> int:  # fmt: skip
    """Every link meaning DROP now means KEEP: one edited line per link (into ``texts``)."""
    files, rels = _markdown(vault)
    # a link can mean DROP only if it names DROP's file (or is ``[[#sub]]`` in it)
    wants = linknames.names_of(drop_rel.rsplit("/", 1)[-1])
    sub = "" if drop_block is None else drop_block.casefold()
    asked = [f"\n{n}\t{sub}\n" if drop_block is not None else f"\n{n}\t" for n in wants]
    wanted = _may_link(vault, files, rels, drop_rel, asked)
    notes, problems = load_notes(vault, (Path(files[i]) for i in wanted))
    notes += [n for n in (_plain(vault, p.path) for p in problems) if n is not None]
    # DROP's own file goes to .trash/: its links go with it
    found = [(n, _naming(n, wants)) for n in notes if n.rel != drop_rel or drop_block is not None]
    # a note that is not UTF-8 has no line vaultkeeper may edit: one linking to DROP
    # would keep a link to nothing, so the merge is refused (lint names such links too)
    loose = [
        (n, p)
        for p in problems
        if p.reason.startswith("not UTF-8") and (n := _plain(vault, p.path, True)) is not None
    ]
    resolver = _resolver(rels, wants)

    def means_drop(note: Note, link: Link) -> bool:
        resolved = resolver.resolve(link.target, note.rel).resolved == drop_rel
        return resolved and (drop_block is None or link.subpath.casefold() == sub)

    for note, problem in loose:
        if note.rel == drop_rel and drop_block is None:
            continue
        for link in _naming(note, wants):
            if means_drop(note, link):
                raise GateRefused(
                    f"{note.rel}:{link.line} links to what the merge takes away ({link.raw}), "
                    f"but the file is {problem.reason}: vaultkeeper cannot rewrite that link; "
                    "save the file as UTF-8, then merge"
                )
    count = 0
    for note, links in found:
        edits = [(k.line, k.col, k.raw) for k in links if means_drop(note, k)]
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
    """Every ``.md`` file of the vault (as iter_markdown lists them) and its path."""
    walked = list(walk_files(os.fspath(vault)))
    found = [
        (f, r) for f, r in zip(walked, rows.rels_of(vault, walked), strict=True) if rows.is_md(r)
    ]
    return [f for f, _ in found], [r for _, r in found]


def _may_link(
    vault: Path, files: list[str], rels: list[str], drop_rel: str, asked: list[str]
) -> list[int]:
    """The positions (in walk order) of the notes that may link to DROP: those whose
    ``[[...]]`` ask for one of ``asked`` (see index.linknames.link_names), DROP's own
    file, and any note that can't be read (parsed as before, which refuses or skips it).
    Index files are never among them. Each note's names are kept in the store by its stat key
    (``link_names``): a note is read only when it changed since."""
    keys, hits = linknames.held_names(vault, asked)
    known: dict[str, str] = {}
    limit = time.time_ns() - db.RACY_NS
    out: list[int] = []
    fresh: list[tuple[str, str, str]] = []
    for i, (full, relative) in enumerate(zip(files, rels, strict=True)):
        try:
            key, settled = db.stat_key(os.stat(full), limit)
        except OSError:
            out.append(i)
            continue
        if keys.get(relative) == key:
            if relative in hits or relative == drop_rel:
                out.append(i)
            continue
        if is_index_file(relative):
            continue
        names = linknames.read_names(full, relative, known)
        if names is None:
            out.append(i)
            continue
        if settled:
            fresh.append((relative, key, names))
        if relative == drop_rel or any(a in names for a in asked):
            out.append(i)
    linknames.keep_names(vault, fresh, keys.keys() - set(rels))
    return out


def _resolver(rels: list[str], wants: set[str]) -> Resolver:
    """A Resolver of every file a link naming one of ``wants`` may mean: it resolves those
    links as one of every path does."""
    named = wants | {n + ".md" for n in wants}
    return Resolver(r for r in rels if linknames.folded(r).rsplit("/", 1)[-1] in named)


def _naming(note: Note, wants: set[str]) -> list[Link]:
    """The note's links that name a file called one of ``wants`` or point into the note
    itself (``[[#sub]]``): the only ones that may mean DROP."""
    here = posixpath.dirname(note.rel)
    return [
        k for k in extract_links(note) if not k.target or linknames.name_of(k.target, here) in wants
    ]


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


def _plain(vault: Path, relative: str, lenient: bool = False) -> Note | None:
    """A note as plain text, its frontmatter not parsed (a note whose frontmatter does not
    parse); ``lenient``: undecodable bytes read as U+FFFD, to find the links of a note that
    is not UTF-8. None if it can't be read: there is no line to edit."""
    try:
        path = resolve_inside(vault, relative)
        raw = read_regular(path)
        text = raw.decode("utf-8", "replace") if lenient else decode(raw)
    except (OSError, ParseError, VaultkeeperError):
        return None
    return Note(path, relative, text, None, text, 1)
