"""Keep the saved report true after an apply: ``state/last-report.json`` follows each decision.

The next plain ``scan`` is throttled for up to an hour, and ``report``, ``status`` and the
next session's brief all read the saved report; without this, a lesson just re-validated
would still be listed as overdue and the next agent would be told to redo it. So every
decision that changes an entry re-classifies the files it touched (with the scan's own
rules, as of the report's date) and replaces their candidates; one that leaves the file
as it was (skip, a question queued for a person, a person's no) marks the candidate
``handled``. The summary line is computed from the lists, so it follows them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.apply.decision import ASK, DEFER, SILENCE, Outcome
from vaultkeeper.apply.gate import looks_like_path
from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.report.candidates import (
    HELD_OUT,
    KINDS,
    PROMOTE,
    PRUNE,
    Candidate,
    Report,
    load_report,
    save_report,
)
from vaultkeeper.store.fsio import writer_lock
from vaultkeeper.store.model import Problem, is_memory_path
from vaultkeeper.upkeep.decay import Usage

KEPT = "kept"  # an outcome's extra key: a person answered no, the entry stays as it is


def mark(outcome: Outcome, today: dt.date) -> str | None:
    """What a decision that changed no file says about its candidate, if anything."""
    if outcome.action == "merge":  # its pair is no promote/prune candidate: KEEP's stay as they are
        return None
    if outcome.outcome == ASK:
        return f"waiting for a person: `vaultkeeper review` (ask {outcome.id})"
    if outcome.outcome != SILENCE:
        return None
    if outcome.action == "skip":
        return f"{outcome.reason} ({today.isoformat()})"
    if outcome.extra.get(KEPT):
        return f"kept: a person answered no ({today.isoformat()})"
    return None


def _touched(lists: dict[str, list[Candidate]], outcome: Outcome) -> set[str]:
    """The vault-relative files whose candidates the decision may have changed."""
    target = outcome.target
    paths = {str(p) for p in (outcome.extra.get("path"), outcome.extra.get("source")) if p}
    paths.update(str(p) for p in outcome.extra.get("files") or ())  # a merge edits several
    if looks_like_path(target):
        paths.add(target)
    else:  # a registry block's name: the files the report lists it in
        paths.update(c.path for items in lists.values() for c in items if c.name == target)
    return paths


def _reclassify(
    vault: Path, path: str, today: dt.date
) -> tuple[list[Candidate], list[Problem]] | None:
    """The file's candidates now, by the scan's rules; None for a file the scan never reads."""
    from vaultkeeper.registry.blocks import load_heads
    from vaultkeeper.scan.classify import registry_candidates
    from vaultkeeper.scan.memory import held_out_candidates

    problems: list[Problem] = []
    full = vault / path
    if path.startswith(config.PATTERNS_DIR + "/") and path.endswith(".md"):
        heads, problems = load_heads(vault, [full] if full.is_file() else [])
        promote, prune = registry_candidates(heads, today, problems)
        return promote + prune, problems
    if is_memory_path(path) and path.endswith(".md"):
        files = [f"{vault}/{path}"] if full.is_file() else []
        return held_out_candidates(vault, today, problems, files), problems
    return None


def _insert(
    items: list[Candidate], old: Sequence[Candidate], new: list[Candidate], path: str
) -> None:
    """Put ``new`` where the file's candidates were (or where its path sorts), in line order."""
    at = next((i for i, c in enumerate(old) if c.path == path), None)
    if at is not None:
        at = sum(1 for c in old[:at] if c.path != path)
    else:
        at = next((i for i, c in enumerate(items) if c.path > path), len(items))
    items[at:at] = sorted(new, key=lambda c: c.line)


def updated(
    vault: Path,
    report: Report,
    outcomes: Iterable[Outcome],
    now: dt.datetime,
    paths: Iterable[str] = (),
    before: Mapping[str, str] | None = None,
    usage: Usage | None = None,
) -> Report:
    """``report`` with the candidates of every file the outcomes (and ``paths``) touched
    made true again (``before``: see resync_upkeep.refreshed)."""
    today = report.generated_at.date()  # the rest of the report is as of its scan
    lists = {kind: list(items) for kind, items in report.lists().items()}
    problems = list(report.problems)
    touched = set(paths)
    given = bool(touched)
    for path in sorted(touched):
        problems = _refresh(vault, lists, problems, path, today)
    for outcome in outcomes:
        if outcome.dry_run or outcome.outcome == DEFER:
            continue
        for path in sorted(_touched(lists, outcome)):
            touched.add(path)
            problems = _refresh(vault, lists, problems, path, today)
        note = mark(outcome, now.date())
        if note is not None:
            for kind in KINDS:
                lists[kind] = [
                    c._replace(handled=note) if _names(c, outcome.target) else c
                    for c in lists[kind]
                ]
    from vaultkeeper.apply.resync_upkeep import refreshed  # the extra sections follow too

    if before is None and not given and all(_left_alone(o) for o in outcomes):
        before = {}  # nothing changed a registry file: no block's words either
    return report._replace(
        promote=tuple(lists[PROMOTE]),
        prune=tuple(lists[PRUNE]),
        held_out=tuple(lists[HELD_OUT]),
        problems=tuple(problems),
        **refreshed(vault, report, touched, today, before, usage),
    )


def _refresh(
    vault: Path,
    lists: dict[str, list[Candidate]],
    problems: list[Problem],
    path: str,
    today: dt.date,
) -> list[Problem]:
    """Replace ``path``'s candidates in ``lists`` (and its problems) with what it holds now."""
    fresh = _reclassify(vault, path, today)
    found, found_problems = fresh if fresh is not None else ([], [])
    for kind in KINDS:
        old = lists[kind]
        kept = {(c.name, c.hash): c.handled for c in old if c.path == path and c.handled}
        mine = [c._replace(handled=kept.get((c.name, c.hash))) for c in found if c.kind == kind]
        lists[kind] = [c for c in old if c.path != path]
        _insert(lists[kind], old, mine, path)
    if fresh is None:
        return problems
    return [p for p in problems if p.path != path] + found_problems


def _left_alone(outcome: Outcome) -> bool:
    """A decision that changed no entry: skipped, queued for a person, kept, refused."""
    if outcome.extra.get("stopped"):  # refused part-way: some writes landed
        return False
    return outcome.dry_run or outcome.outcome in (ASK, SILENCE, DEFER)


def _names(c: Candidate, target: str) -> bool:
    """Does a decision's target (a block's name, or a file's path) mean this candidate?"""
    if looks_like_path(target):
        return c.path == target
    return c.kind != HELD_OUT and c.name == target


def resync(
    vault: Path,
    outcomes: Sequence[Outcome],
    now: dt.datetime,
    *,
    paths: Iterable[str] = (),
    before: Mapping[str, str] | None = None,
    usage: Usage | None = None,
) -> str | None:
    """Bring the saved report up to date with ``outcomes``; None, or why it could not be.

    ``paths`` (vault-relative) are files changed otherwise, e.g. a registry file whose
    counts ``use`` or an ingest of uses moved; ``before``, what the registry files among
    them held before, when the caller knows (resync_upkeep.refreshed). No saved report
    (no scan yet, or one vaultkeeper cannot read) is left as it is: there is nothing to
    keep true, and ``report`` already says why.
    """
    paths = tuple(paths)
    if not paths and all(o.dry_run or o.outcome == DEFER for o in outcomes):
        return None
    where = f"{config.STATE_DIR}/{config.LAST_REPORT_FILE}"
    try:
        with writer_lock(vault):
            saved = load_report(vault).report
            if saved is None:
                return None
            fresh = updated(vault, saved, outcomes, now, paths, before, usage)
            if fresh != saved:
                utc = now.astimezone(dt.timezone.utc).replace(microsecond=0)
                save_report(vault, fresh._replace(updated_at=utc))
    except (OSError, VaultkeeperError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return f"{where} not updated ({why}); the next `vaultkeeper scan --force` rewrites it"
    return None
