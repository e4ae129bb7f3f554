"""``apply revalidate`` (``--reopen`` too) and ``apply reactivate``: the lifecycle moves.

    held_out -> active    re-check passed (the receipt joins provenance)
    held_out -> archived  re-check failed (a validated-override entry: ask a person)
    archived -> active    new evidence, whatever the label (the receipt joins provenance)

Every other move is refused. A status change edits the status line only (and the
provenance line it must); the result is re-parsed and compared before anything is written.
``--reopen`` takes a stale active lesson back to a hold-out (active -> held_out).

``apply anchor ENTRY --add PATH[::NAME]`` (``add_anchor``) is the same kind of minimal
edit: the new ``  - {at, digest, commit}`` lines go after the entry's last ``anchors:``
item (or, without the key, ``anchors:`` and them just before the closing ``---``).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.apply import journal
from vaultkeeper.apply.decision import ASK, SILENCE, Decision, Outcome, outcome_for
from vaultkeeper.apply.edits import Change, Source, carry, locked, read_source
from vaultkeeper.apply.gate import (
    Receipt,
    check_hash,
    check_holdout_passed,
    check_move,
    check_receipt,
    find_entry,
    receipt_first,
)
from vaultkeeper.errors import GateRefused, UsageError
from vaultkeeper.store.edit import (
    append_to_list,
    get_frontmatter_raw,
    quoted,
    set_frontmatter_value,
)
from vaultkeeper.store.fsio import writer_lock
from vaultkeeper.store.model import Note, ParseError, file_hash, parse_note
from vaultkeeper.store.vault import rel

RESULTS = {"pass": "active", "fail": "archived"}
OVERRIDE = "validated-override"


@dataclass(frozen=True)
class Entry:
    rel: str
    source: Source
    note: Note

    @property
    def status(self) -> str | None:
        """The status; an entry with a holdout_until and no status key is held out, as the
        scanner treats it."""
        status = self.note.get_str("status")
        if status is None and self.note.meta.get("holdout_until") not in (None, ""):
            return "held_out"
        return status

    @property
    def provenance(self) -> list[str]:
        value = self.note.meta.get("provenance")
        return [str(v) for v in value] if isinstance(value, list) else []

    def change(self, text: str) -> Change:
        """This entry's file rewritten to ``text``."""
        return Change(self.source.path, self.rel, self.source.text, text, self.source.bom)


def load_entry(vault: Path, target: str) -> Entry:
    """The entry at a path, or with the name the scan lists it under."""
    path = find_entry(vault, target)
    relative = rel(vault, path)
    source = read_source(path, relative)
    try:
        note = parse_note(path, relative, source.text)
    except ParseError as exc:
        line = f":{exc.line}" if exc.line else ""
        raise GateRefused(f"{relative}{line}: {exc.reason}") from None
    if note.frontmatter is None:
        raise GateRefused(f"{relative}: no frontmatter, so no status to change")
    return Entry(relative, source, note)


def status_edit(text: str, status: str) -> str:
    """``status: held_out`` -> ``status: active`` on the same line, quoting kept."""
    raw = get_frontmatter_raw(text, "status") or ""
    scalar = quoted(status) if raw.startswith('"') else f"'{status}'" if raw[:1] == "'" else status
    return set_frontmatter_value(text, "status", scalar)


def new_text(entry: Entry, status: str, receipt: str | None) -> str:
    """The entry with its new status (and receipt), checked to differ in nothing else."""
    text = status_edit(entry.source.text, status)
    expected = dict(entry.note.meta)
    expected["status"] = status
    if receipt is not None and receipt not in entry.provenance:
        text = append_to_list(text, "provenance", receipt)
        expected["provenance"] = [*(entry.note.meta.get("provenance") or []), receipt]
    checked(entry, text, expected, "status edit")
    return text


def checked(entry: Entry, text: str, expected: dict[str, Any], what: str = "edit") -> Note:
    """``text`` parsed, when its frontmatter is ``expected`` and its body the entry's own:
    a minimal edit changed exactly the keys meant. Else refuse, naming ``what``."""
    try:
        after = parse_note(entry.note.path, entry.rel, text)
    except ParseError:
        after = None
    if after is None or dict(after.meta) != expected or after.body != entry.note.body:
        raise GateRefused(
            f"{entry.rel}: its frontmatter layout defeats a minimal {what}; change it by hand"
        )
    return after


def _apply(
    vault: Path, decision: Decision, entry: Entry, status: str, receipt: str | None, dry_run: bool
) -> Outcome:
    text = new_text(entry, status, receipt)
    what = f"status {entry.status} -> {status}"
    if receipt is not None and receipt not in entry.provenance:
        what += ", receipt added to provenance"
    return carry(
        vault, decision, [entry.change(text)], what, dry_run=dry_run,
        extra={"path": entry.rel, "from": entry.status, "to": status},
    )  # fmt: skip


def _opened(vault: Path, decision: Decision) -> tuple[Entry, Decision]:
    """The entry the decision names, and the decision naming it by its path."""
    entry = load_entry(vault, decision.target)
    return entry, replace(decision, target=entry.rel)


def _done_before(vault: Path, action: str, rel: str, **fields: object) -> bool:
    """Whether the journal holds this very decision, applied (``fields`` as recorded)."""
    match = lambda r: all(r.get(k) == v for k, v in fields.items())  # noqa: E731
    return journal.last_act(vault, action, rel, match) is not None


def _already(decision: Decision, entry: Entry, what: str | None = None) -> Outcome:
    """Replaying a decision that is already in the file changes nothing, and says so."""
    what = what or f"status is {entry.status}"
    return outcome_for(decision, SILENCE, f"already applied: {what}", extra={"path": entry.rel})


def revalidate(
    vault: Path, decision: Decision, now: dt.datetime, *, dry_run: bool = False, **_: object
) -> Outcome:
    """--pass / --fail on a held-out entry, or --reopen on a stale active one."""
    if decision.reopen_days is not None:
        return reopen(vault, decision, now, dry_run=dry_run)
    if decision.result not in RESULTS:
        raise UsageError("revalidate needs a result: pass or fail")
    to = RESULTS[decision.result]
    receipt = (decision.evidence or "").strip()
    anchored = receipt.startswith("anchor:")  # the anchor check itself
    checked = Receipt(receipt, None) if anchored else receipt_first(vault, decision.evidence)
    with locked(vault, dry_run):
        entry, decision = _opened(vault, decision)
        if receipt and entry.status == to and _replayed(vault, entry, to, receipt):
            return _already(decision, entry)
        check_hash(decision.expect_hash, file_hash(entry.source.text), entry.rel)
        check_move("revalidate", entry.status)
        check_holdout_passed(entry.note.meta.get("holdout_until"), now.date())
        receipt = checked.get()
        if anchored:
            _anchor_holds(vault, entry, receipt, to)
        if to == "archived" and entry.note.get_str("label") == OVERRIDE:
            return _ask_override(vault, decision, entry, now, dry_run)
        return _apply(vault, decision, entry, to, receipt if to == "active" else None, dry_run)


def _anchor_holds(vault: Path, entry: Entry, receipt: str, to: str) -> None:
    """``anchor:AT@COMMIT`` as evidence: the entry's falsification_condition must be that
    anchor check, and the check run now must agree with the result given."""
    from vaultkeeper.anchors.format import parse_condition, text_of
    from vaultkeeper.anchors.vault import evidence_holds

    cond = parse_condition(entry.note.meta.get("falsification_condition"))
    at = receipt.removeprefix("anchor:").rpartition("@")[0]
    if cond is None or text_of(cond[1]) != at.strip():
        raise GateRefused(
            f"evidence {receipt!r}: the falsification_condition of {entry.rel} is not "
            f"the anchor check 'gone|changed|moved: {at}'"
        )
    try:
        state = evidence_holds(vault, entry.rel, receipt)
    except ValueError as exc:
        raise GateRefused(str(exc)) from None
    met = state == cond[0] or (cond[0] == "changed" and state in ("changed", "moved", "gone"))
    if met != (to == "archived"):
        said = "met" if met else "not met"
        raise GateRefused(
            f"evidence {receipt!r}: the check finds {at} {state}, so the condition "
            f"'{cond[0]}' is {said}; the re-check says otherwise"
        )


def _replayed(vault: Path, entry: Entry, to: str, receipt: str) -> bool:
    """Did this very re-check already land? A pass leaves its receipt; a fail, a journal line."""
    if to == "active":
        return receipt in entry.provenance
    return _done_before(vault, "revalidate", entry.rel, evidence=receipt, result="fail")


def _ask_override(
    vault: Path, decision: Decision, entry: Entry, now: dt.datetime, dry_run: bool
) -> Outcome:
    reason = f"label {OVERRIDE} is never demoted automatically; archiving it is a person's call"
    digest = file_hash(entry.source.text)
    ask_id, where = None, " (dry run: not queued)"
    if not dry_run:
        known = journal.find_pending(vault, decision, entry.rel)
        ask_id = (known or journal.enqueue(vault, decision, entry.rel, reason, digest, now)).id
        where = f" ({'already queued' if known else 'queued'} as {ask_id})"
    return Outcome(
        "revalidate", entry.rel, ASK, f"{reason}; a person must run `vaultkeeper review`{where}",
        evidence=decision.evidence, id=ask_id, hash_before=digest,
        extra={"result": "fail", "path": entry.rel}, dry_run=dry_run,
    )  # fmt: skip


def archive_after_yes(vault: Path, decision: Decision, expected: str | None) -> Outcome:
    """A person said yes at review: archive the override entry they were shown."""
    with writer_lock(vault):
        entry, decision = _opened(vault, decision)
        if expected is not None and file_hash(entry.source.text) != expected:
            raise GateRefused(f"{entry.rel} changed after it was shown; nothing done, decide again")
        check_move("revalidate", entry.status)
        outcome = _apply(vault, decision, entry, "archived", None, dry_run=False)
    return outcome.with_reason(f"a person answered yes: {outcome.reason}")


def reactivate(
    vault: Path,
    decision: Decision,
    now: dt.datetime,
    *,
    dry_run: bool = False,
    checked: Receipt | None = None,
    **_: object,
) -> Outcome:
    """``checked``: the receipt, already read before the writer lock by a caller that
    holds it now (supersede.reactivate); else it is read here, before taking it."""
    receipt = (decision.evidence or "").strip()
    if checked is None:
        checked = receipt_first(vault, decision.evidence)
    with locked(vault, dry_run):
        entry, decision = _opened(vault, decision)
        if receipt and entry.status == "active" and receipt in entry.provenance:
            return _already(decision, entry)
        check_hash(decision.expect_hash, file_hash(entry.source.text), entry.rel)
        check_move("reactivate", entry.status)  # archived -> active, whatever the label
        receipt = checked.get()
        return _apply(vault, decision, entry, "active", receipt, dry_run)


def reopened_text(entry: Entry, until: dt.date) -> str:
    """The entry with status held_out and the new holdout_until, and nothing else changed."""
    text = set_frontmatter_value(entry.source.text, "holdout_until", quoted(until.isoformat()))
    text = status_edit(text, "held_out")
    expected = {**entry.note.meta, "holdout_until": until.isoformat(), "status": "held_out"}
    checked(entry, text, expected, "re-open edit")
    return text


def reopen(vault: Path, decision: Decision, now: dt.datetime, *, dry_run: bool = False) -> Outcome:
    days = decision.reopen_days or 0
    until = now.astimezone(dt.timezone.utc).date() + dt.timedelta(days=days)
    receipt = (decision.evidence or "").strip()
    with locked(vault, dry_run):
        entry, decision = _opened(vault, decision)
        replayed = receipt and entry.status == "held_out"
        if replayed and _done_before(vault, "revalidate", entry.rel, reopen=True, evidence=receipt):
            return _already(decision, entry, "re-opened for a hold-out")
        check_hash(decision.expect_hash, file_hash(entry.source.text), entry.rel)
        check_move("reopen", entry.status)
        if entry.note.get_str("label") == OVERRIDE:
            raise GateRefused(
                f"label {OVERRIDE} is never demoted automatically; a person may relabel it "
                "before it is re-opened"
            )
        receipt = check_receipt(vault, decision.evidence)
        return carry(
            vault, decision, [entry.change(reopened_text(entry, until))],
            f"status active -> held_out, holdout_until {until.isoformat()}: "
            "the next re-check decides whether it is still true",
            evidence=receipt, dry_run=dry_run,
            extra={"path": entry.rel, "from": "active", "to": "held_out", "reopen": True},
        )  # fmt: skip


def add_anchor(
    vault: Path, decision: Decision, now: dt.datetime, *, dry_run: bool = False, **_: object
) -> Outcome:
    # imported here: the anchors' checks cost every other action's start 15 ms
    from vaultkeeper.anchors import check, repo
    from vaultkeeper.anchors.format import AnchorError, item_yaml, parse_at, parse_items

    with locked(vault, dry_run):
        entry, decision = _opened(vault, decision)
        check_hash(decision.expect_hash, file_hash(entry.source.text), entry.rel)
        kind = entry.note.get_str("type")
        if kind not in ("memory", "decision"):
            raise GateRefused(f"{entry.rel}: anchors go on a memory or decision entry")
        project = repo.project_of(entry.rel)
        top = repo.located(vault, project) if project else None
        if top is None:
            raise GateRefused(
                f"{entry.rel}: project {project} is tied to no repository on this machine "
                "(vaultkeeper new ... --repo DIR, or a session ingest from it)"
            )
        have = {i.at for i in parse_items(entry.note.meta.get(config.ANCHORS_KEY))[0]}
        lines = []
        for spec in decision.anchors:
            try:
                digest, commit = check.record(top, parse_at(spec))
            except (AnchorError, ValueError) as exc:
                raise GateRefused(str(exc)) from None
            if spec.strip() not in have:
                lines.append(item_yaml(spec.strip(), digest, commit))
        if not lines:
            return outcome_for(decision, SILENCE, "already anchored", extra={"path": entry.rel})
        text = _with_lines(entry.source.text, entry.note.frontmatter, lines)
        return carry(
            vault, decision, [entry.change(text)], f"anchored to {', '.join(decision.anchors)}",
            dry_run=dry_run, extra={"path": entry.rel, "anchors": list(decision.anchors)},
        )  # fmt: skip


def _with_lines(text: str, fm: object, lines: list[str]) -> str:
    """``lines`` after the last line of the anchors: block, or a new block at the end."""
    rows = text.split("\n")
    end = getattr(fm, "end_line", 0) - 1  # index of the closing ---
    start = getattr(fm, "key_lines", {}).get(config.ANCHORS_KEY)
    if start is None:
        return "\n".join([*rows[:end], f"{config.ANCHORS_KEY}:", *lines, *rows[end:]])
    if rows[start - 1].strip() not in (f"{config.ANCHORS_KEY}:",):
        raise GateRefused(f"anchors: is not a block list (line {start}); add the items by hand")
    after = start
    while after < end and rows[after].startswith((" ", "-")):
        after += 1
    return "\n".join([*rows[:after], *lines, *rows[after:]])
