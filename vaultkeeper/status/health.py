"""``status``: the vault's health signals at a glance, one function each: figure, bound,
verdict (ok / warn / fail), after KIP's health-signal table.

Each signal reads one source and says what acts on it: the candidates come from the
last scan's report as the files say now (scan/last.py), the lint figures from the
linter (lint/summary.py), the merge leftovers from the files git merges (read now: a
``git pull`` changes them without any vaultkeeper command running), the rest from
state/, the auto memory's folders, the recall's usage log and _index.md. ``hooks
status`` lives in vaultkeeper.hosts.where; its public names are importable from here.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vaultkeeper import config
from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.hosts.where import Where as Where
from vaultkeeper.hosts.where import fallback_log as fallback_log
from vaultkeeper.hosts.where import last_completed as last_completed
from vaultkeeper.hosts.where import where_installed as where_installed
from vaultkeeper.registry.blocks import registry_files
from vaultkeeper.report.candidates import iso, plural
from vaultkeeper.store.adherence import adherence
from vaultkeeper.store.model import ParseError, decode, parse_date, read_regular, split_lines

if TYPE_CHECKING:
    from vaultkeeper.lint.summary import LintSummary
    from vaultkeeper.report.candidates import Report

OK, WARN, FAIL = "ok", "warn", "fail"
NOT_YET = "not yet"  # day one: nothing has happened yet, which is no failure
_NO_REPORT = "no report yet: run vaultkeeper scan"


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


def candidates_signals(report: Report | None, now: dt.datetime) -> list[Signal]:
    bound = f"< {config.STATUS_MAX_WAITING}"
    if report is None:
        return [
            Signal(f"{k}_waiting", x, None, "-", bound, NOT_YET, _NO_REPORT) for k, x, _ in _KINDS
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
        return Signal("held_out_overdue", label, None, "-", "0", NOT_YET, _NO_REPORT)
    dates = [(c.path, parse_date(c.holdout_until)) for c in report.held_out]
    late = [path for path, until in dates if until is not None and (now.date() - until).days > days]
    detail = ", ".join(late[:5]) + (", ..." if len(late) > 5 else "")
    return _count("held_out_overdue", label, len(late), FAIL, detail)


def queue_signal(vault: Path) -> Signal:
    from vaultkeeper.apply.journal import pending

    asks = pending(vault)
    deletions = sum(1 for a in asks if a.action == "prune")
    other = len(asks) - deletions
    detail = plural(deletions, "deletion") + (f", {plural(other, 'other decision')}" * bool(other))
    detail = f"{detail}; a person answers them with: vaultkeeper review" if asks else ""
    return _count("waiting_for_person", "decisions waiting for a person", len(asks), WARN, detail)


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
        orphan = count("orphans", orphan_label, found.orphans, WARN, f"see: {_VK3}03")
    elif not has_index:  # nothing to be reachable from: not measured, not zero
        shown, why = f"skipped: no {config.INDEX_FILE}", "create it: vaultkeeper index"
        orphan = Signal("orphans", orphan_label, None, shown, "0", WARN, why)
    else:  # an _index.md made since that lint: not measured yet
        why = said("run `vaultkeeper lint`")
        orphan = Signal("orphans", orphan_label, None, "-", "0", NOT_YET, why)
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
        why = "no scan yet: run `vaultkeeper scan`, and `vaultkeeper hooks install` to scan "
        why += "after every session"
        return Signal("last_scan_age", label, None, "never", bound, NOT_YET, why)
    seconds = max(0.0, (now - when).total_seconds())
    old = seconds > limit * 86400
    detail = f"completed {iso(when)}" + (f"; {hint}" if old else "")
    hours, shown = round(seconds / 3600, 1), age_text(seconds)
    return Signal("last_scan_age", label, hours, shown, bound, FAIL if old else OK, detail)


def _log_signal(vault: Path, name: str, label: str, file: str, limit: int, act: str) -> Signal:
    """A ledger's size against its bound (``act``: what to do past it); the journal's
    records are counted too."""
    path = vault / config.STATE_DIR / file
    size = path.stat().st_size if path.is_file() else 0
    shown = f"{size} bytes"
    if file == config.JOURNAL_FILE:
        lines = 0
        if size:
            with path.open("rb") as fh:
                lines = sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b""))
        shown += f", {lines} records"
    ok = size <= limit
    verdict, detail = (OK, "") if ok else (WARN, act)
    return Signal(name, label, size, shown, f"<= {limit} bytes", verdict, detail)


def journal_signal(vault: Path) -> Signal:
    act = f"archive {config.STATE_DIR}/{config.JOURNAL_FILE} and start afresh"
    limit = config.STATUS_JOURNAL_MAX_BYTES
    return _log_signal(vault, "journal_bytes", "journal size", config.JOURNAL_FILE, limit, act)


def uses_signal(vault: Path) -> Signal:
    """The usage log's size: every counting reads it whole. Compacting (the next counting
    past USES_COMPACT_BYTES) keeps it small; past USES_WARN_BYTES it falls behind."""
    act = "vaultkeeper ingest (any counting) compacts it; slow until then"
    limit = config.USES_WARN_BYTES
    return _log_signal(vault, "uses_bytes", "usage log size", config.USES_LOG_FILE, limit, act)


def index_signal(vault: Path) -> Signal:
    budget = f"<= {config.INDEX_MAX_LINES} lines and <= {config.INDEX_MAX_BYTES} bytes"
    label = f"{config.INDEX_FILE} against its load budget"
    path = vault / config.INDEX_FILE
    try:
        raw = read_regular(path)  # refuses a FIFO instead of blocking on it
    except ParseError as exc:
        # one rule for a missing index, whatever else the folder holds (.obsidian/ or not):
        # a warning, as for the orphans it leaves unmeasured; one that cannot be read fails
        shown, verdict = ("missing", WARN) if not path.exists() else (exc.reason, FAIL)
        why = "create it: vaultkeeper index"
        return Signal("index_budget", label, None, shown, budget, verdict, why)
    lines = raw.count(b"\n") + (1 if raw and not raw.endswith(b"\n") else 0)
    over = lines > config.INDEX_MAX_LINES or len(raw) > config.INDEX_MAX_BYTES
    detail = "agents stop reading past the budget; split it: vaultkeeper index" if over else ""
    shown = f"{lines} lines, {len(raw)} bytes"
    return Signal("index_budget", label, lines, shown, budget, FAIL if over else OK, detail)


# -- what a git merge left in the files vaultkeeper writes (VK106, VK401) -------------


_SEE = "see: vaultkeeper lint --select VK106,VK401"


def _files(vault: Path) -> list[tuple[Path, str]]:
    """The files to check, none reached through a link leading out of the vault."""
    subs = f"{config.SUBINDEX_PREFIX}*.md"  # in _index/, or at the root from older versions
    found = [vault / config.INDEX_FILE, *sorted(vault.glob(subs))]
    folder = vault / config.SUBINDEX_DIR
    if folder.is_dir() and not folder.is_symlink():
        found += sorted(folder.glob(subs))
    found += registry_files(vault)
    skills = vault / config.SKILLS_DIR
    if skills.is_dir() and not skills.is_symlink():
        found += sorted(skills.glob(f"*/{config.SKILL_FILE}"))
    root = os.path.realpath(vault)
    inside = [p for p in found if os.path.realpath(p).startswith(root + os.sep)]
    return [(p, p.relative_to(vault).as_posix()) for p in inside]


def leftovers(vault: Path, kept: dict[str, list[Any]] | None = None) -> list[str]:
    """``path:line: what`` for each conflict hunk and each block without counters
    (``kept``: each registry file's, scan/last.py's ``Last.bare``; else parsed now)."""
    out: list[str] = []
    for path, rel in _files(vault):
        try:
            text = decode(read_regular(path, follow=False))
        except ParseError:
            continue  # gone, a link, unreadable: lint's VK001 says so
        if "\n=======" in text:
            from vaultkeeper.lint.format import check_conflicts
            from vaultkeeper.store.links import code_lines, find_fences

            lines = split_lines(text)
            code = code_lines(find_fences(text), len(lines))
            out += [f"{f.path}:{f.line}: {f.message}" for f in check_conflicts(rel, lines, code)]
        if rel.startswith(config.PATTERNS_DIR + "/"):
            if kept is None:
                from vaultkeeper.registry.blocks import parse_heads

                heads = parse_heads(path, rel, text)
                found = [(h.line, h.name) for h in heads if h.count_raw is None is h.last_used_raw]
            else:
                found = kept.get(rel, [])
            out += [f"{rel}:{line}: ### {name}: no counter lines" for line, name in found]
    return out


def merge_signal(vault: Path, kept: dict[str, list[Any]] | None = None) -> Signal:
    found = leftovers(vault, kept)
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    detail = f"{found[0]}{more}; {_SEE}" if found else ""
    return _count("merge_leftovers", "merge leftovers", len(found), FAIL, detail)


# -- the adopted auto-memory folders: one row a folder ---------------------------------


def native_signals(vault: Path, now: dt.datetime) -> list[Signal]:
    from vaultkeeper.native.folders import adopted

    folders = adopted(vault)
    if not folders:
        return []
    from vaultkeeper.native.review import review  # its regexes: only for a folder to review

    out: list[Signal] = []
    for folder in folders:
        r = review(vault, folder, now.date())
        caps = r.of("cap")
        shown = (
            f"{r.files} files, {r.used_recently} used in the last {config.NATIVE_RECENT_DAYS} "
            f"days, {r.never_used} never used; index {r.index_lines}/"
            f"{config.NATIVE_INDEX_MAX_LINES} lines, {r.index_bytes}/"
            f"{config.NATIVE_INDEX_MAX_BYTES} bytes"
        )
        bound = (
            f"<= {config.NATIVE_RECALL_MAX_FILES} files recalled, "
            f"<= {config.NATIVE_FILE_SHOWN_BYTES} bytes a file"
        )
        detail = f"{len(caps)} past a cap; see: vaultkeeper native review" if caps else ""
        name, label = f"native:{folder.project}", f"auto memory {folder.project}"
        verdict = WARN if caps else OK
        out.append(Signal(name, label, r.files, shown, bound, verdict, detail))
    return out


# -- the point-of-use recall: per lesson served, noise warns; the lessons it missed ----


def recall_signals(vault: Path) -> list[Signal]:
    found = adherence(vault)
    out: list[Signal] = []
    bound = f"cited or read after some showing, once shown {config.MOMENT_NOISE_MIN_SHOWN}+ times"
    for s in found.lessons:
        shown = f"shown {s.shown}, then cited {s.cited}, read {s.read}"
        verdict, why = (WARN, "noise: narrow its paths: or reword it") if s.noise else (OK, "")
        name, label = f"recall:{s.target}", f"recall {s.target}"
        out.append(Signal(name, label, s.shown, shown, bound, verdict, why))
    if found.lessons:
        names = ", ".join(f"{t} ({n})" for t, n in found.missed)
        n, verdict = len(found.missed), WARN if found.missed else OK
        shown = f"{n} lessons cited where not shown"
        out.append(Signal("recall:missed", "recall missed", n, shown, "0", verdict, names))
    return out


STEPS = (
    "report", "held-out dates", "queue", "lint", "scan age", "journal", "index", "auto memory",
    "recall",
)  # fmt: skip


@dataclass(frozen=True)
class Status:
    vault: str
    generated_at: str
    signals: tuple[Signal, ...]

    @property
    def verdict(self) -> str:
        verdicts = {s.verdict for s in self.signals}
        for verdict in (FAIL, WARN, NOT_YET):
            if verdict in verdicts:
                return verdict
        return OK

    def to_dict(self) -> dict[str, Any]:
        return {
            "vault": self.vault,
            "generated_at": self.generated_at,
            "verdict": self.verdict,
            "signals": [s.to_dict() for s in self.signals],
        }


def vault_status(
    vault: Path, now: dt.datetime, progress: Callable[[str], None] | None = None
) -> Status:
    """Measure every signal; ``progress`` hears each step's name before it runs."""
    from vaultkeeper.scan.last import derived

    step = progress or (lambda _name: None)
    step(STEPS[0])
    last = derived(vault)
    report = None if last is None else last.report
    signals = candidates_signals(report, now)
    parts: tuple[Callable[[], list[Signal]], ...] = (
        lambda: [overdue_signal(report, now)],
        lambda: [queue_signal(vault)],
        lambda: lint_signals(vault, now),
        lambda: [scan_age_signal(vault, now)],
        lambda: [journal_signal(vault), uses_signal(vault)],
        lambda: [
            index_signal(vault),
            merge_signal(vault, last and last.bare),
        ],  # and what a git merge left
        lambda: native_signals(vault, now),
        lambda: recall_signals(vault),  # the point-of-use recall's adherence
    )
    for name, part in zip(STEPS[1:], parts, strict=True):
        step(name)
        signals.extend(part())
    return Status(str(vault), iso(now), tuple(signals))
