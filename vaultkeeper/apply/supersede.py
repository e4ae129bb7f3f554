"""``apply supersede OLD --by NEW`` and its undo, ``apply reactivate OLD``.

Supersede: OLD gets ``superseded_by: "[[NEW]]"`` and status archived, NEW gets OLD
in its ``supersedes`` list; each a one-line edit (a key added just before the closing
``---``, or a value changed on its own line). Gate: an evidence receipt; NEW exists, is
live (not archived, not superseded itself) and is not OLD; OLD is not superseded yet.

Undo: the journal line of the supersession keeps each edited key's lines as they were
and as they became. Reactivating a superseded entry puts those lines back wherever they
are still as the supersession left them, so both files return byte for byte; where a
person has edited them since, the link is cleared and OLD set active instead.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.apply import journal, lifecycle
from vaultkeeper.apply.decision import SILENCE, Decision, Outcome, outcome_for
from vaultkeeper.apply.edits import Change, carry, locked
from vaultkeeper.apply.gate import Receipt, check_hash, receipt_first
from vaultkeeper.apply.lifecycle import Entry, checked, load_entry, status_edit
from vaultkeeper.errors import GateRefused, UsageError, VaultkeeperError
from vaultkeeper.store.edit import (
    append_to_list,
    key_block,
    put_key_block,
    quoted,
    set_frontmatter_value,
)
from vaultkeeper.store.links import Resolver
from vaultkeeper.store.model import file_hash, parse_note
from vaultkeeper.upkeep.supersession import (
    is_superseded,
    link_target,
    recorded_value,
    superseded_by,
    supersedes,
    wikilink,
)

BY, LIST, STATUS = config.SUPERSEDED_BY_KEY, config.SUPERSEDES_KEY, "status"
Blocks = dict[str, str | None]  # key -> its exact lines, or None where it was absent


def _blocks(text: str, keys: tuple[str, ...]) -> Blocks:
    return {key: key_block(text, key) for key in keys}


def _resolve(resolver: Resolver, target: str | None, source: str) -> str | None:
    return None if target is None else resolver.resolve(target, source).resolved


def _gate(vault: Path, decision: Decision) -> tuple[Entry, Entry]:
    if not (decision.by or "").strip():
        raise UsageError("supersede needs --by NEW: the entry that replaces it")
    old = load_entry(vault, decision.target)
    new = load_entry(vault, decision.by or "")
    for entry in (old, new):
        if entry.rel.split("/", 1)[0] in (config.PATTERNS_DIR, config.SKILLS_DIR):
            raise GateRefused(
                f"{entry.rel}: a registry file or skill, not an entry; only entries supersede"
            )
    if new.rel == old.rel:
        raise GateRefused(f"{old.rel}: an entry cannot supersede itself")
    newer = superseded_by(new.note)
    if newer is not None:
        raise GateRefused(
            f"{new.rel} is itself superseded by [[{newer}]]: supersede with the newest entry"
        )
    if new.status == "archived":
        raise GateRefused(f"{new.rel} is archived, not live: reactivate it first")
    return old, new


def supersede(
    vault: Path, decision: Decision, now: dt.datetime, *, dry_run: bool = False, **_: object
) -> Outcome:
    checked = receipt_first(vault, decision.evidence)  # read before the writer lock
    with locked(vault, dry_run):
        old, new = _gate(vault, decision)
        decision = replace(decision, target=old.rel, by=new.rel)
        link = superseded_by(old.note)
        if link is not None:  # the vault walked for its names only then
            resolver = Resolver.for_vault(vault)
            if _resolve(resolver, link, old.rel) == new.rel and old.rel in _listed(resolver, new):
                return outcome_for(decision, SILENCE, f"already applied: superseded by {new.rel}")
            raise GateRefused(f"{old.rel} is already superseded by [[{link}]]; reactivate it first")
        check_hash(decision.expect_hash, file_hash(old.source.text), old.rel)
        receipt = checked.get()
        changes, before, after = _forward(old, new)
        what = f"{old.rel} superseded by {new.rel}"
        if old.status != "archived":
            what += f"; status {old.status} -> archived"
        extra: dict[str, Any] = {"path": old.rel, "by": new.rel, "from": old.status}
        extra.update(before=before, after=after)  # what reactivate puts back
        return carry(vault, decision, changes, what, evidence=receipt, extra=extra,
                     dry_run=dry_run, index=True)  # fmt: skip


def _listed(resolver: Resolver, new: Entry) -> set[str]:
    found = (_resolve(resolver, t, new.rel) for t in supersedes(new.note))
    return {r for r in found if r is not None}


def _forward(old: Entry, new: Entry) -> tuple[list[Change], dict[str, Blocks], dict[str, Blocks]]:
    """Both edits, and each edited key's lines before and after them (the journal keeps
    them: reactivate puts them back)."""
    old_text = old.source.text
    keys = (STATUS, BY)
    before_old = _blocks(old_text, keys)
    expect_old = dict(old.note.meta)
    if old.status != "archived":
        old_text = status_edit(old_text, "archived")
        expect_old[STATUS] = "archived"
    old_text = set_frontmatter_value(old_text, BY, quoted(wikilink(new.rel)))
    expect_old[BY] = wikilink(new.rel)
    checked(old, old_text, expect_old)
    before_new = _blocks(new.source.text, (LIST,))
    new_text = append_to_list(new.source.text, LIST, wikilink(old.rel))
    expect_new = dict(new.note.meta)
    listed = new.note.meta.get(LIST)
    expect_new[LIST] = [*(listed if isinstance(listed, list) else []), wikilink(old.rel)]
    checked(new, new_text, expect_new)
    before = {"old": before_old, "new": before_new}
    after = {"old": _blocks(old_text, keys), "new": _blocks(new_text, (LIST,))}
    return [old.change(old_text), new.change(new_text)], before, after


# -- undo: `apply reactivate OLD` on a superseded entry ----------------------------------


def reactivate(
    vault: Path, decision: Decision, now: dt.datetime, *, dry_run: bool = False, **_: object
) -> Outcome:
    """A superseded entry is brought back by undoing its supersession; any other goes to
    the lifecycle's own reactivate (archived -> active on new evidence)."""
    checked = receipt_first(vault, decision.evidence)  # read before the writer lock
    with locked(vault, dry_run):
        try:
            entry = load_entry(vault, decision.target)
        except VaultkeeperError:
            entry = None  # not an entry file: lifecycle.reactivate says what it is
        if entry is None or not is_superseded(entry.note):
            return lifecycle.reactivate(vault, decision, now, dry_run=dry_run, checked=checked)
        return _undo(vault, replace(decision, target=entry.rel), entry, dry_run, checked)


def _undo(vault: Path, decision: Decision, old: Entry, dry_run: bool, checked: Receipt) -> Outcome:
    check_hash(decision.expect_hash, file_hash(old.source.text), old.rel)
    receipt = checked.get()
    record = journal.last_act(vault, "supersede", old.rel, lambda r: True)
    resolver = Resolver.for_vault(vault)
    by = _resolve(resolver, superseded_by(old.note), old.rel)
    if by is None and record is not None:
        by = str(record.get("by") or "") or None
    changes = _backward(vault, resolver, old, by, record)
    status = parse_note(old.note.path, old.rel, changes[0].after or "").get_str(STATUS)
    what = f"supersession undone: {BY} cleared, status {old.status} -> {status}"
    if len(changes) > 1:
        what += f"; {old.rel} left {changes[1].label}'s {LIST}"
    extra: dict[str, Any] = {"path": old.rel, "by": by, "from": old.status, "to": status}
    return carry(vault, decision, changes, what, evidence=receipt, extra=extra,
                 dry_run=dry_run, index=True)  # fmt: skip


def _restored(text: str, record: Mapping[str, Any] | None, side: str) -> str | None:
    """``text`` with the recorded keys put back, if each is still as the supersession left
    it; None when any was edited since (or there is no record)."""
    if record is None:
        return None
    before, after = record.get("before"), record.get("after")
    if not isinstance(before, dict) or not isinstance(after, dict):
        return None
    was, became = before.get(side), after.get(side)
    if not isinstance(was, dict) or not isinstance(became, dict) or set(was) != set(became):
        return None
    for key in became:
        if key_block(text, key) != became[key]:
            return None
    for key in became:
        text = put_key_block(text, key, was[key])
    return text


def _was(record: Mapping[str, Any] | None, side: str, key: str) -> str | None:
    """The key's lines before the supersession, as its journal line recorded them."""
    before = record.get("before") if record is not None else None
    blocks = before.get(side) if isinstance(before, dict) else None
    value = blocks.get(key) if isinstance(blocks, dict) else None
    return value if isinstance(value, str) else None


def _backward(
    vault: Path, resolver: Resolver, old: Entry, by: str | None, record: Mapping[str, Any] | None
) -> list[Change]:
    expect = {k: v for k, v in old.note.meta.items() if k != BY}
    old_text = _restored(old.source.text, record, "old")
    if old_text is not None:  # every byte back: the status as it was, or no status key
        assert record is not None
        if _was(record, "old", STATUS) is None:
            expect.pop(STATUS, None)
        else:
            expect[STATUS] = record.get("from")
        if (was_by := _was(record, "old", BY)) is not None:  # `superseded_by: ""` was there
            expect[BY] = recorded_value(was_by, BY)
    else:  # edited since (or hand-written): clear the link, set active
        old_text = put_key_block(old.source.text, BY, None)
        if old.status == "archived":
            old_text = status_edit(old_text, "active")
            expect[STATUS] = "active"
    checked(old, old_text, expect)
    listed = _unlist(vault, resolver, old, by, record)
    return [old.change(old_text)] + ([] if listed is None else [listed])


def _unlist(
    vault: Path,
    resolver: Resolver,
    old: Entry,
    by: str | None,
    record: Mapping[str, Any] | None,
) -> Change | None:
    if by is None:
        return None
    try:
        new = load_entry(vault, by)
    except VaultkeeperError:
        return None  # NEW is gone: nothing lists OLD any more
    listed = new.note.meta.get(LIST)
    items = listed if isinstance(listed, list) else [] if listed is None else [listed]
    keep = [i for i in items if _resolve(resolver, link_target(i), new.rel) != old.rel]
    if len(keep) == len(items):
        return None
    expect = dict(new.note.meta)
    expect[LIST] = keep
    text = _restored(new.source.text, record, "new")
    if text is not None:
        if _was(record, "new", LIST) is None:
            expect.pop(LIST)  # the supersession added the key: it goes again
    elif keep:
        rendered = "[" + ", ".join(quoted(str(i)) for i in keep) + "]"
        text = set_frontmatter_value(new.source.text, LIST, rendered)
    else:
        text = put_key_block(new.source.text, LIST, None)
        expect.pop(LIST)
    checked(new, text, expect)
    return new.change(text)
