"""``verify``: the spec's 12 install-and-setup checks, one numbered row each, then rows
for what the spec leaves out (13: supersession; 14: merge and its undo), run in order
(the rows in order: verify/rows.py; none of them changes the user's vault).
"""

from __future__ import annotations

import datetime as dt
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.verify.common import FAIL, PASS, SKIP, Check, Context, Row, VerifyResult
from vaultkeeper.verify.rows import MEMORY_ROWS, ROWS, STARTED_EARLY

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
