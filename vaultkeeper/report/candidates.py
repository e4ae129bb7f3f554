"""The scanner's report: candidates and their renderings.

A session-end hook's stdout is lost; ``vaultkeeper report`` (and ``--brief``, the next
session's start hook) show the last completed scan's report, derived from the vault's
files by scan/last.py. The text helpers every rendering shares (times, ages, one-line
values) are here too. The brief is brief.py's, which a scan does not import.

``print_report`` puts a report on the standard streams: its problems to stderr, its text
or JSON to stdout.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import TYPE_CHECKING, Any, NamedTuple

from vaultkeeper import config
from vaultkeeper.output import Shown, show
from vaultkeeper.store.secrets import needs_serving, served

if TYPE_CHECKING:  # only for the annotations
    from vaultkeeper.store.model import Problem
    from vaultkeeper.upkeep.decay import SkillUnused, Stale
    from vaultkeeper.upkeep.duplicates import DuplicatePair

# -- text every rendering shares -------------------------------------------------------


def iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def plural(n: int, unit: str) -> str:
    return f"{n} {unit}" if n == 1 else f"{n} {unit}s"


def age_text(made: dt.datetime, now: dt.datetime) -> str:
    """How long ago ``made`` was, in the largest unit that reads well."""
    seconds = int((now - made).total_seconds())
    if seconds < 0:
        return "in the future (check the clock)"
    if seconds < 90:
        return f"{plural(seconds, 'second')} ago"
    if seconds < 90 * 60:
        return f"{plural(seconds // 60, 'minute')} ago"
    if seconds < 48 * 3600:
        return f"{plural(seconds // 3600, 'hour')} ago"
    return f"{plural(seconds // 86400, 'day')} ago"


_LINE_BREAKS = re.compile(r"[ \t]*[\r\n\v\f\x85\u2028\u2029]+[ \t]*")


def one_line(text: str) -> str:
    """Line breaks -> one space: a value read from a file can't add lines to the output.

    Credentials are masked and terminal control characters stripped as well
    (vaultkeeper.store.secrets.served): every line the report and the brief print goes
    through here.
    """
    return _LINE_BREAKS.sub(" ", served(text))  # served first: a CR may cut a token


def one_lines(texts: list[str]) -> list[str]:
    """one_line of each text, with one check for them all: a big report's lines almost
    never hold a line break, a credential or a control character."""
    whole = "".join(texts)
    if not needs_serving(whole):  # which holds every line break too: none is printable
        return texts
    return [one_line(text) for text in texts]


# -- the records ---------------------------------------------------------------------------

PROMOTE = "promote"
PRUNE = "prune"
HELD_OUT = "held_out"
KINDS = (PRUNE, PROMOTE, HELD_OUT)  # the order of the summary line
_LABELS = {PRUNE: "prune", PROMOTE: "promote", HELD_OUT: "held-out"}


# The records are typing.NamedTuple classes (a scan builds one per entry: cheaper than a
# frozen dataclass). A subclass carries the methods.
class _CandidateFields(NamedTuple):
    kind: str  # PROMOTE | PRUNE | HELD_OUT
    name: str
    path: str  # vault-relative
    line: int  # the ### heading of a block; the holdout_until line of a memory file
    hash: str  # sha256 of the block's text or the whole file: the applier checks it
    count: int | None = None  # type: ignore[assignment]  # over tuple.count: unused
    last_used: str | None = None
    idle_days: int | None = None
    holdout_until: str | None = None
    days_due: int | None = None  # days since holdout_until; 0 on the day itself
    status: str | None = None
    label: str | None = None
    weight: str | None = None  # the label's promotion weight (config.LABEL_WEIGHTS)
    falsification_condition: str | None = None
    handled: str | None = None  # decided since the scan, file unchanged: skipped, queued, kept


class _ReportFields(NamedTuple):
    vault: str
    generated_at: dt.datetime  # UTC
    promote: tuple[Candidate, ...]
    prune: tuple[Candidate, ...]
    held_out: tuple[Candidate, ...]
    problems: tuple[Problem, ...]
    duration_ms: int = 0
    # the upkeep sections (vaultkeeper/upkeep/sections.py); not part of the summary line
    duplicates: tuple[DuplicatePair, ...] = ()
    stale: tuple[Stale, ...] = ()
    skills_unused: tuple[SkillUnused, ...] = ()
    anchors: tuple[Any, ...] = ()  # vaultkeeper/anchors/vault.py Finding
    suggested: tuple[Any, ...] = ()  # vaultkeeper/anchors/format.py Suggestion


class Candidate(_CandidateFields):
    """One entry on one list, with the figures that put it there."""

    __slots__ = ()

    def figures(self) -> str:
        if self.kind == HELD_OUT:
            ago = f"due {plural(self.days_due or 0, 'day')} ago"
            due = "due today" if self.days_due == 0 else ago
            parts = [f"holdout_until {self.holdout_until} ({due})"]
            parts.append(f"status {self.status}" if self.status else "no status")
            if self.label:
                parts.append(f"label {self.label}" + (f" ({self.weight})" if self.weight else ""))
            return ", ".join(parts)
        used = "unreadable" if self.last_used is None else self.last_used
        if self.idle_days is None:
            idle = ""
        elif self.idle_days < 0:  # `scan --as-of` (or VAULTKEEPER_TODAY) before its last use
            idle = f" ({plural(-self.idle_days, 'day')} after this report's date)"
        else:
            idle = f" (idle {plural(self.idle_days, 'day')})"
        return f"success count {self.count}, last used {used}{idle}"

    def to_dict(self, checked: bool = False) -> dict[str, Any]:
        """Every field (but kind), text read from the vault served masked (credentials)
        and without controls; ``checked``: the caller knows none of it needs that."""
        out = self._asdict()  # the fields in their order
        del out["kind"]
        if not checked and needs_serving(" ".join(self.texts())):
            for name in _TEXT_FIELDS:
                if out[name] is not None:
                    out[name] = served(out[name])
        return out

    def texts(self) -> list[str]:
        """The fields whose text comes from the vault's files."""
        return [t for t in (getattr(self, name) for name in _TEXT_FIELDS) if t is not None]


# the fields whose text comes from the vault's files (hash, dates and counts are ours)
_TEXT_FIELDS = ("name", "path", "status", "label", "falsification_condition", "last_used")


class Report(_ReportFields):
    """One scan's three lists and its problems, as printed, kept and applied from."""

    __slots__ = ()

    def lists(self) -> dict[str, tuple[Candidate, ...]]:
        return {PRUNE: self.prune, PROMOTE: self.promote, HELD_OUT: self.held_out}

    def summary(self) -> str:
        return (
            f"{config.SUMMARY_PREFIX} prune candidates {len(self.prune)} | "
            f"promote eligible {len(self.promote)} | held-out due {len(self.held_out)}"
        )

    def figures(self) -> dict[str, int]:
        """The counts kept in the state file's ``perTask.selfMaintain``."""
        return {
            "prune": len(self.prune),
            "promote": len(self.promote),
            "heldOut": len(self.held_out),
            "problems": len(self.problems),
            "durationMs": self.duration_ms,
        }

    def to_dict(self) -> dict[str, Any]:
        # one check for all candidates (a big report's are almost always clean), then
        # candidate by candidate only when some text needs serving
        candidates = (*self.promote, *self.prune, *self.held_out)
        clean = not needs_serving("".join(t for c in candidates for t in c.texts()))
        return {
            "vault": self.vault,
            "generated_at": iso(self.generated_at),
            "summary": {kind: len(items) for kind, items in self.lists().items()},
            "promote": [c.to_dict(clean) for c in self.promote],
            "prune": [c.to_dict(clean) for c in self.prune],
            "held_out": [c.to_dict(clean) for c in self.held_out],
            "problems": [_problem_dict(p) for p in self.problems],
            "duration_ms": self.duration_ms,
            **_upkeep().to_dict(self),
            **_anchors_dict(self),
        }


def _problem_dict(problem: Problem) -> dict[str, Any]:
    data = problem.to_dict()
    data["path"], data["reason"] = served(problem.path), served(problem.reason)
    return data


def _upkeep() -> Any:
    from vaultkeeper.upkeep import sections  # only a report with its extra sections needs it

    return sections


def _anchor_section() -> Any:
    from vaultkeeper.report import anchors  # only a report with anchors needs it

    return anchors


def _anchors_dict(report: Report) -> dict[str, Any]:
    if report.anchors or report.suggested:
        return _anchor_section().to_dict(report)  # type: ignore[no-any-return]
    return {"anchors": [], "suggested_anchors": []}  # its to_dict of none, without it


def render_text(report: Report) -> list[str]:
    """stdout: the summary line, then one line per candidate (prune, promote, held-out)."""
    raw = [_raw_line(c) for items in report.lists().values() for c in items]
    raw.extend(_upkeep().text_lines(report))
    if report.anchors or report.suggested:
        raw.extend(_anchor_section().text_lines(report))
    return [report.summary(), *one_lines(raw)]


def _raw_line(c: Candidate) -> str:
    handled = f" -- {c.handled}" if c.handled else ""
    return f"{_LABELS[c.kind]:<9} {c.name} -- {c.figures()} -- {c.path}:{c.line}{handled}"


def render_problems(report: Report) -> list[str]:
    """stderr: one ``path[:line]: reason`` line per problem."""
    return [one_line(str(p)) for p in report.problems]


def shown_report(report: Report, as_json: bool, made: str | None = None) -> Shown:
    """The report as a command shows it: its problems to stderr, then its JSON or its
    text (with ``made``, when given, as its second line)."""
    problems = ("\n".join(render_problems(report)),) if report.problems else ()
    if as_json:
        return Shown(report.to_dict(), (), problems)
    lines = render_text(report)
    if made is not None:
        lines.insert(1, made)
    return Shown(None, tuple(lines), problems)


def print_report(report: Report, as_json: bool) -> None:
    """``shown_report`` on the standard streams."""
    show(shown_report(report, as_json), as_json)
