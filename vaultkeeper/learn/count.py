"""Counted reuse: the one door for ``ingest``, MCP's ``cite`` and ``use NAME``.

A session counts at most once per pattern: the key is (session, pattern), and the usage
log (store/uses.py) remembers which keys were counted, so recording the same events
again (a transcript ingested twice, or a longer copy of it) counts nothing twice. Each
counted use is a one-line edit of the pattern's registry block (count + n, last used =
the use's date, never moved backwards), journaled with its receipt, all under the
writer lock, as one transaction of the log (store/uses.py): the events and the intent
first, then the edit, then a done line. A kill anywhere in it is finished by the next
counting (``reconcile``), so a session counts exactly once; a session two machines both
counted before a sync is counted once again (``repair``). Names that are not registry
patterns are reported, never created. A use dated after today is dated today.

A host session that cites a pattern through the MCP ``cite`` tool is counted by the
server under its own session id, at the call. When the host's transcript is ingested
later, its call of that tool is a ``CiteCall``: the server's log line with the same
pattern and evidence (the receipt ``mcp:EVIDENCE``), dated within a day of the call,
stands for the host session's use, so a link in the same session is not counted
again. With no such line the host session's use counts once, as any citation.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.apply import journal
from vaultkeeper.apply.decision import ACT, DEFER, Outcome
from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.index import rows as index_rows
from vaultkeeper.registry.blocks import RegistryBlock, count_reason, named_blocks, pick_block
from vaultkeeper.store.edit import add_line_after, read_for_edit, replace_counter_value, set_line
from vaultkeeper.store.fsio import atomic_write, patient_lock, writer_lock
from vaultkeeper.store.model import Problem, parse_date, split_lines
from vaultkeeper.store.uses import (
    PATTERN_KINDS,
    Claim,
    KeySet,
    LogState,
    Raise,
    UseEvent,
    append_events,
    append_intent,
    close,
    compact,
    intent_lines,
    mcp_receipt,
    needs_compacting,
    new_tx,
    read_events,
)
from vaultkeeper.store.vault import resolve_inside

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
        """Its fields as JSON values (tuples as lists, events as their log form)."""
        fields = dataclasses.asdict(self).items()
        out = {k: list(v) if isinstance(v, tuple) else v for k, v in fields}
        out["recorded"] = [e.to_dict() for e in self.recorded]
        out["unknown"] = [e.to_dict() for e in self.unknown]
        return out


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
    (store.fsio.patient_lock) rather than fail and be lost.
    """
    if not events:  # not even the lock file: a refused ingest writes nothing
        return RecordResult((), (), 0, (), (), dry_run)
    today = now.date()
    future = sum(1 for e in events if e.date > today)
    events = [e if e.date <= today else e._replace(date=today) for e in events]
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
        if not dry_run and repair(vault, log.state, now):  # two machines, one
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
            if event.kind in PATTERN_KINDS and not pattern and not event.target.endswith(".md"):
                unknown.setdefault(event.target, event)
                continue
            if key in seen:
                repeated += 1
                continue
            seen.add(key)
            (uses.setdefault(event.target, []) if pattern else fresh).append(event)
        firsts: dict[str, dict[str, UseEvent]] = {}  # the first new event of each session
        for name, found in uses.items():  # not counted for the pattern before
            for event in found:
                if (event.session, name) not in counted_keys:
                    firsts.setdefault(name, {}).setdefault(event.session, event)
        wanted = {name: (len(f), max(e.date for e in f.values())) for name, f in firsts.items()}
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
            journal.check(vault)  # a journal that would refuse its line refuses the count
            # 1. the events and the intent, in one write: the commit point (store/uses.py)
            raised = frozenset(e for n, f in firsts.items() if n in plan.done for e in f.values())
            intent = "\n".join(intent_lines(tx, raises, claims))
            append_events(vault, recorded, tx, intent, raised)
        done = plan.done if dry_run else write_uses(vault, plan)  # 2.
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
    )


def record_cli(
    vault: Path, name: str, now: dt.datetime, waiting: Callable[[], None] | None = None
) -> UseResult:
    """``vaultkeeper use NAME``: a reuse a person reports, through the same door as
    ingest: counted, journaled, and logged as a ``cli`` cite, so decay sees it. Its
    session (and receipt) is ``cli:<now, ISO>``: one use, never counted again.

    Refused (an unknown name, an unreadable count, ...) before anything is written.
    """
    plan = plan_uses(vault, {name: (1, now.date())})  # use's own errors, before any write
    if name in plan.refused:
        raise plan.refused[name]
    session = f"{config.CLI_SOURCE}:{now.isoformat()}"
    event = UseEvent(session, config.CLI_SOURCE, "cite", name, now.date(), session)
    result = record(vault, [event], now, waiting=waiting)
    if result.refused:  # the registry changed between the check and the edit
        raise VaultkeeperError(result.refused[0])
    if not result.counted:
        raise VaultkeeperError(f"{name}: {session} is already in the usage log; not counted")
    c = result.counted[0]
    return UseResult(c.name, c.path, c.count_before, c.count_after, c.last_used)


# -- the registry's counters as one-line edits: per block its count line and its last-used
# line change and nothing else, the registry read once and each file written once, under
# the writer lock, with the index's rows following the counter edit (index/rows.py).


@dataclass(frozen=True)
class UseResult:
    name: str
    path: str
    count_before: int
    count_after: int
    last_used: str
    note: str | None = None  # `use --json`'s note field: None


@dataclass(frozen=True)
class UsePlan:
    """What record_uses would write: per name its result, or why it is refused, and the
    edits per registry file."""

    done: dict[str, UseResult]
    refused: dict[str, VaultkeeperError]
    edits: dict[Path, list[tuple[RegistryBlock, int, str]]]


def record_uses(
    vault: Path,
    uses: Mapping[str, tuple[int, dt.date]],
    *,
    never_back: bool = False,
) -> tuple[dict[str, UseResult], dict[str, VaultkeeperError]]:
    """Count reuse (name -> (times, day)): per block, the count line and the last-used
    line change, nothing else (a block without a last-used line gets one after its count
    line); with ``never_back`` a later last-used date already there stays. The registry
    is read once and each file written once. Returns what was counted and, per name, why
    not (an unknown name, an unreadable count, ...); a refused name changes nothing."""
    with writer_lock(vault):
        plan = plan_uses(vault, uses, never_back=never_back)
        return write_uses(vault, plan), plan.refused


def plan_uses(
    vault: Path, uses: Mapping[str, tuple[int, dt.date]], *, never_back: bool = False
) -> UsePlan:
    """record_uses without writing (the caller holds the writer lock, to write it next)."""
    blocks, problems = named_blocks(vault, uses.keys())
    done: dict[str, UseResult] = {}
    refused: dict[str, VaultkeeperError] = {}
    edits: dict[Path, list[tuple[RegistryBlock, int, str]]] = {}
    for name, (times, day) in uses.items():
        try:
            block = pick_block(name, blocks, problems)
            new_count = _new_count(block, times)
            resolve_inside(vault, block.path)  # a registry symlinked out is not ours
        except VaultkeeperError as exc:
            refused[name] = exc
            continue
        stamp = day.isoformat()
        if never_back and block.last_used is not None and block.last_used > day:
            stamp = block.last_used.isoformat()
        edits.setdefault(block.path, []).append((block, new_count, stamp))
        done[name] = UseResult(block.name, block.rel, block.count or 0, new_count, stamp)
    return UsePlan(done, refused, edits)


def write_uses(vault: Path, plan: UsePlan) -> dict[str, UseResult]:
    """Write ``plan``'s edits (under the writer lock)."""
    done = plan.done
    for path, changes in plan.edits.items():
        rel = changes[0][0].rel
        was = index_rows.stat_key(str(path))  # the file's key as read: the index's rows
        text, bom = read_for_edit(path, rel)
        if index_rows.stat_key(str(path)) != was:
            was = None  # changed as it was read: the rows vouch for nothing
        lines = split_lines(text)  # once per file, however many of its counters change
        # from the bottom up, so an inserted last-used line moves no later edit
        for block, new_count, stamp in sorted(changes, key=lambda c: -c[0].line):
            _edit(lines, block, new_count, stamp)
        data = (bom + "".join(lines)).encode("utf-8")
        atomic_write(resolve_inside(vault, path), data)
        # only counter lines changed: the index's stamp follows (no regeneration next)
        index_rows.follow_counters(vault, rel, was, data, (bom + text).encode("utf-8"))
    return done


def _new_count(block: RegistryBlock, times: int) -> int:
    if block.count_raw is None or block.count_line is None:
        raise VaultkeeperError(
            f"{block.rel}:{block.line}: ### {block.name} has no {config.COUNT_LABEL} line; "
            "add one (e.g. **success count:** 0) first"
        )
    if block.count is None:
        raise VaultkeeperError(
            f"{block.rel}:{block.count_line}: ### {block.name}: "
            f"{count_reason(block.count_raw)}; fix it first"
        )
    new_count = block.count + times
    if len(str(new_count)) > config.COUNT_MAX_DIGITS:  # the scanner could not read it back
        raise VaultkeeperError(
            f"{block.rel}:{block.count_line}: ### {block.name}: success count "
            f"{new_count} would be too large (at most {config.COUNT_MAX_DIGITS} digits)"
        )
    return new_count


def _edit(lines: list[str], block: RegistryBlock, new_count: int, stamp: str) -> None:
    """The block's count and last-used lines in ``lines`` (the file's), in place."""
    assert block.count_line is not None  # checked by _new_count
    count = replace_counter_value(lines[block.count_line - 1], str(new_count))
    set_line(lines, block.count_line, count)
    if block.last_used_line is not None:
        old = lines[block.last_used_line - 1]
        set_line(lines, block.last_used_line, replace_counter_value(old, stamp))
    else:
        add_line_after(lines, block.count_line, f"{config.LAST_USED_LABEL} {stamp}")


# -- what the usage log already holds, as counting needs it: the keys seen and counted,
# the server's and ``use``'s lines a host session's call may stand on (less those claimed
# already), and the transaction lines.

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
    state: LogState
    damaged: list[Problem]


def read_log(vault: Path) -> Log:
    log = Log(KeySet(), KeySet(), {}, LogState(), [])
    for old in read_events(vault, problems=log.damaged, state=log.state):
        log.seen.add((old.session, old.kind, old.target))
        if old.kind in PATTERN_KINDS:
            log.counted_keys.add((old.session, old.target))
        if old.source == config.MCP_SOURCE and old.kind == "cite":
            log.server.setdefault((old.target, old.receipt), []).append(old.date)
        elif old.source == config.CLI_SOURCE and old.kind == "cite":
            log.server.setdefault((old.target, old.source), []).append(old.date)
    log.seen.digests = log.state.digests["seen_keys"]
    log.counted_keys.digests = log.state.digests["counted_keys"]
    for target, line, day in log.state.claims:  # lines an earlier ingest's calls took
        dates = log.server.get((target, line), [])
        with contextlib.suppress(ValueError):
            dates.remove(dt.date.fromisoformat(day))
    return log


# -- what a kill or a sync left: an open transaction finished, a double count taken off


def journal_use(
    vault: Path, name: str, reason: str, now: dt.datetime, tx: str, **extra: str
) -> None:
    outcome = Outcome(JOURNAL_ACTION, name, ACT, reason, extra={**extra, "tx": tx})
    journal.append(vault, outcome, now)


def reconcile(vault: Path, open_txs: Mapping[str, Mapping[str, Raise]], now: dt.datetime) -> None:
    """Finish each transaction a kill left open (see the module doc), under the writer
    lock the caller holds."""
    journaled = {
        (str(r.get("tx")), str(r.get("target")))
        for r in journal.read(vault).records
        if r.get("action") == JOURNAL_ACTION and "tx" in r
    }
    for tx, raises in open_txs.items():
        need: dict[str, tuple[int, dt.date]] = {}
        for name, (_, before, after, stamp) in raises.items():
            day = parse_date(stamp)
            plan = plan_uses(vault, {name: (1, day or now.date())})
            found = plan.done.get(name)
            if found is not None and found.count_before == before and after > before:
                need[name] = (after - before, day or now.date())
        done: dict[str, UseResult] = {}
        if need:
            done, _ = record_uses(vault, need, never_back=True)
        for name, (_, before, after, _stamp) in raises.items():
            if (tx, name) in journaled and name not in done:
                continue
            when = "now, after" if name in done else "before"
            reason = (
                f"success count {before} -> {after}: counted {when} an interrupted "
                f"count (transaction {tx})"
            )
            journal_use(vault, name, reason, now, tx)
        close(vault, tx)


def repair(vault: Path, state: LogState, now: dt.datetime) -> bool:
    """Take off what two machines both counted for one session (git's union merge of the
    log keeps both counted events; the registry merge adds both raises): a (session,
    pattern) counted k times needs k - 1 off, less what a fix took off already (on this
    machine or another: fixes travel in the log too). One transaction, journaled; whether
    it took any off. Run under the writer lock, after reconcile."""
    delta: dict[str, int] = {}
    fixes: list[tuple[str, str, int]] = []
    for key in {*state.copies, *state.fixes}:
        need = -(max(state.copies.get(key, 0), 1) - 1) - state.fixes.get(key, 0)
        if need:
            fixes.append((key[0], key[1], need))
            delta[key[1]] = delta.get(key[1], 0) + need
    if not fixes:
        return False
    probe = plan_uses(vault, {name: (0, now.date()) for name in delta})
    raises: dict[str, Raise] = {}
    uses: dict[str, tuple[int, dt.date]] = {}
    for name, change in delta.items():
        found = probe.done.get(name)
        if found is None or not change:
            continue
        change = max(change, -found.count_before)  # never below 0
        if change:
            after = found.count_before + change
            raises[name] = (found.path, found.count_before, after, found.last_used)
            uses[name] = (change, dt.date.fromisoformat(found.last_used))
    fixes = [f for f in fixes if f[1] in raises]
    if not fixes:
        return False
    tx = new_tx()
    append_intent(vault, intent_lines(tx, raises, (), fixes))
    record_uses(vault, uses, never_back=True)
    for name, (_, before, after, _stamp) in raises.items():
        sessions = ", ".join(sorted(s for s, n, _ in fixes if n == name))
        reason = (
            f"success count {before} -> {after}: session(s) {sessions} counted on two "
            "machines before a sync (the usage log's union merge kept both)"
        )
        journal_use(vault, name, reason, now, tx)
    close(vault, tx)
    return True
