"""What the usage log already holds, as counting needs it (count.py): the keys seen
and counted, the server's and ``use``'s lines a host session's call may stand on (less
those claimed already), and the transaction lines (usetx.py).
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.learn.usetx import Claim, TxState
from vaultkeeper.store.model import Problem
from vaultkeeper.store.uses import (
    PATTERN_KINDS,
    USE_KINDS,
    KeySet,
    UseEvent,
    mcp_receipt,
    read_events,
)

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
