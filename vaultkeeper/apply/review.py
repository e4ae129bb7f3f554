"""``vaultkeeper review``: a person at a terminal walks the queued asks, one at a time.

"A terminal" means stdin and stdout are both TTYs: the question must reach a person's
eyes and the answer come from their keyboard, not from a pipe an agent controls.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from vaultkeeper import config
from vaultkeeper.apply import journal, lifecycle, merge, native, prune
from vaultkeeper.apply.decision import DEFER, KEPT, SILENCE, Outcome
from vaultkeeper.apply.edits import Change, unified_diff
from vaultkeeper.errors import NotFoundError, VaultkeeperError
from vaultkeeper.store.model import file_hash

YES, NO, SKIP, QUIT = "yes", "no", "skip", "quit"
STOP = "stop"  # the person ended the input (Ctrl-D) or interrupted (Ctrl-C) at the question
_ANSWERS = {"y": YES, "yes": YES, "n": NO, "no": NO, "s": SKIP, "skip": SKIP, "": SKIP}
_ANSWERS.update({"q": QUIT, "quit": QUIT})


class _Stream(Protocol):
    def isatty(self) -> bool: ...


def is_terminal(stdin: _Stream, stdout: _Stream) -> bool:
    try:
        return stdin.isatty() and stdout.isatty()
    except (ValueError, OSError):  # a closed or detached stream is no terminal
        return False


def is_yes(answer: str) -> bool:
    """Only ``y`` or ``yes`` (any case) deletes; anything else, empty included, keeps."""
    return answer.strip().lower() in config.PRUNE_ANSWERS_YES


def parse_answer(answer: str) -> str | None:
    """yes / no / skip (also empty) / quit; None for anything else (ask again)."""
    return _ANSWERS.get(answer.strip().lower())


@dataclass(frozen=True)
class Item:
    ask: journal.Ask
    title: str  # one line: what is being decided
    text: str  # exactly what would go, or the diff that would be written
    changed: bool  # the target changed since it was queued
    hash: str
    carry: Callable[[], Outcome]  # what a yes does, if the target is still as shown


@dataclass(frozen=True)
class ReviewResult:
    outcomes: tuple[Outcome, ...]
    remaining: int


Decide = Callable[[Item], str]
Shown = Callable[[Outcome], None]


def _item(vault: Path, ask: journal.Ask, now: dt.datetime) -> Item:
    """What the person sees, read now (raises NotFoundError once the target is gone)."""
    decision, yes = ask.decision(), "a person answered yes"
    if ask.action == native.ACTION:
        found = native.plan(vault, ask.target)
        title = f"delete Claude Code memory {found.path} -> {config.TRASH_DIR}/"
        text, digest = found.text, file_hash(found.text)
        carry = lambda: native.carry_out(vault, decision, now, digest)  # noqa: E731
    elif ask.action == "merge":
        merging = merge.plan(vault, decision)
        title, text, digest = merging.title, merging.diff_text, merging.digest
        carry = lambda: merge.carry_out(vault, decision, now, digest, f"{yes} at review")  # noqa: E731
    elif ask.action == "prune":
        plan = prune.plan(vault, decision)
        count = "" if plan.count is None else f", success count {plan.count}"
        title = f"delete {plan.kind} {plan.target} ({plan.where}{count}) -> {config.TRASH_DIR}/"
        text, digest = plan.text, plan.hash
        carry = lambda: prune.carry_out(vault, decision, now, digest, yes)  # noqa: E731
    else:  # an override demotion (a deletion closes every ask about what it deleted)
        entry = lifecycle.load_entry(vault, ask.target)
        after = lifecycle.new_text(entry, "archived", None)
        text = unified_diff([Change(entry.source.path, entry.rel, entry.source.text, after)])
        digest = file_hash(entry.source.text)
        title = f"archive {entry.rel} (label {lifecycle.OVERRIDE}; re-check failed: {ask.evidence})"

        def carry() -> Outcome:
            outcome = lifecycle.archive_after_yes(vault, decision, digest)
            journal.close(vault, ask.id, YES, now)
            return outcome

    return Item(ask, title, text, digest != ask.hash, digest, carry)


def review(
    vault: Path, now: dt.datetime, decide: Decide, shown: Shown | None = None
) -> ReviewResult:
    """Offer every pending ask to ``decide``; carry out yes, close no, keep skip.

    ``shown`` gets each outcome as soon as it is journaled, so the person sees what their
    answer did (and its undo id) before the next question. A STOP answer is journaled
    (the ask stays queued) and ends the walk.
    """
    journal.check(vault)  # before the first yes is carried out, not after it
    outcomes: list[Outcome] = []

    def done(ask: journal.Ask, kind: str, why: str, **kw: Any) -> None:
        """Journal one answer's outcome (with the ask it answers) and show it."""
        outcome = kw.pop("outcome", None) or Outcome(ask.action, ask.target, kind, why, **kw)
        extra = {**outcome.extra, "ask": ask.id, "result": ask.result, "drop": ask.drop}
        outcome = replace(outcome, evidence=outcome.evidence or ask.evidence, extra=extra)
        journal.append(vault, outcome, now)
        outcomes.append(outcome)
        if shown is not None:
            shown(outcome)

    for ask in journal.pending(vault):
        try:
            item = _item(vault, ask, now)
        except NotFoundError as exc:
            journal.close(vault, ask.id, "gone", now)
            done(ask, SILENCE, f"already gone ({exc}); closed")
            continue
        except VaultkeeperError as exc:
            done(ask, DEFER, f"cannot show it ({exc}); still queued")
            continue
        answer = decide(item)
        if answer == QUIT:
            break
        if answer == STOP:
            done(
                ask, DEFER, "review stopped by the person (end of input or interrupt); still queued"
            )
            break
        if answer == YES:  # only an explicit yes carries anything out
            try:
                outcome = item.carry()
            except VaultkeeperError as exc:
                outcome = Outcome(ask.action, ask.target, DEFER, f"{exc}; still queued")
            done(ask, "", "", outcome=outcome)
        elif answer == NO:
            journal.close(vault, ask.id, NO, now)
            done(ask, SILENCE, "a person answered no at review", extra={KEPT: True})
        else:
            done(ask, DEFER, "skipped at review; still queued")
    return ReviewResult(tuple(outcomes), len(journal.pending(vault)))
