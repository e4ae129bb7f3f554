"""``verify``: the spec's 12 install-and-setup checks, one numbered row each, then rows
for what the spec leaves out (13: supersession; 14: merge and its undo).

Rows 1, 2, 9 and 12 only read the vault. Every row that runs something works in a
temporary folder -- row 3 on a copy of the vault's markdown, rows 4-8, 10 and 11 on a
fixture vault seeded as the spec says, 13 and 14 on their own fixtures -- so verify
never changes the user's vault.
"""

from __future__ import annotations

import datetime as dt
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.verify.common import FAIL, PASS, SKIP, Check, Context, Row, VerifyResult
from vaultkeeper.verify.decision_rows import decision_loop, merge, round_trip, supersession
from vaultkeeper.verify.scheduler_rows import (
    atomic_write,
    classify_correct,
    reentry_guard,
    scheduler_runs,
    stale_recovery,
    start_atomic_write,
    start_scheduler_runs,
    throttle,
)
from vaultkeeper.verify.vault_rows import (
    format_sfs,
    frontmatter_valid,
    store_present,
    trigger_registered,
)

ROWS: tuple[tuple[str, Row], ...] = (
    ("store present", store_present),
    ("frontmatter valid", frontmatter_valid),
    ("scheduler runs", scheduler_runs),
    ("classify correct", classify_correct),
    ("throttle", throttle),
    ("re-entry guard", reentry_guard),
    ("stale recovery", stale_recovery),
    ("atomic write", atomic_write),
    ("trigger registered", trigger_registered),
    ("decision loop", decision_loop),
    ("round-trip", round_trip),
    ("format (SFS)", format_sfs),
    ("supersession", supersession),
    ("merge", merge),  # a duplicate merged, then restored
)


# rows whose time is mostly a child Python's start: started before row 1, so that start
# overlaps the rows before them (each still in its own folder); at its turn each finishes
STARTED_EARLY: dict[Row, Callable[[Context], Callable[[], tuple[str, str]]]] = {
    scheduler_runs: start_scheduler_runs,
    atomic_write: start_atomic_write,
}

# the rows that check a memory vault's own setup: on someone's Obsidian vault (no memory
# layout), SKIP -- nobody is to run `init` in their personal notes to make verify pass
MEMORY_ROWS = frozenset({store_present, frontmatter_valid, scheduler_runs, trigger_registered})


_NOT_MEMORY = (
    f"an Obsidian vault without a memory vault's layout (no {config.INDEX_FILE}, "
    f"{config.PROJECTS_DIR}/ or {config.PATTERNS_DIR}/)"
)


def verify_vault(
    vault: Path,
    *,
    now: dt.datetime,
    env: Mapping[str, str],
    progress: Callable[[str], None] | None = None,
) -> VerifyResult:
    """Run every row in order; a row that crashes is a FAIL naming the error.
    ``progress`` hears each row's name before it runs (a terminal shows a bar)."""
    checks: list[Check] = []
    obsidian = (vault / config.OBSIDIAN_DIR).is_dir() and not any(
        (vault / name).exists() for name in config.VAULT_MARKS
    )
    with tempfile.TemporaryDirectory(prefix="vaultkeeper-verify-", dir=scratch(env)) as tmp:
        contexts = [
            Context(vault, now, env, Path(tmp) / f"row{n}") for n in range(1, 1 + len(ROWS))
        ]
        started: dict[int, Row] = {}
        for ctx, (_, row) in zip(contexts, ROWS, strict=True):
            ctx.tmp.mkdir()
            start = STARTED_EARLY.get(row)
            if start is not None and not (obsidian and row in MEMORY_ROWS):
                started[id(ctx)] = _early(start, ctx)
        for number, (name, row) in enumerate(ROWS, start=1):
            if progress is not None:
                progress(name)
            ctx = contexts[number - 1]
            if obsidian and row in MEMORY_ROWS:
                checks.append(Check(number, name, SKIP, _NOT_MEMORY))
                continue
            try:
                status, detail = started.get(id(ctx), row)(ctx)
            except ImportError as exc:  # a part of vaultkeeper this row exercises is missing
                status, detail = SKIP, f"cannot run: {exc}"
            except Exception as exc:  # a broken row is a finding, never a traceback
                status, detail = FAIL, f"{type(exc).__name__}: {exc}"
            checks.append(Check(number, name, status, detail))
    return VerifyResult(str(vault), tuple(checks))


def scratch(env: Mapping[str, str]) -> str | None:
    """Where the rows' fixtures go: a folder in memory when the system has one of the
    user's own ($XDG_RUNTIME_DIR, else /dev/shm), so the rows' many fsyncs of throwaway
    files cost nothing; else the usual temporary folder (None)."""
    import os
    import stat

    for folder in (env.get("XDG_RUNTIME_DIR", ""), "/dev/shm"):
        try:
            info = os.stat(folder) if os.path.isabs(folder) else None
        except OSError:
            continue
        if info is not None and stat.S_ISDIR(info.st_mode) and os.access(folder, os.W_OK):
            return folder
    return None


def _early(start: Callable[[Context], Callable[[], tuple[str, str]]], ctx: Context) -> Row:
    """The row, started now; what it raises while starting is raised at its turn."""
    try:
        finish = start(ctx)
    except Exception as exc:
        failed = exc

        def again(_ctx: Context) -> tuple[str, str]:
            raise failed

        return again
    return lambda _ctx: finish()


__all__ = ["FAIL", "PASS", "ROWS", "SKIP", "Check", "VerifyResult", "verify_vault"]
