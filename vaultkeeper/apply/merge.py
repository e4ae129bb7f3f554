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
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import shutil
from dataclasses import dataclass, replace
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.apply import journal
from vaultkeeper.apply.decision import ACT, ASK, KEPT, SILENCE, Decision, Outcome, outcome_for
from vaultkeeper.apply.edits import Change, Source, check_index, read_source, reindex, unified_diff
from vaultkeeper.apply.gate import check_receipt, looks_like_path, slug
from vaultkeeper.apply.lifecycle import load_entry
from vaultkeeper.apply.prune import Confirm, NoAnswer
from vaultkeeper.apply.relink import rewrite_links
from vaultkeeper.apply.trash import block_removal, with_keywords
from vaultkeeper.errors import GateRefused, NotFoundError, UsageError, VaultkeeperError
from vaultkeeper.registry.blocks import (
    RegistryBlock,
    find_block,
    is_counter_line,
    parsed_heads,
    whole_count,
)
from vaultkeeper.store.edit import BOM, insert_line_after, replace_counter_value, replace_line
from vaultkeeper.store.fsio import atomic_write, move, writer_lock
from vaultkeeper.store.links import split_lines
from vaultkeeper.store.model import file_hash, is_memory_path, parse_note
from vaultkeeper.store.vault import file_in, own_dir, rel, resolve_inside

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
    try:
        found = plan(vault, decision)  # read only; carry_out plans again under the lock
    except NotFoundError:
        done = journal.last_act(
            vault, "merge", decision.target, lambda r: r.get("drop") == decision.drop
        )
        if done is None:
            raise
        return outcome_for(
            decision, SILENCE, f"already applied: merged on {done.get('ts')}", id=done.get("id")
        )
    decision = replace(decision, target=found.keep.target, drop=found.drop.target)
    if dry_run:
        what = f"merge {found.drop.target} into {found.keep.target}; {found.links} link(s)"
        return outcome_for(
            decision, ACT, f"{what} rewritten", diff=found.diff_text, dry_run=True,
            extra={"drop": found.drop.target},
        )  # fmt: skip
    own_dir(vault, config.TRASH_DIR)  # refused before anyone is asked, not after a yes
    seen = found.digest
    if confirm is None:
        why = NEEDS_PERSON.format(drop=found.drop.target)
        return queued(vault, decision, found.drop.target, seen, why, now)
    answer = confirm(found)
    if isinstance(answer, NoAnswer):
        return queued(vault, decision, found.drop.target, seen, answer.why, now)
    if answer is not True:
        why = answer if isinstance(answer, str) and answer else "the person did not answer yes"
        return outcome_for(
            decision, SILENCE, f"kept both: {why}", hash_before=seen,
            extra={"drop": found.drop.target, KEPT: True},
        )  # fmt: skip
    via = str(getattr(confirm, "confirmed_via", config.CONFIRMED_VIA_TERMINAL))
    return carry_out(vault, decision, now, seen, "a person answered yes", via, receipt)


def queued(
    vault: Path, decision: Decision, drop: str, seen: str, reason: str, now: dt.datetime
) -> Outcome:
    """Nothing is merged: the request waits for ``vaultkeeper review`` (ask)."""
    with writer_lock(vault):
        known = journal.find_pending(vault, decision, decision.target)
        ask = known or journal.enqueue(vault, decision, decision.target, reason, seen, now)
    state = "already queued" if known else "queued"
    return outcome_for(
        decision, ASK,
        f"{reason}; a person must run `vaultkeeper review` ({state} as {ask.id})",
        id=ask.id, hash_before=seen, extra={"drop": drop},
    )  # fmt: skip


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
        _answer_asks(vault, found, now)
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


def _answer_asks(vault: Path, found: MergePlan, now: dt.datetime) -> None:
    """DROP is gone: every request queued about it (a prune, this merge asked twice or
    from elsewhere) is answered, so review and status no longer count it."""
    journal.close_for(vault, found.drop.target, "yes", now)
    for ask in journal.pending(vault):
        if (ask.action, ask.target, ask.drop) == ("merge", found.keep.target, found.drop.target):
            journal.close(vault, ask.id, "yes", now)


def _carry_out(vault: Path, found: MergePlan, trash_id: str) -> str:
    """Everything to .trash/ first (so a crash loses nothing), then the edits, then DROP."""
    folder = vault / config.TRASH_DIR / trash_id
    content = f"{slug(Path(found.drop.target).stem)}.md"
    edits: list[dict[str, Any]] = []
    for n, (relative, (source, text)) in enumerate(sorted(found.texts.items())):
        original, merged = f"orig-{n}.bin", f"after-{n}.bin"
        atomic_write(folder / original, as_bytes(source, source.text))
        after = as_bytes(source, text)
        # what the merge wrote, so undo can take exactly that off a file changed since
        atomic_write(folder / merged, after)
        edits.append(
            {"path": relative, "original": original, "merged": merged, "after": digest(after)}
        )
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
    meta = with_keywords(vault, meta)  # DROP's keywords on its index line, for restore
    if found.drop.block is not None:
        atomic_write(folder / content, found.drop_text)
    atomic_write(folder / config.TRASH_META_FILE, json.dumps(meta, indent=2) + "\n")
    for relative, (source, text) in found.texts.items():
        atomic_write(resolve_inside(vault, relative), as_bytes(source, text))
    if found.drop.block is None:
        dropped = resolve_inside(vault, found.drop.rel)
        move(dropped, folder / content)  # counted; its row in the recall table goes (fsio)
    return rel(vault, folder)


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
    heads = parsed_heads(path, relative, text)  # the registry file as find_block read it
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


def digest(data: bytes) -> str:
    """sha256 of the bytes a merge wrote (BOM and line endings included)."""
    return hashlib.sha256(data).hexdigest()


def unmerge(
    vault: Path, decision: Decision, meta: dict[str, Any], folder: Path, dry_run: bool
) -> Outcome:
    """``restore <id>`` of a merge: every edited file's original bytes, and DROP's file."""
    edits = meta.get("edits")
    if not isinstance(edits, list):
        raise GateRefused(f"{rel(vault, folder)}: not a merge record")
    plan_back: list[tuple[Path, bytes]] = []
    since = 0
    for item in edits:
        path = resolve_inside(vault, str(item["path"]))
        original = file_in(folder, str(item["original"]))
        now = path.read_bytes() if path.is_file() else b""
        if digest(now) == item.get("after"):
            plan_back.append((path, original.read_bytes()))
            continue
        merged = item.get("merged")
        if not isinstance(merged, str) or not path.is_file():  # a record from before
            raise GateRefused(
                f"{item['path']} changed since the merge; nothing restored (its original "
                f"is {rel(vault, original)})"
            )
        plan_back.append((path, _taken_off(folder, item, original, now)))
        since += 1
    drop_file = meta.get("drop_kind") == "file"
    target = resolve_inside(vault, meta["source"])
    if drop_file and target.exists():
        raise GateRefused(f"{meta['source']}: exists again; restoring would overwrite it")
    how = f"un-merged {meta.get('name')} from {meta.get('keep')}: {len(plan_back)} file(s) back"
    if since:
        how += f" ({since} changed since the merge: only the merge's lines taken off)"
    if not dry_run:
        if drop_file:  # its folder first: a person may have removed it, emptied by the merge
            target.parent.mkdir(parents=True, exist_ok=True)
        for path, data in plan_back:
            atomic_write(path, data)
        if drop_file:
            move(file_in(folder, str(meta["content"])), target)  # counted, and its recall row
        shutil.rmtree(folder)
    return Outcome(
        "restore", meta["source"], ACT, how, evidence=decision.evidence, id=meta["id"],
        extra={"kind": "merge", "name": meta.get("name"), "keep": meta.get("keep"),
               "files": [str(item["path"]) for item in edits]},
        dry_run=dry_run,
    )  # fmt: skip


BOM_BYTES = BOM.encode("utf-8")


def _decoded(data: bytes, where: str) -> tuple[str, bool]:
    bom = data.startswith(BOM_BYTES)
    try:
        return data[len(BOM_BYTES) if bom else 0 :].decode("utf-8"), bom
    except UnicodeDecodeError:
        raise GateRefused(f"{where}: not UTF-8 text any more; nothing restored") from None


def _taken_off(folder: Path, item: dict[str, Any], original: Path, now: bytes) -> bytes:
    """The file as it is now, less exactly what the merge wrote into it."""
    where = str(item["path"])
    base, _ = _decoded(file_in(folder, str(item["merged"])).read_bytes(), where)
    back, _ = _decoded(original.read_bytes(), where)
    text, bom = _decoded(now, where)
    undone = take_off(base, back, text, where)
    return (BOM_BYTES if bom else b"") + undone.encode("utf-8")


_VALUE = re.compile(r"^.*?\*\*[^*]+:\*\*[ \t]*(.*?)[ \t]*$")
_LABEL = re.compile(r"^(.*?\*\*[^*]+:\*\*)")


@dataclass(frozen=True)
class _Side:
    lines: dict[int, str]  # base line index -> its replacement (same-length replaces)
    spans: list[tuple[int, int, list[str]]]  # base [i1, i2) -> lines (inserts, deletes)


def _key(line: str) -> str:
    """How lines are aligned: a counter line by its label alone, so a count the edit (or a
    use since) changed lines up with itself instead of blurring the hunks around it."""
    if not is_counter_line(line):
        return line
    m = _LABEL.match(line)
    return "\x00counter " + (m.group(1).casefold() if m else line)


def _patch_side(base: list[str], other: list[str]) -> _Side:
    lines: dict[int, str] = {}
    spans: list[tuple[int, int, list[str]]] = []
    # what both share at the ends is left out of the diff: most of a file, most times
    head = 0
    while head < min(len(base), len(other)) and base[head] == other[head]:
        head += 1
    tail = 0
    while tail < min(len(base), len(other)) - head and base[-1 - tail] == other[-1 - tail]:
        tail += 1
    a, b = base[head : len(base) - tail], other[head : len(other) - tail]
    # junk on: blank and counter lines are too common to anchor on, and would make a long
    # registry's diff quadratic; runs still extend across them
    matcher = SequenceMatcher(None, [_key(x) for x in a], [_key(x) for x in b])
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        i1, i2, j1, j2 = i1 + head, i2 + head, j1 + head, j2 + head
        if tag == "equal":  # equal keys: a counter's value may still differ
            lines.update(
                (i1 + k, other[j1 + k]) for k in range(i2 - i1) if base[i1 + k] != other[j1 + k]
            )
        elif tag == "replace" and i2 - i1 == j2 - j1:
            lines.update((i1 + k, other[j1 + k]) for k in range(i2 - i1))
        else:
            spans.append((i1, i2, other[j1:j2]))
    return _Side(lines, spans)


def _clash(a: _Side, b: _Side) -> int | None:
    """The first base line where a span of one side meets any change of the other."""
    for one, two in ((a, b), (b, a)):
        for i1, i2, _ in one.spans:
            if any(i1 <= k < i2 for k in two.lines):
                return i1
            for o1, o2, _ in two.spans:
                overlap = i1 < o2 and o1 < i2
                inside = i1 == i2 and o1 < i1 < o2  # an insertion inside the other's span
                both_insert = i1 == i2 == o1 == o2  # two insertions at one place: which first?
                if overlap or inside or both_insert:
                    return i1
    return None


def _value(line: str) -> str:
    m = _VALUE.match(line.rstrip("\r\n"))
    return m.group(1) if m else ""


def _counter(base: str, back: str, now: str) -> str | None:
    """A counter line both sides changed, reconciled; None when it cannot be."""
    if not (is_counter_line(base) and is_counter_line(back) and is_counter_line(now)):
        return None
    label = now.casefold()
    if config.LAST_USED_LABEL.casefold() in label:
        return now  # the later date: a use since the edit set it to its own day
    if config.COUNT_LABEL.casefold() not in label:
        return None
    added_by_edit = [whole_count(_value(x)) for x in (base, back)]
    current = whole_count(_value(now))
    if added_by_edit[0] is None or added_by_edit[1] is None or current is None:
        return None
    value = current - (added_by_edit[0] - added_by_edit[1])
    if value < 0:
        return None
    end = now[len(now.rstrip("\r\n")) :]
    return replace_counter_value(now, str(value)) + end


def take_off(base: str, back: str, now: str, where: str) -> str:
    """``now`` with the change ``back`` -> ``base`` undone (see the module docstring)."""
    b, u, n = split_lines(base), split_lines(back), split_lines(now)
    undo, since = _patch_side(b, u), _patch_side(b, n)
    at = _clash(undo, since)
    if at is not None:
        raise GateRefused(
            f"{where}: line {at + 1} was edited since, where the merge wrote; nothing restored"
        )
    inserts: dict[int, list[str]] = {}
    replaced: dict[int, tuple[int, list[str]]] = {}
    for side in (undo, since):
        for i1, i2, lines in side.spans:
            if i1 == i2:
                inserts.setdefault(i1, []).extend(lines)
            else:
                replaced[i1] = (i2, lines)
    out: list[str] = []
    k = 0
    while k <= len(b):
        out.extend(inserts.get(k, ()))
        if k == len(b):
            break
        if k in replaced:
            k, lines = replaced[k]
            out.extend(lines)
            continue
        mine, theirs = undo.lines.get(k), since.lines.get(k)
        if theirs is None:
            out.append(b[k] if mine is None else mine)
        elif mine is None or mine == theirs:
            out.append(theirs)
        else:
            merged = _counter(b[k], mine, theirs)
            if merged is None:
                raise GateRefused(
                    f"{where}: line {k + 1} was edited since, where the merge wrote; "
                    "nothing restored"
                )
            out.append(merged)
        k += 1
    return "".join(out)
