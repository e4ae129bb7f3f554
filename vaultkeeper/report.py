"""The scanner's report: candidates, their renderings, and the saved last report.

A session-end hook's stdout is lost, so every completed scan also saves its report
atomically to ``state/last-report.json``; ``vaultkeeper report`` (and ``--brief``, the
next session's start hook) print it from there.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.lazyre import lazy
from vaultkeeper.secrets import needs_serving, served, strip_controls

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing too: a scan has no use for it at run time
    from typing import Any

    from vaultkeeper.decay import SkillUnused, Stale
    from vaultkeeper.duplicates import DuplicatePair
    from vaultkeeper.model import Problem

PROMOTE = "promote"
PRUNE = "prune"
HELD_OUT = "held_out"
KINDS = (PRUNE, PROMOTE, HELD_OUT)  # the order of the summary line
_LABELS = {PRUNE: "prune", PROMOTE: "promote", HELD_OUT: "held-out"}


@dataclass(frozen=True)
class Candidate:
    """One entry on one list, with the figures that put it there."""

    kind: str  # PROMOTE | PRUNE | HELD_OUT
    name: str
    path: str  # vault-relative
    line: int  # the ### heading of a block; the holdout_until line of a memory file
    hash: str  # sha256 of the block's text or the whole file: the applier checks it
    count: int | None = None
    last_used: str | None = None
    idle_days: int | None = None
    holdout_until: str | None = None
    days_due: int | None = None  # days since holdout_until; 0 on the day itself
    status: str | None = None
    label: str | None = None
    weight: str | None = None  # the label's promotion weight (config.LABEL_WEIGHTS)
    falsification_condition: str | None = None
    handled: str | None = None  # decided since the scan, file unchanged: skipped, queued, kept

    def figures(self) -> str:
        if self.kind == HELD_OUT:
            due = (
                "due today"
                if self.days_due == 0
                else f"due {_count(self.days_due or 0, 'day')} ago"
            )
            parts = [f"holdout_until {self.holdout_until} ({due})"]
            parts.append(f"status {self.status}" if self.status else "no status")
            if self.label:
                parts.append(f"label {self.label}" + (f" ({self.weight})" if self.weight else ""))
            return ", ".join(parts)
        used = "unreadable" if self.last_used is None else self.last_used
        if self.idle_days is None:
            idle = ""
        elif self.idle_days < 0:  # `scan --as-of` (or VAULTKEEPER_TODAY) before its last use
            idle = f" ({_count(-self.idle_days, 'day')} after this report's date)"
        else:
            idle = f" (idle {_count(self.idle_days, 'day')})"
        return f"success count {self.count}, last used {used}{idle}"

    def to_dict(self, checked: bool = False) -> dict[str, Any]:
        """Every field (but kind), text read from the vault served masked (credentials)
        and without controls; ``checked``: the caller knows none of it needs that."""
        # every field is a plain value: no need for asdict's deep copy (a big report);
        # __dict__ holds the fields in their order
        out = dict(self.__dict__)
        del out["kind"]
        if not checked and needs_serving(" ".join(self.texts())):
            for name in _TEXT_FIELDS:
                if out[name] is not None:
                    out[name] = served(out[name])
        return out

    def texts(self) -> list[str]:
        """The fields whose text comes from the vault's files."""
        return [t for t in (getattr(self, name) for name in _TEXT_FIELDS) if t is not None]


_CANDIDATE_FIELDS = tuple(f.name for f in fields(Candidate) if f.name != "kind")
# the fields whose text comes from the vault's files (hash, dates and counts are ours)
_TEXT_FIELDS = ("name", "path", "status", "label", "falsification_condition", "last_used")


@dataclass(frozen=True)
class Report:
    """One scan's three lists and its problems, as printed, saved and applied from."""

    vault: str
    generated_at: dt.datetime  # UTC
    promote: tuple[Candidate, ...]
    prune: tuple[Candidate, ...]
    held_out: tuple[Candidate, ...]
    problems: tuple[Problem, ...]
    duration_ms: int = 0
    updated_at: dt.datetime | None = None  # the last apply that brought it up to date
    # issue 13's extra sections (vaultkeeper/upkeep.py); not part of the summary line
    duplicates: tuple[DuplicatePair, ...] = ()
    stale: tuple[Stale, ...] = ()
    skills_unused: tuple[SkillUnused, ...] = ()

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
            "updated_at": None if self.updated_at is None else iso(self.updated_at),
            **_upkeep().to_dict(self),
        }


def _problem_dict(problem: Problem) -> dict[str, Any]:
    data = problem.to_dict()
    data["path"], data["reason"] = served(problem.path), served(problem.reason)
    return data


def _upkeep() -> Any:
    from vaultkeeper import upkeep  # only a report with its extra sections needs it

    return upkeep


def iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _count(n: int, unit: str) -> str:
    return f"{n} {unit}" if n == 1 else f"{n} {unit}s"


def age_text(made: dt.datetime, now: dt.datetime) -> str:
    """How long ago ``made`` was, in the largest unit that reads well."""
    seconds = int((now - made).total_seconds())
    if seconds < 0:
        return "in the future (check the clock)"
    if seconds < 90:
        return f"{_count(seconds, 'second')} ago"
    if seconds < 90 * 60:
        return f"{_count(seconds // 60, 'minute')} ago"
    if seconds < 48 * 3600:
        return f"{_count(seconds // 3600, 'hour')} ago"
    return f"{_count(seconds // 86400, 'day')} ago"


_LINE_BREAKS = lazy(r"[ \t]*[\r\n\v\f\x85\u2028\u2029]+[ \t]*")
_BREAK = re.compile(r"[\r\n\v\f\x85\u2028\u2029]")  # searched for alone: far faster


def one_line(text: str) -> str:
    """Line breaks -> one space: a value read from a file can't add lines to the output.

    Credentials are masked and terminal control characters stripped as well
    (vaultkeeper.secrets.served): every line the report and the brief print goes
    through here.
    """
    return served(_LINE_BREAKS.sub(" ", text))


def candidate_line(c: Candidate) -> str:
    return one_line(_raw_line(c))


def render_text(report: Report) -> list[str]:
    """stdout: the summary line, then one line per candidate (prune, promote, held-out)."""
    raw = [_raw_line(c) for items in report.lists().values() for c in items]
    raw.extend(_upkeep().text_lines(report))
    return [report.summary(), *one_lines(raw)]


def one_lines(texts: list[str]) -> list[str]:
    """one_line of each text, with one check for them all: a big report's lines almost
    never hold a line break, a credential or a control character."""
    whole = "".join(texts)
    if not _BREAK.search(whole) and not needs_serving(whole):
        return texts
    return [one_line(text) for text in texts]


def _raw_line(c: Candidate) -> str:
    handled = f" -- {c.handled}" if c.handled else ""
    return f"{_LABELS[c.kind]:<9} {c.name} -- {c.figures()} -- {c.path}:{c.line}{handled}"


def render_problems(report: Report) -> list[str]:
    """stderr: one ``path[:line]: reason`` line per problem."""
    return [one_line(str(p)) for p in report.problems]


# -- the saved last report ---------------------------------------------------------------


def report_path(vault: Path) -> Path:
    return vault / config.STATE_DIR / config.LAST_REPORT_FILE


def save_report(vault: Path, report: Report, fsync_dir: bool = True) -> None:
    """Write state/last-report.json; ``fsync_dir=False`` when the caller's next write
    in state/ flushes the folder (a scan's: the state file's completion)."""
    from vaultkeeper.fsio import atomic_write

    # compact: the C encoder is several times faster than an indented dump
    text = json.dumps(report.to_dict()) + "\n"
    atomic_write(report_path(vault), text, fsync_dir=fsync_dir)


def from_dict(data: Mapping[str, Any]) -> Report:
    """The inverse of Report.to_dict; raises KeyError/TypeError/ValueError on a bad file."""
    from vaultkeeper.model import Problem  # not on the scanner's no-op path

    names = set(_CANDIDATE_FIELDS)

    def candidates(kind: str) -> tuple[Candidate, ...]:
        items = data[kind]
        if not isinstance(items, list):
            raise TypeError(f"{kind} is not a list")
        return tuple(
            Candidate(kind=kind, **{k: v for k, v in i.items() if k in names}) for i in items
        )

    problems = tuple(Problem(p["path"], p.get("line"), p["reason"]) for p in data["problems"])
    updated = data.get("updated_at")
    return Report(
        vault=str(data["vault"]),
        generated_at=_utc(data["generated_at"]),
        promote=candidates(PROMOTE),
        prune=candidates(PRUNE),
        held_out=candidates(HELD_OUT),
        problems=problems,
        duration_ms=int(data.get("duration_ms", 0)),
        updated_at=None if updated is None else _utc(updated),
        **_upkeep().from_dict(data),
    )


def _utc(text: str) -> dt.datetime:
    return dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.timezone.utc)


@dataclass(frozen=True)
class Saved:
    """The last completed report, if there is a readable one; ``note`` says why not."""

    report: Report | None
    note: str | None = None


def load_report(vault: Path) -> Saved:
    path = report_path(vault)
    where = f"{config.STATE_DIR}/{config.LAST_REPORT_FILE}"
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Saved(None)
    except OSError as exc:
        return Saved(None, f"{where}: unreadable ({exc.strerror}); ignored")
    try:
        data = json.loads(raw)
        if not isinstance(data, dict):
            return Saved(None, f"{where}: not a report (JSON, not an object); ignored")
        return Saved(from_dict(data))
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
        return Saved(None, f"{where}: not a report ({_why(exc)}); ignored")


def _why(exc: Exception) -> str:
    """What is wrong with the file, in words: a note shows no Python exception text."""
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON: line {exc.lineno} column {exc.colno}: {exc.msg}"
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    if isinstance(exc, KeyError):
        return f"no {json.dumps(exc.args[0]) if exc.args else 'expected'} field"
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return "a field holds the wrong kind of value"


# -- the brief: the next session's start hook prints this into the agent's context -----

_ITEM_MAX = 300  # one candidate's line in the brief, so one long value cannot crowd out the rest


def _brief_sections(
    report: Report, receipts: Mapping[str, str] | None = None
) -> list[tuple[str, list[str]]]:
    vk = f"vaultkeeper --vault {shlex.quote(report.vault)}"
    intros = {
        PROMOTE: (
            f"Promote eligible (success count >= {config.PROMOTE_MIN_COUNT}, not yet promoted). "
            "Promotion needs an evidence receipt (a URL or path:line, or the latest receipt "
            "shown, recorded from a session) and writes a skill:\n"
            f"  {vk} apply promote NAME --evidence RECEIPT"
        ),
        PRUNE: (
            f"Prune candidates (success count 0, last used more than {config.PRUNE_IDLE_DAYS} "
            "days ago). Deletion happens only on a person's explicit yes at a terminal; "
            "from an agent's shell the request waits in a queue for `vaultkeeper review`:\n"
            f"  {vk} apply prune NAME"
        ),
        HELD_OUT: (
            "Held-out due (holdout_until has passed). Each is re-checked against its "
            "falsification_condition; --pass sets status active, --fail sets status archived:\n"
            f"  {vk} apply revalidate PATH --pass|--fail --evidence RECEIPT"
        ),
    }
    out: list[tuple[str, list[str]]] = []
    for kind in (PROMOTE, PRUNE, HELD_OUT):
        items = report.lists()[kind]
        if not items:
            continue
        lines = []
        for c in items:
            if kind == HELD_OUT:  # revalidate takes the path
                line = f"- {c.path}: {c.figures()}"
            else:
                line = f"- {c.name}: {c.figures()} ({c.path}:{c.line})"
            if c.falsification_condition:
                line += f"; falsification_condition: {c.falsification_condition}"
            if kind == PROMOTE and receipts and c.name in receipts:
                line += f"; latest receipt: {receipts[c.name]}"
            line = one_line(line)  # a multi-line YAML value must not forge brief lines
            if len(line) > _ITEM_MAX:
                line = line[: _ITEM_MAX - 3] + "..."
            lines.append(line)
        out.append((intros[kind], lines))
    return out


def render_brief(
    report: Report,
    now: dt.datetime,
    limit: int = config.BRIEF_MAX_CHARS,
    receipts: Mapping[str, str] | None = None,
) -> str:
    """Plain text for a coding agent's next session: never more than ``limit`` characters.

    Every kind of candidate keeps its heading and command; when the lists are too long,
    each is cut fairly and ends with an ``... and N more`` line.
    """
    vk = f"vaultkeeper --vault {shlex.quote(report.vault)}"
    head = [
        report.summary(),
        f"Last scan of the memory vault {strip_controls(report.vault)}: "
        f"{iso(report.generated_at)} "
        f"({age_text(report.generated_at, now)}). "
        "The scanner lists candidates; it changes nothing.",
    ]
    if report.problems:
        head.append(
            f"Problems (unreadable files, blocks or dates): {len(report.problems)}; "
            f"`{vk} report` lists them."
        )
    sections = _brief_sections(report, receipts)
    tail = (
        [
            f"Leaving a candidate alone is recorded with: {vk} apply skip NAME --reason TEXT",
            "Each candidate's hash is in `report --json`; `--expect-hash HASH` on an apply "
            "command refuses an entry that changed since this report.",
        ]
        if sections
        else ["Nothing is waiting."]
    )
    more = "  ... and {} more (`{} report --json` lists every one)"
    fixed = sum(len(x) + 1 for x in head + tail) + sum(
        len(intro) + 2 + len(more.format(len(items), vk)) + 1 for intro, items in sections
    )
    budget = limit - fixed
    kept: dict[int, list[str]] = {}
    # smallest lists first, so what one list leaves unused goes to the longer ones
    order = sorted(range(len(sections)), key=lambda i: sum(len(x) + 1 for x in sections[i][1]))
    for n, i in enumerate(order):
        allowance = budget // (len(order) - n) if budget > 0 else 0
        used, lines = 0, []
        for line in sections[i][1]:
            if used + len(line) + 1 > allowance:
                break
            lines.append(line)
            used += len(line) + 1
        kept[i] = lines
        budget -= used
    out = list(head)
    for i, (intro, items) in enumerate(sections):
        out.extend(["", intro, *kept[i]])
        if len(kept[i]) < len(items):
            out.append(more.format(len(items) - len(kept[i]), vk))
    # issue 13's sections (duplicates, stale lessons, unused skills) come after the spec's
    # lists and only whole, where they fit: they never take the lists' room
    extra = [x for intro, items in _upkeep().brief_sections(report) for x in ("", intro, *items)]
    skip = [f"Leaving one alone is recorded with: {vk} apply skip NAME --reason TEXT"]
    with_extra = "\n".join([*out, *extra, "", *(tail if sections else skip)]) + "\n"
    out.extend(["", *tail])
    text = "\n".join(out) + "\n"
    if extra and len(with_extra) <= limit:
        text = with_extra
    return text if len(text) <= limit else text[: limit - 4] + "...\n"
