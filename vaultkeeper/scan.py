"""The scanner: classify the vault into promote / prune / held-out candidates.

``classify`` reads the registry (promote, prune) and the memory sub-trees (held-out) and
never writes. ``run_scan`` is the scheduler around it: the guards of state.py first, so
a throttled run imports nothing heavy and writes nothing; then the scan, the saved
report and the state file's completion, with the lock released however the run ends.
"""

from __future__ import annotations

import gc
import os
import time
from collections import namedtuple

from vaultkeeper import config, state
from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.vault import own_dir, require_vault

# Only what the throttled no-op runs is imported up here (see state.py); the scan's
# own needs (datetime, pathlib, signal, ...) are imported where they are used.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import datetime as dt
    from collections.abc import Iterable, Iterator, Mapping
    from pathlib import Path
    from types import FrameType
    from typing import Any, NamedTuple

    from vaultkeeper.decay import MemoryFacts
    from vaultkeeper.model import Problem
    from vaultkeeper.registry import BlockHead
    from vaultkeeper.report import Candidate, Report

# The memory-file keys a held-out decision reads, and those only a candidate's line
# needs (everything else is never looked at).
_DECIDE = ("status", "holdout_until", config.SUPERSEDED_BY_KEY)
_DETAILS = ("name", "label", "falsification_condition")
# ... and those the duplicates and decay passes read (issue 13), for every memory file.
_FACTS = (*_DECIDE, "name", "description", "last_validated", "provenance")
_SIGNALS = ("SIGTERM", "SIGINT", "SIGHUP")


if TYPE_CHECKING:

    class ScanOutcome(NamedTuple):
        """A completed scan's report, or why the run skipped; ``notes`` go to stderr.

        A collections.namedtuple at run time, not a dataclass or typing.NamedTuple:
        importing either module would cost the throttled no-op (which returns one of
        these) about a tenth of its run.
        """

        report: Report | None
        skipped: str | None
        detail: str
        notes: tuple[str, ...]

else:
    ScanOutcome = namedtuple("ScanOutcome", ("report", "skipped", "detail", "notes"))


class Interrupted(VaultkeeperError):
    """A signal ended the run; the lock is released and the state file is idle again."""

    def __init__(self, signum: int) -> None:
        import signal

        name = signal.Signals(signum).name
        super().__init__(f"scan interrupted by {name}; lock released, nothing saved")
        self.exit_code = 128 + signum


def to_ms(moment: dt.datetime | int) -> int:
    """Epoch milliseconds of a datetime, or of epoch nanoseconds (clock.now_ns)."""
    if isinstance(moment, int):
        return moment // 1_000_000
    return int(moment.timestamp() * 1000)


def run_scan(
    vault: Path | str,
    *,
    now: dt.datetime | int,
    env: Mapping[str, str],
    force: bool = False,
    pid: int,
) -> ScanOutcome:
    """One scheduler run: guards, scan, saved report, state file; never touches entries.

    ``now`` may be real time as epoch nanoseconds (clock.now_ns) and ``vault`` a path
    string: the throttled no-op then never builds a datetime or a Path.
    """
    require_vault(vault)
    now_ms = to_ms(now)
    own_dir(vault, config.STATE_DIR)  # a state/ symlink out of the vault: refused
    quick = state.precheck(vault, env, now_ms, force)  # the no-op path stops here
    if quick is not None:
        _, note = state.cooldown_ms(env)
        return ScanOutcome(None, quick.reason, quick.detail, (note,) if note else ())
    import contextlib
    from pathlib import Path

    from vaultkeeper.clock import from_ns

    vault = Path(vault)
    if isinstance(now, int):
        now = from_ns(now)
    with _signals_raise():
        started: state.Run | state.Skip | None = None
        try:
            started = state.start(vault, env=env, now_ms=now_ms, force=force, pid=pid)
            if isinstance(started, state.Skip):
                return ScanOutcome(None, started.reason, started.detail, started.notes)
            clock = time.monotonic()
            report = classify(vault, now)
            duration = int((time.monotonic() - clock) * 1000)
            from dataclasses import replace

            report = replace(report, duration_ms=duration)
            from vaultkeeper.report import save_report

            save_report(vault, report, fsync_dir=False)  # finish() flushes state/ next
            state.finish(started, now_ms + duration, report.figures())
            return ScanOutcome(report, None, "", started.notes)
        except BaseException:
            if isinstance(started, state.Run):
                with contextlib.suppress(Exception):  # the original error is the one to report
                    state.abort(started)
            raise
        finally:
            state.release(vault, pid)  # only if this process holds it


class _signals_raise:  # noqa: N801 - used as a with-statement, like a function
    """Turn SIGTERM/SIGINT/SIGHUP into Interrupted for the run, so cleanup always runs."""

    def __enter__(self) -> None:
        import contextlib
        import signal

        self.saved: dict[int, object] = {}
        for name in _SIGNALS:
            signum = getattr(signal, name, None)
            if signum is None:
                continue
            with contextlib.suppress(ValueError, OSError):  # not the main thread: none to install
                self.saved[signum] = signal.signal(signum, self._raise)

    def __exit__(self, *exc: object) -> None:
        import signal

        for signum, handler in self.saved.items():
            signal.signal(signum, handler)  # type: ignore[arg-type]

    @staticmethod
    def _raise(signum: int, frame: FrameType | None) -> None:
        import signal

        signal.signal(signum, signal.SIG_IGN)  # a second signal must not cut the cleanup
        raise Interrupted(signum)


# -- classification -------------------------------------------------------------------


def memory_files(vault: Path) -> Iterator[str]:
    """Markdown files under projects/*/memory/ (as path strings), in the vault walk's order."""
    projects = os.path.join(vault, config.PROJECTS_DIR)
    if not os.path.isdir(projects) or os.path.islink(projects):
        return
    for entry in sorted(os.scandir(projects), key=_name):
        if entry.name.startswith(".") or not entry.is_dir(follow_symlinks=False):
            continue
        memory = os.path.join(entry.path, config.MEMORY_SUBDIR)
        if os.path.isdir(memory) and not os.path.islink(memory):
            yield from _markdown_under(memory)


def _name(entry: os.DirEntry[str]) -> str:
    return entry.name


def _markdown_under(folder: str) -> Iterator[str]:
    """vault.walk_files(vault, folder)'s .md files, from one scandir per folder: its
    order and rules (hidden names skipped, symlinked folders listed but not entered,
    an unreadable folder skipped), without os.walk's join and islink per entry."""
    try:
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=_name)
    except OSError:
        return
    folders = []
    for entry in entries:
        try:
            is_dir = entry.is_dir()  # as os.walk sorts them: a link to a folder is one
        except OSError:
            is_dir = False
        if is_dir:
            folders.append(entry)
        elif entry.name.endswith(".md") and not entry.name.startswith("."):
            yield entry.path
    for entry in folders:
        if not entry.name.startswith(".") and not entry.is_symlink():
            yield from _markdown_under(entry.path)


def classify(vault: Path, now: dt.datetime) -> Report:
    """Promote and prune from the registry, held-out from memory files; never writes."""
    # A scan allocates tens of thousands of small objects and makes no reference cycles;
    # the cyclic collector's passes over them would cost a few percent of the scan.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _classify(vault, now)
    finally:
        if collecting:
            gc.enable()


def _classify(vault: Path, now: dt.datetime) -> Report:
    import datetime as dt

    from vaultkeeper.registry import load_heads
    from vaultkeeper.report import Report

    today = now.astimezone(dt.timezone.utc).date()
    heads, problems = load_heads(vault)
    promote, prune = registry_candidates(heads, today, problems)
    facts: list[MemoryFacts] = []
    held_out = held_out_candidates(vault, today, problems, facts=facts)
    from vaultkeeper.upkeep import upkeep

    extra = upkeep(vault, today, heads, facts)
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
    )


def registry_candidates(
    heads: Iterable[BlockHead], today: dt.date, problems: list[Problem]
) -> tuple[list[Candidate], list[Candidate]]:
    """Promote and prune candidates among ``heads`` (the whole registry, or the one file
    an apply changed); unreadable blocks go to ``problems``."""
    import datetime as dt

    from vaultkeeper.registry import block_hash
    from vaultkeeper.report import PROMOTE, PRUNE, Candidate

    promote: list[Candidate] = []
    prune: list[Candidate] = []
    seen: dict[str, BlockHead] = {}
    idle_since = today - dt.timedelta(days=config.PRUNE_IDLE_DAYS)  # used before: idle > 90 d
    for head in heads:
        count, used = head.count, head.last_used
        if count is None or used is None:  # a full block says why
            problems.extend(head.block().problems())
        first = seen.setdefault(head.name, head)
        if first is not head:
            problems.append(
                _problem(
                    head.rel,
                    head.line,
                    f"### {head.name}: the name is also used at {first.rel}:{first.line}; "
                    "the applier refuses a name that is not unique",
                )
            )
        if count is None:
            continue  # unreadable: a problem, never a candidate
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
            hash=block_hash(head.text()),
            count=count,
            last_used=None if used is None else used.isoformat(),
            idle_days=idle,
        )
        (promote if kind == PROMOTE else prune).append(found)
    return promote, prune


def _problem(path: str, line: int | None, reason: str) -> Problem:
    from vaultkeeper.model import Problem

    return Problem(path, line, reason)


def held_out_candidates(
    vault: Path,
    today: dt.date,
    problems: list[Problem],
    paths: Iterable[str] | None = None,
    facts: list[MemoryFacts] | None = None,
) -> list[Candidate]:
    """Memory files whose hold-out has passed; unreadable ones go to ``problems``, and
    with ``facts`` every readable entry's keys for the duplicates and decay passes.

    ``paths`` (``str(vault) + "/" + rel`` each) narrows it to those files: the applier
    re-checks the one it changed.

    Most frontmatter is read without YAML (quickmeta), and only the keys a decision
    needs; the rest, and every file it is unsure of, goes through the model's YAML
    parser, so the answer is the same.
    """
    from vaultkeeper import quickmeta
    from vaultkeeper.model import (
        ParseError,
        decode,
        file_hash,
        parse_date,
        parse_note,
        read_regular,
    )
    from vaultkeeper.model import split_frontmatter as split
    from vaultkeeper.report import HELD_OUT, Candidate

    # looked up once per scan (a test swaps them for YAML)
    read_front, read_keys = quickmeta.read_front, quickmeta.read_keys

    def yaml_keys(path: str, where: str, text: str) -> tuple[dict[str, Any], dict[str, int]]:
        from pathlib import Path

        fm = parse_note(Path(path), where, text).frontmatter
        assert fm is not None
        return dict(fm.data), dict(fm.key_lines)

    out: list[Candidate] = []
    dates: dict[str, dt.date | None] = {}
    wanted = _DECIDE if facts is None else _FACTS
    cut = len(str(vault)) + 1  # every path below is str(vault) + "/" + its vault-relative path
    for path in memory_files(vault) if paths is None else paths:
        where = path[cut:]
        try:
            text = decode(read_regular(path))
            # quickmeta answers only for a block YAML reads the same way, so reading the
            # deciding keys now and the others later gives what one YAML parse gives
            front = read_front(text, wanted)
            if front is not None:
                meta, lines, yaml_text = front
                fast = True
            else:
                found = split(text)[0]
                if found is None:
                    continue  # no frontmatter: not an entry
                yaml_text = found
                quick = read_keys(yaml_text, wanted)
                fast = quick is not None
                meta, lines = quick if quick is not None else yaml_keys(path, where, text)
            raw, status = meta.get("holdout_until"), meta.get("status")
            if facts is not None:
                facts.append(_facts(where, meta))
            if raw is None or raw == "" or (status is not None and status != "held_out"):
                continue
            if meta.get(config.SUPERSEDED_BY_KEY) not in (None, ""):
                continue  # superseded: a newer entry is the one to re-check and serve
            line = lines.get("holdout_until", 1)
            if isinstance(raw, str):  # the commonest: a quoted date, one of few distinct ones
                if raw not in dates:
                    dates[raw] = parse_date(raw)
                until = dates[raw]
            else:
                until = parse_date(raw)
            if until is None:
                reason = f"holdout_until {raw!r} is not a date (YYYY-MM-DD); skipped"
                problems.append(_problem(where, line, reason))
                continue
            if until > today:
                continue
            if fast:
                more = read_keys(yaml_text, _DETAILS)
                meta = more[0] if more is not None else yaml_keys(path, where, text)[0]
        except ParseError as exc:
            problems.append(_problem(where, exc.line, exc.reason))
            continue
        name, label = meta.get("name"), meta.get("label")
        condition = meta.get("falsification_condition")
        out.append(
            Candidate(
                kind=HELD_OUT,
                name=str(name) if name not in (None, "") else os.path.basename(path)[:-3],
                path=where,
                line=line,
                hash=file_hash(text),
                holdout_until=until.isoformat(),
                days_due=(today - until).days,
                status=None if status is None else str(status),
                label=None if label is None else str(label),
                weight=config.LABEL_WEIGHTS.get(label) if isinstance(label, str) else None,
                falsification_condition=None if condition in (None, "") else str(condition),
            )
        )
    return out


def _facts(where: str, meta: Mapping[str, Any]) -> MemoryFacts:
    from vaultkeeper.decay import MemoryFacts

    name, status, provenance = meta.get("name"), meta.get("status"), meta.get("provenance")
    if status is None and meta.get("holdout_until") not in (None, ""):
        status = "held_out"  # as the held-out list and the applier read it
    return MemoryFacts(
        rel=where,
        name=str(name) if name not in (None, "") else os.path.basename(where)[:-3],
        description="" if meta.get("description") is None else str(meta["description"]),
        status=None if status is None else str(status),
        holdout_until=meta.get("holdout_until"),
        last_validated=meta.get("last_validated"),
        provenance=tuple(str(p) for p in provenance) if isinstance(provenance, list) else (),
    )
