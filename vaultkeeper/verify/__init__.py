"""``verify``: the spec's 12 install-and-setup checks, one numbered row each, then rows
for what the spec leaves out (13: supersession; 14: merge and its undo), run in order;
none of them changes the user's vault. The rows themselves: verify/setup_rows.py,
scanner_rows.py, applier_rows.py (what they share: verify/common.py).
"""

from __future__ import annotations

import datetime as dt
import tempfile
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.verify.applier_rows import decision_loop, merge, round_trip, supersession
from vaultkeeper.verify.common import FAIL, PASS, SKIP, Check, Context, VerifyResult
from vaultkeeper.verify.scanner_rows import (
    atomic_write,
    classify_correct,
    reentry_guard,
    scheduler_runs,
    stale_recovery,
    throttle,
)
from vaultkeeper.verify.setup_rows import (
    format_sfs,
    frontmatter_valid,
    store_present,
    trigger_registered,
)

# A row is a function of its Context giving (status, detail); an EARLY row gives instead
# a function that finishes it: its time is mostly a child Python's start, so it is
# started before row 1 and overlaps the rows before it (each in its own folder).
ROWS: tuple[tuple[str, Callable[[Context], Any]], ...] = (
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
EARLY = frozenset({scheduler_runs, atomic_write})

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
        started: dict[int, Any] = {}  # an early row's finish, or what starting it raised
        for n, (_, row) in enumerate(ROWS):
            contexts[n].tmp.mkdir()
            if row in EARLY and not (obsidian and row in MEMORY_ROWS):
                try:
                    started[n] = row(contexts[n])
                except Exception as exc:  # raised at the row's turn
                    started[n] = exc
        for number, (name, row) in enumerate(ROWS, start=1):
            if progress is not None:
                progress(name)
            if obsidian and row in MEMORY_ROWS:
                checks.append(Check(number, name, SKIP, _NOT_MEMORY))
                continue
            try:
                got = started.get(number - 1) or partial(row, contexts[number - 1])
                if isinstance(got, Exception):
                    raise got
                status, detail = got()
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


__all__ = ["FAIL", "PASS", "ROWS", "SKIP", "Check", "VerifyResult", "verify_vault"]
