"""``verify``: the spec's 12 install-and-setup checks, one numbered row each.

Rows 1, 2, 9 and 12 read the vault. Every row that runs something (3-8, 10, 11) works in
a temporary folder -- row 3 on a copy of the vault's markdown, the others on a fixture
vault seeded as the spec says -- so verify never changes the user's vault.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from vaultkeeper import config

PASS, FAIL, SKIP = "PASS", "FAIL", "SKIP"
NAMES = (
    "store present",
    "frontmatter valid",
    "scheduler runs",
    "classify correct",
    "throttle",
    "re-entry guard",
    "stale recovery",
    "atomic write",
    "trigger registered",
    "decision loop",
    "round-trip",
    "format (SFS)",
)
_SUMMARY = re.compile(
    re.escape(config.SUMMARY_PREFIX)
    + r" prune candidates \d+ \| promote eligible \d+ \| held-out due \d+$"
)


@dataclass(frozen=True)
class Check:
    number: int
    name: str
    status: str  # PASS | FAIL | SKIP
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class VerifyResult:
    vault: str
    checks: tuple[Check, ...]

    @property
    def failed(self) -> bool:
        return any(c.status == FAIL for c in self.checks)


Row = Callable[["Context"], tuple[str, str]]


@dataclass(frozen=True)
class Context:
    vault: Path
    now: dt.datetime
    env: Mapping[str, str]
    tmp: Path

    @property
    def now_ms(self) -> int:
        return int(self.now.timestamp() * 1000)


def verify_vault(vault: Path, *, now: dt.datetime, env: Mapping[str, str]) -> VerifyResult:
    """Run every row in order; a row that crashes is a FAIL naming the error, not a crash."""
    from vaultkeeper import verify_rows

    rows: list[Row] = [
        _store,
        _frontmatter,
        _scheduler,
        verify_rows.classify_row,
        verify_rows.throttle_row,
        verify_rows.reentry_row,
        verify_rows.stale_row,
        verify_rows.atomic_row,
        _trigger,
        verify_rows.decision_row,
        verify_rows.round_trip_row,
        _format,
    ]
    checks: list[Check] = []
    with tempfile.TemporaryDirectory(prefix="vaultkeeper-verify-") as tmp:
        for number, (name, row) in enumerate(zip(NAMES, rows), start=1):
            ctx = Context(vault, now, env, Path(tmp) / f"row{number}")
            ctx.tmp.mkdir()
            try:
                status, detail = row(ctx)
            except Exception as exc:  # a broken row is a finding, never a traceback
                status, detail = FAIL, f"{type(exc).__name__}: {exc}"
            checks.append(Check(number, name, status, detail))
    return VerifyResult(str(vault), tuple(checks))


# -- rows that read the vault ---------------------------------------------------------


def _store(ctx: Context) -> tuple[str, str]:
    wanted = [config.INDEX_FILE] + [
        d + "/"
        for d in (config.PROJECTS_DIR, config.PATTERNS_DIR, config.REFERENCES_DIR, config.STATE_DIR)
    ]
    missing = [
        w
        for w in wanted
        if not (ctx.vault / w.rstrip("/")).is_dir()
        and not (not w.endswith("/") and (ctx.vault / w).is_file())
    ]
    if missing:
        return FAIL, f"missing: {', '.join(missing)} (vaultkeeper init adds them)"
    return PASS, ", ".join(wanted) + " present"


def _lint(ctx: Context, codes: list[str]) -> tuple[str, str]:
    from vaultkeeper.lint import lint_vault

    result = lint_vault(ctx.vault, select=codes)
    if not result.findings:
        return PASS, f"{result.files} markdown files, {' '.join(codes)}: no findings"
    first = result.findings[0]
    more = f" (+{len(result.findings) - 1} more: vaultkeeper lint)" if len(result.findings) > 1 else ""
    return FAIL, f"{first}{more}"


def _frontmatter(ctx: Context) -> tuple[str, str]:
    return _lint(ctx, ["VK001", "VK201"])


def _format(ctx: Context) -> tuple[str, str]:
    return _lint(ctx, ["VK101", "VK102", "VK103"])


def _scheduler(ctx: Context) -> tuple[str, str]:
    """The real command on a copy of the vault's markdown, forced past the cooldown."""
    from vaultkeeper.vault import iter_markdown, rel

    copy = ctx.tmp / "vault"
    for path in iter_markdown(ctx.vault):
        target = copy / rel(ctx.vault, path)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    (copy / config.STATE_DIR).mkdir(parents=True, exist_ok=True)
    env = {**ctx.env, config.ENV_FORCE: "1"}
    argv = [sys.executable, "-m", "vaultkeeper", "--vault", str(copy), "scan"]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    first = (done.stdout.splitlines() or [""])[0]
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or ["no message"])[-1]
        return FAIL, f"exit {done.returncode}: {why}"
    if not _SUMMARY.match(first):
        return FAIL, f"first line is {first!r}, not the {config.SUMMARY_PREFIX} summary"
    return PASS, f"exit 0: {first}"


def _trigger(ctx: Context) -> tuple[str, str]:
    """A session-end hook or a cron line for this vault, and when the last scan completed."""
    from vaultkeeper.hooks import default_path
    from vaultkeeper.status import last_completed, where_installed

    hosts = {t: default_path(t, ctx.env) for t in ("claude-code", "codex")}
    where = where_installed(hosts, True, ctx.env, ctx.vault)
    here = ctx.vault.resolve()

    def same(path: str | None) -> bool:
        return path is not None and Path(path).expanduser().resolve() == here

    found = [
        f"{h.target} SessionEnd hook ({h.path})"
        for h in where.hosts
        for handler in h.handlers
        if handler.event == "SessionEnd" and same(handler.vault)
    ] + [f"cron line ({e.line.split()[0:5] and ' '.join(e.line.split()[:5])})" for e in where.cron if same(e.vault)]
    when = last_completed(ctx.vault)
    last = f"last scan completed {when:%Y-%m-%d %H:%M} UTC" if when else "no scan completed yet"
    if not found:
        note = f"; crontab: {where.cron_note}" if where.cron_note else ""
        return FAIL, (
            f"no session-end hook or cron line for this vault (vaultkeeper hooks install "
            f"claude-code|codex|cron){note}; {last}"
        )
    return PASS, f"{'; '.join(found)}; {last}"


def ms_to_iso(millis: int) -> str:
    return dt.datetime.fromtimestamp(millis / 1000, tz=dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def wait_for_line(proc: subprocess.Popen[str], timeout: float) -> str:
    deadline = time.monotonic() + timeout
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if time.monotonic() > deadline:
        raise TimeoutError("child did not start in time")
    return line.strip()


__all__ = ["Check", "VerifyResult", "verify_vault", "NAMES", "PASS", "FAIL", "SKIP", "os"]
