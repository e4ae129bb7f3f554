"""The health signals ``status`` measures, one function each: figure, bound, verdict.

Split from vaultkeeper.status.health (which re-exports ``Signal``, the verdicts and
``age_text``): each signal reads one source (the saved report, the queue, the
linter, state/, the journal, _index.md) and says what acts on it, so a signal can
change without touching how ``status`` runs them in order.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vaultkeeper import config
from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.hosts.where import last_completed
from vaultkeeper.store.model import ParseError, parse_date, read_regular

if TYPE_CHECKING:
    from vaultkeeper.lint.summary import LintSummary
    from vaultkeeper.report.candidates import Report

OK, WARN, FAIL = "ok", "warn", "fail"
NOT_YET = "not yet"  # day one: nothing has happened yet, which is no failure


@dataclass(frozen=True)
class Signal:
    name: str  # stable key for --json
    label: str
    figure: int | float | None  # None: could not be measured
    shown: str  # the figure as a person reads it
    bound: str  # the healthy bound
    verdict: str  # ok | warn | fail
    detail: str = ""  # why, and the one command that acts on it

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def iso_utc(when: dt.datetime) -> str:
    return when.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def age_text(seconds: float) -> str:
    minutes = int(max(0.0, seconds) // 60)  # a clock set back reads as just now
    if minutes < 60:
        return f"{minutes} min"
    if minutes < 48 * 60:
        return f"{minutes // 60} h"
    return f"{minutes // 1440} days"


_KINDS = (
    ("promote", "promote candidates waiting", "vaultkeeper apply promote NAME --evidence RECEIPT"),
    ("prune", "prune candidates waiting", "vaultkeeper apply prune NAME (a person confirms)"),
    ("held_out", "held-out entries due", "vaultkeeper apply revalidate PATH --pass|--fail"),
)


def candidates_signals(report: Report | None, note: str | None, now: dt.datetime) -> list[Signal]:
    bound = f"< {config.STATUS_MAX_WAITING}"
    if report is None:
        why = note or "no report yet: run vaultkeeper scan"
        verdict = WARN if note else NOT_YET
        return [
            Signal(f"{k}_waiting", label, None, "-", bound, verdict, why) for k, label, _ in _KINDS
        ]
    age = f"report {age_text((now - report.generated_at).total_seconds())} old"
    out: list[Signal] = []
    for key, label, act in _KINDS:
        items = getattr(report, key)
        n = sum(1 for c in items if not c.handled)  # skipped or with a person: not waiting
        verdict = OK if n < config.STATUS_MAX_WAITING else WARN
        detail = age if n == 0 else f"{age}; act with: {act}"
        if len(items) > n:
            detail += f"; {len(items) - n} more decided since the scan (`vaultkeeper report`)"
        out.append(Signal(f"{key}_waiting", label, n, str(n), bound, verdict, detail))
    return out


def overdue_signal(report: Report | None, now: dt.datetime) -> Signal:
    """Held-out entries whose holdout_until passed more than a week ago (as of ``now``)."""
    days = config.STATUS_OVERDUE_DAYS
    label = f"held-out entries overdue by more than {days} days"
    if report is None:
        return Signal(
            "held_out_overdue",
            label,
            None,
            "-",
            "0",
            NOT_YET,
            "no report yet: run vaultkeeper scan",
        )
    late: list[str] = []
    for c in report.held_out:
        until = parse_date(c.holdout_until)
        if until is not None and (now.date() - until).days > days:
            late.append(c.path)
    detail = ", ".join(late[:5]) + (", ..." if len(late) > 5 else "")
    return _count("held_out_overdue", label, len(late), FAIL, detail)


def queue_signal(vault: Path) -> Signal:
    from vaultkeeper.apply.queue import pending

    asks = pending(vault)
    deletions = sum(1 for a in asks if a.action == "prune")
    other = len(asks) - deletions
    detail = _plural(deletions, "deletion") + (
        f", {_plural(other, 'other decision')}" if other else ""
    )
    detail = f"{detail}; a person answers them with: vaultkeeper review" if asks else ""
    return _count("waiting_for_person", "decisions waiting for a person", len(asks), WARN, detail)


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _count(name: str, label: str, n: int, bad: str, detail: str = "") -> Signal:
    """A count whose healthy bound is zero."""
    return Signal(name, label, n, str(n), "0", bad if n else OK, detail if n else "")


def lint_signals(vault: Path, now: dt.datetime) -> list[Signal]:
    """Lint errors, broken links and orphans, as the last whole-vault ``lint`` found them
    (kept under state/) while that is less than a day old; else linted now and kept again
    (lint.summary.current), so a vault nobody runs `lint` on still shows current figures.
    A vault with no state/ folder (someone's Obsidian vault) keeps none: it is linted here,
    as it always was."""
    from vaultkeeper.lint import summary

    if not summary.has_state(vault):
        return _lint_now(vault, now)
    try:
        found = summary.current(vault, now)  # kept, or linted now when a day old or none
    except VaultkeeperError as exc:
        return [Signal("lint_errors", "lint errors", None, "-", "0", FAIL, str(exc))]
    return _lint_rows(vault, found, f"lint {age_text((now - found.made).total_seconds())} ago")


_VK3 = "vaultkeeper lint --select VK3"
_LINT_ROWS = (
    ("lint_errors", "lint errors"),
    ("broken_links", "broken or ambiguous links"),
    ("orphans", f"orphans (not reachable from {config.INDEX_FILE})"),
)


def _lint_now(vault: Path, now: dt.datetime) -> list[Signal]:
    from vaultkeeper.lint.run import lint_vault
    from vaultkeeper.lint.summary import summarize

    try:
        result = lint_vault(vault)
    except VaultkeeperError as exc:
        return [Signal("lint_errors", "lint errors", None, "-", "0", FAIL, str(exc))]
    has_index = (vault / config.INDEX_FILE).is_file()
    return _lint_rows(vault, summarize(result, now, has_index), "")


def _lint_rows(vault: Path, found: LintSummary, age: str) -> list[Signal]:
    def said(hint: str) -> str:  # how old the figure is, then the command that acts on it
        return f"{age}; {hint}" if age else hint

    def count(name: str, label: str, n: int, bad: str, hint: str) -> Signal:
        return Signal(name, label, n, str(n), "0", bad if n else OK, said(hint) if n else age)

    # on a vault vaultkeeper did not create, a link to a note not written yet is a warning
    links_bad = FAIL if found.link_errors else WARN
    (_, errors_label), (_, links_label), (_, orphan_label) = _LINT_ROWS
    has_index = (vault / config.INDEX_FILE).is_file()
    if found.orphans is not None and has_index:
        orphan = count(
            "orphans", orphan_label, found.orphans, WARN, "see: vaultkeeper lint --select VK303"
        )
    elif not has_index:
        # nothing to be reachable from: not measured, not zero
        shown = f"skipped: no {config.INDEX_FILE}"
        orphan = Signal(
            "orphans", orphan_label, None, shown, "0", WARN, "create it: vaultkeeper index"
        )
    else:  # an _index.md made since that lint: not measured yet
        orphan = Signal(
            "orphans", orphan_label, None, "-", "0", NOT_YET, said("run `vaultkeeper lint`")
        )
    # the errors `vaultkeeper lint` counts: link errors included (they have a row of their own)
    errors = found.errors + found.link_errors
    return [
        count("lint_errors", errors_label, errors, FAIL, "see: vaultkeeper lint"),
        count("broken_links", links_label, found.links, links_bad, f"see: {_VK3}"),
        orphan,
    ]


def scan_age_signal(vault: Path, now: dt.datetime) -> Signal:
    limit = config.STATUS_SCAN_MAX_AGE_DAYS
    bound = f"<= {limit} days"
    label = "age of the last completed scan"
    hint = "the session-end hook probably never fires: check `vaultkeeper hooks status`"
    when = last_completed(vault)
    if when is None:
        first = "no scan yet: run `vaultkeeper scan`, and `vaultkeeper hooks install` to scan "
        return Signal(
            "last_scan_age", label, None, "never", bound, NOT_YET, first + "after every session"
        )
    seconds = max(0.0, (now - when).total_seconds())
    old = seconds > limit * 86400
    detail = f"completed {iso_utc(when)}" + (f"; {hint}" if old else "")
    return Signal(
        "last_scan_age",
        label,
        round(seconds / 3600, 1),
        age_text(seconds),
        bound,
        FAIL if old else OK,
        detail,
    )


def journal_signal(vault: Path) -> Signal:
    path = vault / config.STATE_DIR / config.JOURNAL_FILE
    size = path.stat().st_size if path.is_file() else 0
    lines = 0
    if size:
        with path.open("rb") as fh:
            lines = sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b""))
    limit = config.STATUS_JOURNAL_MAX_BYTES
    return Signal(
        "journal_bytes",
        "journal size",
        size,
        f"{size} bytes, {lines} records",
        f"<= {limit} bytes",
        OK if size <= limit else WARN,
        ""
        if size <= limit
        else f"archive {config.STATE_DIR}/{config.JOURNAL_FILE} and start afresh",
    )


def uses_signal(vault: Path) -> Signal:
    """The usage log's size: every counting reads it whole. Compacting (the next counting
    past USES_COMPACT_BYTES) keeps it small; past USES_WARN_BYTES it falls behind."""
    path = vault / config.STATE_DIR / config.USES_LOG_FILE
    size = path.stat().st_size if path.is_file() else 0
    limit = config.USES_WARN_BYTES
    return Signal(
        "uses_bytes",
        "usage log size",
        size,
        f"{size} bytes",
        f"<= {limit} bytes",
        OK if size <= limit else WARN,
        "" if size <= limit else "vaultkeeper ingest (any counting) compacts it; slow until then",
    )


def index_signal(vault: Path) -> Signal:
    budget = f"<= {config.INDEX_MAX_LINES} lines and <= {config.INDEX_MAX_BYTES} bytes"
    label = f"{config.INDEX_FILE} against its load budget"
    path = vault / config.INDEX_FILE
    try:
        raw = read_regular(path)  # refuses a FIFO instead of blocking on it
    except ParseError as exc:
        missing = not path.exists()
        # one rule for a missing index, whatever else the folder holds (.obsidian/ or not):
        # a warning, as for the orphans it leaves unmeasured; one that cannot be read fails
        return Signal(
            "index_budget",
            label,
            None,
            "missing" if missing else exc.reason,
            budget,
            WARN if missing else FAIL,
            "create it: vaultkeeper index",
        )
    lines = raw.count(b"\n") + (1 if raw and not raw.endswith(b"\n") else 0)
    over = lines > config.INDEX_MAX_LINES or len(raw) > config.INDEX_MAX_BYTES
    detail = "agents stop reading past the budget; split it: vaultkeeper index" if over else ""
    return Signal(
        "index_budget",
        label,
        lines,
        f"{lines} lines, {len(raw)} bytes",
        budget,
        FAIL if over else OK,
        detail,
    )
