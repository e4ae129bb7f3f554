"""One decision or a batch of them: each gated on its own, each journaled.

``apply_decision`` is the single entry point every ``apply`` command goes through, so a
refusal anywhere becomes a ``defer`` line in the journal instead of a lost decision.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from vaultkeeper.apply import journal, lifecycle, merge, prune, supersede, trash
from vaultkeeper.apply.decision import DEFER, SILENCE, Decision, Outcome, outcome_for, worst_exit
from vaultkeeper.apply.gate import entries_named, entry_path, find_entry, looks_like_path
from vaultkeeper.apply.promote import promote
from vaultkeeper.errors import GateRefused, NotFoundError, UsageError, VaultkeeperError, explain
from vaultkeeper.registry.blocks import find_block
from vaultkeeper.store.fsio import changes, last_written
from vaultkeeper.store.vault import rel

Handler = Callable[..., Outcome]
BATCH_ACTIONS = ("promote", "prune", "revalidate", "reactivate", "supersede", "skip", "merge")
_KEYS = {
    "action", "target", "evidence", "result", "expect_hash", "reason", "skills_dir", "by", "drop",
}  # fmt: skip


def skip(vault: Path, decision: Decision, now: dt.datetime, **_: object) -> Outcome:
    """The agent leaves a candidate alone on purpose; the choice is recorded, not invisible."""
    reason = " ".join((decision.reason or "").split())
    if not reason:
        raise UsageError("skip needs --reason TEXT: say why it is left alone")
    if looks_like_path(decision.target):
        target = rel(vault, entry_path(vault, decision.target))
    else:
        try:
            target = find_block(vault, decision.target).name
        except NotFoundError:  # not a pattern: a held-out entry, by the name the scan lists
            if not entries_named(vault, decision.target):
                raise
            target = rel(vault, find_entry(vault, decision.target))
    return Outcome("skip", target, SILENCE, f"left alone: {reason}", evidence=decision.evidence)


HANDLERS: dict[str, Handler] = {
    "promote": promote,
    "prune": prune.prune,
    "revalidate": lifecycle.revalidate,
    "reactivate": supersede.reactivate,  # undoes a supersession, else lifecycle's
    "supersede": supersede.supersede,
    "skip": skip,
    "merge": merge.merge,
    "anchor": lifecycle.add_anchor,
    "restore": lambda vault, decision, now, dry_run=False, **_: trash.restore(
        vault, decision, dry_run=dry_run
    ),
}


def apply_decision(
    vault: Path,
    decision: Decision,
    now: dt.datetime,
    *,
    dry_run: bool = False,
    confirm: prune.Confirm | None = None,
) -> Outcome:
    """Gate and carry out one decision; journal what came of it (not on a dry run)."""
    if not dry_run:
        journal.check(vault)
    written = changes()
    try:
        handler = HANDLERS.get(decision.action)
        if handler is None:
            raise UsageError(f"unknown action {decision.action!r}; one of {', '.join(HANDLERS)}")
        outcome = handler(vault, decision, now, dry_run=dry_run, confirm=confirm)
    except VaultkeeperError as exc:
        outcome = outcome_for(decision, DEFER, str(exc))
    except OSError as exc:  # an unwritable file must not abort a batch unjournaled
        if changes() == written:  # it failed before its first write
            outcome = outcome_for(decision, DEFER, explain(exc)[0])
        else:  # each write is atomic, but one before the failing one landed
            reason = f"{explain(exc)[0]}; stopped part-way, run it again once that is fixed"
            outcome = outcome_for(decision, DEFER, reason, extra={"stopped": True})
    if dry_run:  # whatever a handler returned, a dry run is never journaled
        outcome = replace(outcome, dry_run=True)
    try:
        journal.append(vault, outcome, now)
    except OSError as exc:  # what happened is still reported, with why it is not journaled
        outcome = outcome.with_reason(f"{outcome.reason}; NOT journaled: {explain(exc)[0]}")
    if not dry_run and changes() != written:  # the report's rows of what it wrote, kept now
        from vaultkeeper.scan.last import wrote

        wrote(vault, last_written())
    return outcome


@dataclass(frozen=True)
class BatchResult:
    outcomes: tuple[Outcome, ...]

    @property
    def exit_code(self) -> int:
        return worst_exit(list(self.outcomes))


def parse_batch(vault: Path, text: str, source: str) -> list[Decision | Outcome]:
    """The JSON list; an item that is not a well-formed decision becomes a defer outcome."""
    try:
        data = json.loads(text.removeprefix("\ufeff"))  # a BOM, as Windows editors write it
    except ValueError as exc:
        raise VaultkeeperError(f"{source}: not valid JSON ({exc})") from None
    except RecursionError:
        raise VaultkeeperError(f"{source}: not valid JSON (nested too deeply)") from None
    if not isinstance(data, list):
        raise VaultkeeperError(f"{source}: expected a JSON list of decisions")
    out: list[Decision | Outcome] = []
    for index, item in enumerate(data):
        try:
            out.append(_decision(vault, item))
        except VaultkeeperError as exc:
            action = str(item.get("action", "?")) if isinstance(item, dict) else "?"
            target = str(item.get("target", "?")) if isinstance(item, dict) else "?"
            out.append(Outcome(action, target, DEFER, f"{source}[{index}]: {exc}"))
    return out


def _decision(vault: Path, item: Any) -> Decision:
    if not isinstance(item, dict):
        raise GateRefused("not a JSON object")
    unknown = sorted(set(item) - _KEYS)
    if unknown:
        raise GateRefused(
            f"unknown field(s) {', '.join(unknown)}; allowed: {', '.join(sorted(_KEYS))}"
        )
    for key, value in item.items():
        if value is not None and not isinstance(value, str):
            raise GateRefused(f"{key} must be a string")
        if value is not None and "\x00" in value:  # no path or receipt holds a NUL
            raise GateRefused(f"{key} must not contain a NUL character")
    if item.get("action") not in BATCH_ACTIONS:
        raise GateRefused(f"action must be one of {', '.join(BATCH_ACTIONS)}")
    if not item.get("target"):
        raise GateRefused("target is required")
    skills = item.get("skills_dir")
    return Decision(
        action=item["action"],
        target=item["target"],
        evidence=item.get("evidence"),
        result=item.get("result"),
        expect_hash=item.get("expect_hash"),
        reason=item.get("reason"),
        drop=item.get("drop"),
        # A relative skills_dir in a batch file is relative to the vault, not to the cwd.
        skills_dir=None if skills is None else vault / Path(skills).expanduser(),
        by=item.get("by"),
    )


def run_batch(
    vault: Path,
    text: str,
    source: str,
    now: dt.datetime,
    *,
    dry_run: bool = False,
    confirm: prune.Confirm | None = None,
) -> BatchResult:
    outcomes: list[Outcome] = []
    for item in parse_batch(vault, text, source):
        if isinstance(item, Outcome):
            if not dry_run:
                journal.append(vault, item, now)
            outcomes.append(item)
        else:
            outcomes.append(apply_decision(vault, item, now, dry_run=dry_run, confirm=confirm))
    return BatchResult(tuple(outcomes))
