"""The scan command and the scanner: classify the vault into promote / prune / held-out
candidates.

``classify`` reads the registry (promote, prune) and the memory sub-trees (held-out) and
never writes; ``classify_and_keep``, the scan's own run, also writes the rows it read.
``run_scan`` is the scheduler around it: the checks of statefile.py first, so a
throttled run imports nothing heavy and writes nothing; then the scan, the report's
row and the state file's completion, with the lock released however the run ends.
``run`` is what ``vaultkeeper scan`` does, for commands/scan.py (click) and entry.py
(the session-end hook's no-op without click; tests/test_entry.py compares the bytes):
the no-op imports nothing it does not need (no typing, pathlib, datetime or json), and
"now" is epoch nanoseconds unless $VAULTKEEPER_TODAY moves it.
"""

from __future__ import annotations

import gc
import os
import sys
import time
from collections import namedtuple

from vaultkeeper import config
from vaultkeeper.clock import to_ms
from vaultkeeper.errors import Interrupted, VaultkeeperError
from vaultkeeper.output import echo, fail, print_json
from vaultkeeper.scan import statefile
from vaultkeeper.scan.statefile import ScanOutcome
from vaultkeeper.store.vault import own_dir, require_vault

# Only what the throttled no-op runs is imported up here (see statefile.py); the scan's
# own needs (state.py's lock, datetime, pathlib, signal, ...) are imported where used.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import datetime as dt
    import sqlite3
    from collections.abc import Iterable, Mapping, Sequence
    from pathlib import Path
    from types import FrameType
    from typing import Any

    from vaultkeeper.registry.keptheads import Head
    from vaultkeeper.report.candidates import Candidate, Report
    from vaultkeeper.scan.cache import ScanCache
    from vaultkeeper.store.model import Problem
    from vaultkeeper.upkeep.decay import MemoryFacts

_SIGNALS = ("SIGTERM", "SIGINT", "SIGHUP")

# --vault as given (or None) and the flags; a namedtuple: the no-op imports no typing
ScanArgs = namedtuple(
    "ScanArgs", ("vault", "force", "strict", "as_json", "fresh"), defaults=(False,)
)


def run(vault: Path | str, args: ScanArgs) -> int:
    """What ``vaultkeeper scan`` does; the exit code."""
    from vaultkeeper import clock

    try:
        ns = clock.now_ns()  # real time, or None: $VAULTKEEPER_TODAY moves the date
        now = clock.now() if ns is None else ns
        outcome = run_scan(
            vault, now=now, env=os.environ, force=args.force, pid=os.getpid(), fresh=args.fresh
        )
        for message in outcome.notes:
            echo(f"vaultkeeper: note: {message}", err=True)
        if outcome.report is None:
            if args.as_json:  # an agent parsing stdout gets JSON either way
                print_json({"skipped": outcome.skipped, "detail": outcome.detail})
            elif sys.stderr.isatty():  # a person wondering why nothing printed; hooks see nothing
                echo(f"vaultkeeper: note: scan skipped ({outcome.skipped}): {outcome.detail}", True)
            return 0
        from vaultkeeper.report.candidates import print_report  # not on the throttled path

        print_report(outcome.report, args.as_json)
        return 1 if args.strict and outcome.report.problems else 0
    except (Exception, KeyboardInterrupt) as exc:  # Ctrl-C after the scan's own handling too
        return fail(exc, args.as_json)


def run_scan(
    vault: Path | str,
    *,
    now: dt.datetime | int,
    env: Mapping[str, str],
    force: bool = False,
    pid: int,
    fresh: bool = False,
) -> ScanOutcome:
    """One scheduler run: guards, scan, the report's row, state file; never touches entries.
    ``now`` may be epoch nanoseconds and ``vault`` a string (the no-op builds no datetime
    or Path); ``fresh`` reads every file and keeps it anew."""
    require_vault(vault)
    now_ms = to_ms(now)
    own_dir(vault, config.STATE_DIR)  # a state/ symlink out of the vault: refused
    quick = statefile.precheck(vault, env, now_ms, force)  # the no-op path stops here
    if quick is not None:
        _, note = statefile.cooldown_ms(env)
        return ScanOutcome(None, quick.reason, quick.detail, (note,) if note else ())
    import contextlib
    from pathlib import Path

    from vaultkeeper.clock import from_ns

    vault = Path(vault)
    if isinstance(now, int):
        now = from_ns(now)
    with _Signals() as signals, contextlib.ExitStack() as held:
        started: statefile.Run | statefile.Skip | None = None
        try:
            signals.holding = True  # a signal here is raised once ``started`` is held
            try:
                started = statefile.start(vault, env=env, now_ms=now_ms, force=force, pid=pid)
            finally:
                signals.let_go()
            if isinstance(started, statefile.Skip):
                return ScanOutcome(None, started.reason, started.detail, started.notes)
            from vaultkeeper.scan import cache as scancache
            from vaultkeeper.scan import reportrow
            from vaultkeeper.store import db

            # one connection held open for the run: the others' closes then leave the
            # WAL to a single checkpoint at the end, not one (and its fsync) each
            conn = held.enter_context(db.existing(vault))
            clock = time.monotonic()
            # before any file is read (a write after it shows); the files' keys kept for
            # the scan's reads: each file is stat'ed once
            taken: dict[str, Any] = {}
            inputs = reportrow.inputs(vault, taken)
            journaled = _journal_bytes(vault)  # decisions after it are "since the scan"
            first = scancache.ScanCache(fresh=True) if fresh else scancache.load(vault)
            first.taken = taken
            if first.rebuilding():  # every row built anew: said on stderr when it is long
                from vaultkeeper.scan.cache import RebuildNote

                first.note = RebuildNote(sys.stderr)
            parts: dict[str, Any] = {}
            report = classify_and_keep(vault, now, first, parts)
            duration = int((time.monotonic() - clock) * 1000)
            report = report._replace(duration_ms=duration)
            reportrow.keep(vault, now_ms, inputs, report, parts, first)  # what readers see
            statefile.finish(started, now_ms + duration, {**report.figures(), **journaled})
            from vaultkeeper.store import machine

            if machine.has(vault, "folders"):  # an auto memory adopted
                from vaultkeeper.native.summary import after_scan

                after_scan(vault, now.date())  # the auto memory's line for the brief
            if conn is not None and _index_wanted(conn):  # the full-text index, once asked for
                with contextlib.suppress(Exception):  # a cache, never fatal
                    from vaultkeeper.report.anchors import may_be_stale
                    from vaultkeeper.search.index import after_scan as index_after_scan

                    marks = {f.path: m for f in report.anchors if (m := may_be_stale(f))}
                    keys = {**first.registry_keys, **first.stats}  # what the scan statted
                    index_after_scan(vault, marks, now.date(), keys, first.texts)
            return ScanOutcome(report, None, "", started.notes)
        except BaseException:
            if isinstance(started, statefile.Run):
                with contextlib.suppress(Exception):  # the original error is the one to report
                    statefile.abort(started)
            raise
        finally:
            statefile.release(vault, pid)  # only if this process holds it


def _journal_bytes(vault: Path) -> dict[str, int | str]:
    """How long the journal was when the scan began (``journalBytes`` in the state file's
    ``perTask.selfMaintain``) and a digest of its last bytes (``journalTail``): the
    decisions after it are those since the scan (scan/last.py), whatever the clock says."""
    try:
        fd = os.open(
            vault / config.STATE_DIR / config.JOURNAL_FILE,
            os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
        )
    except OSError:
        return {"journalBytes": 0, "journalTail": ""}
    try:
        size = os.fstat(fd).st_size
        tail = os.pread(fd, min(size, JOURNAL_TAIL), max(size - JOURNAL_TAIL, 0))
    except OSError:
        return {"journalBytes": 0, "journalTail": ""}
    finally:
        os.close(fd)
    return {"journalBytes": size, "journalTail": tail_digest(tail)}


JOURNAL_TAIL = 256  # the journal's last bytes a scan keeps a digest of (scan/last.py)


def tail_digest(tail: bytes) -> str:
    """The digest of the journal's last bytes kept as ``journalTail``."""
    import hashlib

    return hashlib.blake2b(tail, digest_size=8).hexdigest()


def _index_wanted(conn: sqlite3.Connection) -> bool:
    """search.index.is_on, without importing the index when it is off."""
    import contextlib
    import sqlite3

    query = "SELECT 1 FROM search_meta WHERE key IN ('built', 'wanted')"
    with contextlib.suppress(sqlite3.Error):
        return conn.execute(query).fetchone() is not None
    return False


class _Signals:
    """SIGTERM/SIGINT/SIGHUP raised as Interrupted during the run, so cleanup always runs.
    While ``holding`` (starting the run: the state file says "in-progress" before the
    caller holds the run) a signal is held back and raised by ``let_go``."""

    def __enter__(self) -> _Signals:
        import contextlib
        import signal

        self.saved: dict[int, Any] = {}
        self.holding, self.pending = False, 0
        for signum in (getattr(signal, name, None) for name in _SIGNALS):
            with contextlib.suppress(ValueError, OSError, TypeError):  # not the main thread
                self.saved[signum] = signal.signal(signum, self._raise)  # type: ignore[arg-type,index]
        return self

    def __exit__(self, *exc: object) -> None:
        import signal

        for signum, handler in self.saved.items():
            signal.signal(signum, handler)

    def let_go(self) -> None:
        """The end of the held part: a signal that arrived in it is raised now."""
        self.holding = False
        if self.pending:
            raise Interrupted(self.pending)

    def _raise(self, signum: int, frame: FrameType | None) -> None:
        import signal

        signal.signal(signum, signal.SIG_IGN)  # a second signal must not cut the cleanup
        if not self.holding:
            raise Interrupted(signum)
        self.pending = signum


# -- classification -------------------------------------------------------------------


def classify(
    vault: Path,
    now: dt.datetime,
    cache: ScanCache | None = None,
    parts: dict[str, Any] | None = None,
) -> Report:
    """Promote and prune from the registry, held-out from memory files; never writes.
    With ``cache`` (scan/cache.py), unchanged files are not read again, and what was read
    of the others goes into it (in memory: the caller keeps it, or not). ``parts`` receives
    the block heads, the memory files' facts and where the registry's problems end
    (scan/last.py patches a report from them)."""
    return _classified(vault, now, cache, False, {} if parts is None else parts)


def classify_and_keep(
    vault: Path, now: dt.datetime, cache: ScanCache, parts: dict[str, Any] | None = None
) -> Report:
    """``classify`` for the scan's own run, which writes the rows ``cache`` gained and the
    anchors' rows to ``state/vaultkeeper.db`` (one that cannot be written: a cache lost)."""
    from vaultkeeper.scan import cache as scancache

    report = _classified(vault, now, cache, True, {} if parts is None else parts)
    scancache.save(vault, cache)
    return report


def _classified(
    vault: Path, now: dt.datetime, cache: ScanCache | None, keep: bool, parts: dict[str, Any]
) -> Report:
    # tens of thousands of small objects, no cycles: the collector's passes only cost
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _classified_now(vault, now, cache, keep, parts)
    finally:
        if collecting:
            gc.enable()


def _classified_now(
    vault: Path, now: dt.datetime, cache: ScanCache | None, keep: bool, parts: dict[str, Any]
) -> Report:
    import datetime as dt

    from vaultkeeper.report.candidates import Report
    from vaultkeeper.scan.memory import held_out_candidates

    today = now.astimezone(dt.timezone.utc).date()
    heads: Sequence[Head]
    if cache is None:
        from vaultkeeper.registry.blocks import load_heads

        heads, problems = load_heads(vault)
    else:  # the scan's run: only the changed region of a registry file is read again
        from vaultkeeper.registry.keptheads import load_heads as cached_heads

        heads, problems = cached_heads(vault, cache)
    files_problems = len(problems)
    promote, prune = registry_candidates(heads, today, problems)
    parts.update(heads=heads, problems=(files_problems, len(problems)))
    if cache is not None:  # the scan's run: the brief's patterns (not --as-of's)
        _brief_patterns(vault, heads, cache)
    facts: list[MemoryFacts] = []
    held_out = held_out_candidates(vault, today, problems, facts=facts, cache=cache)
    parts["facts"] = facts
    from vaultkeeper.upkeep.sections import upkeep

    extra = upkeep(vault, today, heads, facts, cache=cache)
    anchored: tuple[Any, ...] = ()  # no repository tied on this machine: nothing to check
    suggested: tuple[Any, ...] = ()
    from vaultkeeper.store import machine

    if machine.has(vault, "repositories"):
        from vaultkeeper.anchors.vault import for_scan

        # the scan's run keeps the anchors' rows, and gives the files it walked: not again
        walked = None if cache is None else list(cache.stats)
        anchored, suggested = for_scan(vault, keep, walked)
    return Report(
        vault=str(vault),
        generated_at=now.astimezone(dt.timezone.utc),
        promote=tuple(promote),
        prune=tuple(prune),
        held_out=tuple(held_out),
        problems=tuple(problems),
        duplicates=extra.duplicates,
        stale=extra.stale,
        skills_unused=extra.skills_unused,
        anchors=anchored,
        suggested=suggested,
    )


def _brief_patterns(vault: Path, heads: Sequence[Head], cache: ScanCache) -> None:
    """The brief's most-used patterns, kept with the scan's rows; none when a registry
    file changed under the scan (the brief then parses the registry itself)."""
    from vaultkeeper.report import brief

    try:
        cache.patterns = brief.top(vault, heads, cache.known_summaries())
    except Interrupted:
        raise  # a signal is the scan's to answer, not a file that changed under it
    except (VaultkeeperError, OSError, ValueError):
        cache.patterns = ([], None)


def registry_candidates(
    heads: Iterable[Head], today: dt.date, problems: list[Problem]
) -> tuple[list[Candidate], list[Candidate]]:
    """Promote and prune candidates among ``heads`` (the whole registry, or the one file
    an apply changed); unreadable blocks go to ``problems``."""
    import datetime as dt

    from vaultkeeper.report.candidates import PROMOTE, PRUNE, Candidate

    promote: list[Candidate] = []
    prune: list[Candidate] = []
    seen: dict[str, Head] = {}
    idle_since = today - dt.timedelta(days=config.PRUNE_IDLE_DAYS)  # used before: idle > 90 d
    for head in heads:
        count, used = head.count, head.last_used
        if count is None or used is None:  # a full block says why
            problems.extend(head.problems())
        first = seen.setdefault(head.name, head)
        if first is not head:
            why = f"### {head.name}: the name is also used at {first.rel}:{first.line}; "
            why += "the applier refuses a name that is not unique"
            problems.append(_problem(head.rel, head.line, why))
        if count is None:
            continue  # unreadable: a problem, never a candidate
        if head.rel == config.NATIVE_REGISTRY_FILE:
            continue  # a native memory's counter: `vaultkeeper native review` says what follows
        if count >= config.PROMOTE_MIN_COUNT and head.promoted is None:
            kind = PROMOTE
        elif count == 0 and used is not None and used < idle_since:
            kind = PRUNE
        else:
            continue
        idle = None if used is None else (today - used).days
        found = Candidate(
            kind=kind,
            name=head.name,
            path=head.rel,
            line=head.line,
            hash=head.hash,
            count=count,
            last_used=None if used is None else used.isoformat(),
            idle_days=idle,
        )
        (promote if kind == PROMOTE else prune).append(found)
    return promote, prune


def _problem(path: str, line: int | None, reason: str) -> Problem:
    from vaultkeeper.store.model import Problem

    return Problem(path, line, reason)
