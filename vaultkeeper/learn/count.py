"""Turn use events into counted reuse: the one door for ``ingest`` and MCP's ``cite``.

A session counts at most once per pattern: the key is (session, pattern), and the
usage log (uses.py) remembers which keys were counted, so recording the same events
again (a transcript ingested twice, or a longer copy of it) counts nothing twice.
Each counted use goes through the same one-line edits as ``use`` (count + n, last
used = the use's date, never moved backwards) and is journaled with its receipt, all
under the writer lock, as one transaction of the log (usetx.py): the events and the
intent first, then the edit, then a done line; a kill anywhere in it is finished by
the next counting, so a session counts exactly once.
Names that are not registry patterns are reported, never created. A use dated after
today (a clock gone wrong, a forged transcript) is dated today: ``last used`` never
lies in the future.

A host session that cites a pattern through the MCP ``cite`` tool is counted by the
server under its own session id, at the call. When the host's transcript is ingested
later, its call of that tool is a ``CiteCall``: the server's log line with the same
pattern and evidence (the receipt ``mcp:EVIDENCE``), dated within a day of the call,
stands for the host session's use, so a link in the same session is not counted
again. With no such line (the server was not running, or the call failed) the host
session's use counts once, as any citation.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.apply import journal
from vaultkeeper.apply.decision import ACT, DEFER, Outcome
from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.learn.compact import compact, needs_compacting
from vaultkeeper.learn.use import UseResult, plan_uses, record_use, write_uses
from vaultkeeper.learn.usetx import Claim, TxState, close, intent_lines, new_tx, reconcile, repair
from vaultkeeper.registry.find import named_blocks
from vaultkeeper.store.model import Problem
from vaultkeeper.store.patience import patient_lock
from vaultkeeper.store.uses import (
    PATTERN_KINDS,
    USE_KINDS,
    KeySet,
    UseEvent,
    append_events,
    mcp_receipt,
    read_events,
)
from vaultkeeper.upkeep.decay import Usage, validated_on

JOURNAL_ACTION = "use"


@dataclass(frozen=True)
class Counted:
    """One pattern whose count rose (or would rise, on a dry run)."""

    name: str
    path: str  # the registry file, vault-relative
    sessions: tuple[str, ...]  # each session counted once
    count_before: int
    count_after: int
    last_used: str
    receipt: str  # the latest new use's receipt
    note: str | None = None  # why the saved report could not follow, if it could not


@dataclass(frozen=True)
class RecordResult:
    recorded: tuple[UseEvent, ...]  # new log lines (none written on a dry run)
    counted: tuple[Counted, ...]
    repeated: int  # events already in the log (or repeated in this batch): skipped
    unknown: tuple[UseEvent, ...]  # cite/skill naming no registry pattern: reported only
    refused: tuple[str, ...]  # one line per pattern whose count could not be raised
    dry_run: bool
    via_mcp: tuple[str, ...] = ()  # patterns a host session used, counted by the MCP server
    future: int = 0  # events dated after today, dated today
    via_cli: tuple[str, ...] = ()  # ... counted by the `vaultkeeper use` the session ran
    damaged: tuple[str, ...] = ()  # usage-log lines that could not be read: uses not seen
    unknown_more: int = 0  # unknown names past the INGEST_MAX_UNKNOWN reported

    def to_dict(self) -> dict[str, object]:
        return {
            "recorded": [e.to_dict() for e in self.recorded],
            "counted": [
                {
                    "name": c.name,
                    "path": c.path,
                    "sessions": list(c.sessions),
                    "count_before": c.count_before,
                    "count_after": c.count_after,
                    "last_used": c.last_used,
                    "receipt": c.receipt,
                }
                for c in self.counted
            ],
            "repeated": self.repeated,
            "unknown": [e.to_dict() for e in self.unknown],
            "refused": list(self.refused),
            "dry_run": self.dry_run,
            "via_mcp": list(self.via_mcp),
            "future": self.future,
            "via_cli": list(self.via_cli),
            "damaged": list(self.damaged),
            "unknown_more": self.unknown_more,
        }


def _is_note(target: str) -> bool:
    return target.endswith(".md")


def _today(events: Iterable[UseEvent], today: dt.date) -> list[UseEvent]:
    return [e if e.date <= today else e._replace(date=today) for e in events]


def record(
    vault: Path,
    events: Sequence[UseEvent],
    now: dt.datetime,
    dry_run: bool = False,
    calls: Sequence[CiteCall] = (),
    waiting: Callable[[], None] | None = None,
) -> RecordResult:
    """Log the new events and count each new (session, pattern) once; see the module doc.

    A ``cite`` or ``skill`` whose target is a registry pattern's name counts for it; a
    ``cite`` of a note (a path) and every ``read`` are logged only; any other target
    is unknown: reported, neither logged nor created. ``calls`` are the MCP cite calls
    the events' sessions made (see the module doc). With no events nothing is touched.
    ``waiting``: called once when the writer lock is busy; the count then waits for it
    (store.patience) rather than fail and be lost.
    """
    if not events:  # not even the lock file: a refused ingest writes nothing
        return RecordResult((), (), 0, (), (), dry_run)
    today = now.date()
    future = sum(1 for e in events if e.date > today)
    events = _today(events, today)
    calls = [c if c.date <= today else dataclasses.replace(c, date=today) for c in calls]
    if not dry_run and needs_compacting(vault):  # kept fast at a million lines; the
        compact(vault, waiting)  # writer lock is held for two moments of it only
    with contextlib.nullcontext() if dry_run else patient_lock(vault, waiting):
        targets = {e.target for e in events if e.kind in PATTERN_KINDS}
        names = {b.name for b in named_blocks(vault, targets)[0]}
        log = read_log(vault)
        if log.state.open and not dry_run:  # a kill left a counting half done: finish it
            reconcile(vault, log.state.open, now)
            log = read_log(vault)
        if not dry_run and repair(vault, log.copies, log.state, now):  # two machines, one
            log = read_log(vault)  # session: one count taken off
        seen, counted_keys = log.seen, log.counted_keys
        covered, claims = matched(calls, log.server, counted_keys)
        counted_keys |= covered.keys()
        fresh: list[UseEvent] = []  # logged only
        uses: dict[str, list[UseEvent]] = {}  # pattern -> its new events, in order
        unknown: dict[str, UseEvent] = {}  # the first event of each unknown name
        repeated = 0
        for event in events:
            key = (event.session, event.kind, event.target)
            pattern = event.kind in PATTERN_KINDS and event.target in names
            if event.kind in PATTERN_KINDS and not pattern and not _is_note(event.target):
                unknown.setdefault(event.target, event)
                continue
            if key in seen:
                repeated += 1
                continue
            seen.add(key)
            (uses.setdefault(event.target, []) if pattern else fresh).append(event)
        firsts = {name: _firsts(name, found, counted_keys) for name, found in uses.items()}
        wanted = {
            name: (len(f), max(e.date for e in f.values())) for name, f in firsts.items() if f
        }
        plan = plan_uses(vault, wanted, never_back=True)
        failed = plan.refused
        recorded = [e for name, found in uses.items() if name not in failed for e in found]
        recorded.extend(fresh)
        tx = new_tx()
        if not dry_run and (recorded or claims):
            raises = {
                n: (r.path, r.count_before, r.count_after, r.last_used)
                for n, r in plan.done.items()
            }
            # 1. the events and the intent, in one write: the commit point (usetx.py)
            raised = frozenset(e for n, f in firsts.items() if n in plan.done for e in f.values())
            intent = "\n".join(intent_lines(tx, raises, claims))
            append_events(vault, recorded, tx, intent, raised)
        usage = None
        if not dry_run and plan.edits:  # the log is read once: its dates, with these uses
            log.saw(recorded)
            usage = Usage(log.last_seen, log.since, validated_on(vault))
        done = plan.done if dry_run else write_uses(vault, plan, wanted, now, usage)  # 2.
        counted: list[Counted] = []
        lines: list[Outcome] = []  # journaled in one write: one fsync, not one a name
        for name in uses:
            if name in failed:  # its events stay out of the log: counted once it is fixed
                if not dry_run:
                    lines.append(Outcome(JOURNAL_ACTION, name, DEFER, str(failed[name])))
            elif name in done:
                counted.append(_journal(lines, done[name], firsts[name], dry_run, tx))
        journal.append_all(vault, lines, now)
        if not dry_run and (recorded or claims):
            close(vault, tx)  # 3. done
        refused = tuple(str(failed[name]) for name in uses if name in failed)
        via: dict[str, set[str]] = {config.MCP_SOURCE: set(), config.CLI_SOURCE: set()}
        for (session, target), source in covered.items():
            if any(e.session == session for e in uses.get(target, ())):
                via[source].add(target)
        return RecordResult(
            tuple(recorded),
            tuple(counted),
            repeated,
            tuple(unknown.values())[: config.INGEST_MAX_UNKNOWN],
            refused,
            dry_run,
            tuple(sorted(via[config.MCP_SOURCE])),
            future,
            tuple(sorted(via[config.CLI_SOURCE])),
            tuple(str(p) for p in log.damaged),
            max(0, len(unknown) - config.INGEST_MAX_UNKNOWN),
        )


def _firsts(
    name: str, events: list[UseEvent], counted_keys: set[tuple[str, str]]
) -> dict[str, UseEvent]:
    """The first new event of each session not counted for ``name`` before."""
    out: dict[str, UseEvent] = {}
    for event in events:
        if (event.session, name) not in counted_keys:
            out.setdefault(event.session, event)
    return out


def _journal(
    lines: list[Outcome],
    result: UseResult,
    firsts: dict[str, UseEvent],
    dry_run: bool,
    tx: str,
) -> Counted:
    """One journal line per session counted, with its receipt (added to ``lines``)."""
    for i, event in enumerate(firsts.values()):
        before = result.count_before + i
        lines.append(
            Outcome(
                JOURNAL_ACTION,
                result.name,
                ACT,
                f"{event.kind} in {event.source} session {event.session} on "
                f"{event.date.isoformat()}: success count {before} -> {before + 1}",
                evidence=event.receipt,
                extra={"session": event.session, "source": event.source, "tx": tx},
                dry_run=dry_run,
            )
        )
    latest = max(firsts.values(), key=lambda e: e.date)
    return Counted(
        result.name,
        result.path,
        tuple(firsts),
        result.count_before,
        result.count_after,
        result.last_used,
        latest.receipt,
        result.note,
    )


def record_cli(
    vault: Path, name: str, now: dt.datetime, waiting: Callable[[], None] | None = None
) -> UseResult:
    """``vaultkeeper use NAME``: a reuse a person reports, through the same door as
    ingest: counted, journaled, and logged as a ``cli`` cite, so decay sees it. Its
    session (and receipt) is ``cli:<now, ISO>``: one use, never counted again.

    Refused (an unknown name, an unreadable count, ...) before anything is written.
    """
    record_use(vault, name, now.date(), now, dry_run=True)  # raises use's own errors
    session = f"{config.CLI_SOURCE}:{now.isoformat()}"
    event = UseEvent(session, config.CLI_SOURCE, "cite", name, now.date(), session)
    result = record(vault, [event], now, waiting=waiting)
    if result.refused:  # the registry changed between the check and the edit
        raise VaultkeeperError(result.refused[0])
    if not result.counted:
        raise VaultkeeperError(f"{name}: {session} is already in the usage log; not counted")
    c = result.counted[0]
    return UseResult(c.name, c.path, c.count_before, c.count_after, c.last_used, c.note)


# -- what the log holds:
# What the usage log already holds, as counting needs it: the keys seen
# and counted, the server's and ``use``'s lines a host session's call may stand on (less
# those claimed already), and the transaction lines (usetx.py).

CITE_CALL_DAYS = 1  # a cite call and the server's line of it: dates apart at most


@dataclass(frozen=True)
class CiteCall:
    """A host session's call of the MCP ``cite`` tool, as its transcript shows it."""

    session: str  # the host's session
    target: str
    date: dt.date
    evidence: str  # as the call gave it
    source: str = config.MCP_SOURCE  # CLI_SOURCE: a shell's `vaultkeeper use NAME`
    tool_use: str | None = None  # Claude Code's tool_use id: the server's line names it


def matched(
    calls: Sequence[CiteCall],
    server: dict[tuple[str, str], list[dt.date]],
    counted: set[tuple[str, str]],
) -> tuple[dict[tuple[str, str], str], list[Claim]]:
    """The (host session, pattern) keys not ``counted`` yet whose call has a line of its
    own in the log (server: by the receipt; ``use``: by the source), with the call's
    source; each line stands for one call, and the lines taken are claimed (the log
    keeps the claim: a later ingest of another session cannot take the line again)."""
    out: dict[tuple[str, str], str] = {}
    claims: list[Claim] = []
    for call in calls:
        key = (call.session, call.target)
        if key in counted or key in out:
            continue
        mcp = call.source == config.MCP_SOURCE
        tagged = (call.target, mcp_receipt(call.evidence, call.tool_use))
        if mcp and call.tool_use and server.get(tagged):  # the very call, whatever its date
            day = server[tagged].pop()
            out[key] = call.source
            claims.append((tagged[0], tagged[1], day.isoformat()))
            continue
        line = (call.target, mcp_receipt(call.evidence) if mcp else call.source)
        dates = server.get(line, [])
        near = [d for d in dates if abs((d - call.date).days) <= CITE_CALL_DAYS]
        if near:
            dates.remove(near[0])
            out[key] = call.source
            claims.append((line[0], line[1], near[0].isoformat()))
    return out, claims


@dataclass
class Log:
    """What record reads of the log: keys seen and counted, the unclaimed server lines."""

    seen: KeySet[tuple[str, str, str]]  # (session, kind, target)
    counted_keys: KeySet[tuple[str, str]]  # (session, pattern)
    server: dict[tuple[str, str], list[dt.date]]  # (pattern, receipt|cli) -> dates
    state: TxState
    damaged: list[Problem]
    copies: dict[tuple[str, str], int]  # (session, pattern) -> events that counted it
    # what decay reads (upkeep.decay.load_usage), taken in the same pass: a ``use`` read
    # the whole log twice, once to count and once for its report's stale section
    last_seen: dict[str, dt.date] = field(default_factory=dict)  # target -> last use
    since: dt.date | None = None  # the first use's date

    def saw(self, events: Sequence[UseEvent]) -> None:
        """Take ``events`` (just appended to the log) into ``last_seen`` and ``since``."""
        for e in events:
            if e.kind in USE_KINDS:
                self.since = e.date if self.since is None else self.since
                if self.last_seen.get(e.target, e.date) <= e.date:
                    self.last_seen[e.target] = e.date


def _copy(log: Log) -> Callable[[UseEvent], None]:
    def add(event: UseEvent) -> None:
        key = (event.session, event.target)
        log.copies[key] = log.copies.get(key, 0) + 1

    return add


def read_log(vault: Path) -> Log:
    log = Log(KeySet(), KeySet(), {}, TxState(), [], {})

    def on_tx(value: dict[str, object]) -> None:
        for name, keys in (("seen_keys", log.seen), ("counted_keys", log.counted_keys)):
            found = value.get(name)
            if isinstance(found, str):
                keys.digests.update(found.split())
        log.state.add(value)

    last_seen = log.last_seen
    for old in read_events(vault, problems=log.damaged, on_tx=on_tx, on_counted=_copy(log)):
        if old.kind in USE_KINDS:
            if log.since is None:
                log.since = old.date
            if last_seen.get(old.target, old.date) <= old.date:
                last_seen[old.target] = old.date
        log.seen.add((old.session, old.kind, old.target))
        if old.kind in PATTERN_KINDS:
            log.counted_keys.add((old.session, old.target))
        if old.source == config.MCP_SOURCE and old.kind == "cite":
            log.server.setdefault((old.target, old.receipt), []).append(old.date)
        elif old.source == config.CLI_SOURCE and old.kind == "cite":
            log.server.setdefault((old.target, old.source), []).append(old.date)
    for target, line, day in log.state.claims:  # lines an earlier ingest's calls took
        dates = log.server.get((target, line), [])
        with contextlib.suppress(ValueError):
            dates.remove(dt.date.fromisoformat(day))
    return log
