"""``apply revalidate PATH --reopen``: a stale active lesson goes back to a hold-out.

    active -> held_out    (the spec's "new lesson" edge, taken again for an old one)

The report lists an active memory entry nobody has cited or read for
``config.STALE_DAYS`` days as "stale: re-validate"; re-opening it sets ``status:
held_out`` and a fresh quoted ``holdout_until`` (one line each), so the next hold-out
re-checks its falsification condition and decides whether it is still true. A
validated-override entry is never demoted by vaultkeeper; a person relabels it first.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path

from vaultkeeper.apply import journal
from vaultkeeper.apply.decision import ACT, SILENCE, Decision, Outcome, outcome_for
from vaultkeeper.apply.edits import Change, locked, unified_diff, write
from vaultkeeper.apply.gate import check_hash, check_move, check_receipt
from vaultkeeper.apply.lifecycle import OVERRIDE, Entry, checked, load_entry, new_text
from vaultkeeper.errors import GateRefused
from vaultkeeper.store.edit import quoted, set_frontmatter_value
from vaultkeeper.store.model import file_hash


def reopened_text(entry: Entry, until: dt.date) -> str:
    """The entry with status held_out and the new holdout_until, and nothing else changed:
    the date's line is checked here, the status line by lifecycle.new_text."""
    text = set_frontmatter_value(entry.source.text, "holdout_until", quoted(until.isoformat()))
    expected = {**entry.note.meta, "holdout_until": until.isoformat()}
    dated = checked(entry, text, expected, "holdout_until edit")
    return new_text(
        replace(entry, source=replace(entry.source, text=text), note=dated), "held_out", None
    )


def reopen(vault: Path, decision: Decision, now: dt.datetime, *, dry_run: bool = False) -> Outcome:
    days = decision.reopen_days or 0
    until = now.astimezone(dt.timezone.utc).date() + dt.timedelta(days=days)
    receipt = (decision.evidence or "").strip()
    with locked(vault, dry_run):
        entry = load_entry(vault, decision.target)
        decision = replace(decision, target=entry.rel)
        if receipt and entry.status == "held_out" and _replayed(vault, entry.rel, receipt):
            return outcome_for(
                decision, SILENCE, "already applied: re-opened for a hold-out",
                extra={"path": entry.rel},
            )  # fmt: skip
        check_hash(decision.expect_hash, file_hash(entry.source.text), entry.rel)
        check_move("reopen", entry.status)
        if entry.note.get_str("label") == OVERRIDE:
            raise GateRefused(
                f"label {OVERRIDE} is never demoted automatically; a person may relabel it "
                "before it is re-opened"
            )
        receipt = check_receipt(vault, decision.evidence)
        text = reopened_text(entry, until)
        change = Change(entry.source.path, entry.rel, entry.source.text, text, entry.source.bom)
        if not dry_run:
            write(change)
        return outcome_for(
            decision, ACT,
            f"status active -> held_out, holdout_until {until.isoformat()}: "
            "the next re-check decides whether it is still true",
            evidence=receipt,
            hash_before=file_hash(entry.source.text), hash_after=file_hash(text),
            extra={"path": entry.rel, "from": "active", "to": "held_out", "reopen": True},
            diff=unified_diff([change]) if dry_run else "", dry_run=dry_run,
        )  # fmt: skip


def _replayed(vault: Path, target: str, receipt: str) -> bool:
    return (
        journal.last_act(
            vault,
            "revalidate",
            target,
            lambda r: r.get("reopen") is True and r.get("evidence") == receipt,
        )
        is not None
    )
