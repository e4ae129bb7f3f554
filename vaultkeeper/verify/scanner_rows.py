"""verify's rows on the scanner (3 scheduler runs, 4 classify correct, 5 throttle, 6
re-entry guard, 7 stale recovery, 8 atomic write): the real scan, each on a copy of the
vault's markdown or on the spec's step-4 fixture in a temporary folder.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import re
import select
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.verify.common import (
    FAIL,
    PASS,
    Context,
    child_env,
    fixture,
    scan,
    unforced,
)

_SUMMARY = re.compile(
    re.escape(config.SUMMARY_PREFIX)
    + r" prune candidates \d+ \| promote eligible \d+ \| held-out due \d+$"
)


def scheduler_runs(ctx: Context) -> Callable[[], tuple[str, str]]:
    """Row 3 started: the real command, forced past the cooldown, on a copy of the
    vault's markdown, runs while verify goes on with other rows; the function returned
    waits for it and says the row's result."""
    from vaultkeeper.store.vault import iter_markdown, rel

    copy = ctx.tmp / "vault"
    (copy / config.STATE_DIR).mkdir(parents=True)
    for path in iter_markdown(ctx.vault):
        if not path.is_file():  # a FIFO named *.md: no copy, and no false FAIL
            continue
        target = copy / rel(ctx.vault, path)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    env = child_env(ctx.env, **{config.ENV_FORCE: "1"})
    argv = [sys.executable, "-m", "vaultkeeper", "--vault", str(copy), "scan"]
    proc = subprocess.Popen(
        argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip

    def finish() -> tuple[str, str]:
        try:
            out, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        first = (out.splitlines() or [""])[0]
        if proc.returncode != 0:
            why = (err.strip().splitlines() or ["no message"])[-1]
            return FAIL, f"exit {proc.returncode}: {why}"
        if not _SUMMARY.match(first):
            return FAIL, f"first line is {first!r}, not the {config.SUMMARY_PREFIX} summary"
        return PASS, f"exit 0: {first}"

    return finish


def classify_correct(ctx: Context) -> tuple[str, str]:
    from vaultkeeper.scan.classify import classify

    report = classify(fixture(ctx), ctx.now)
    got = {k: sorted(c.name for c in v) for k, v in report.lists().items()}
    shown = f"promote {got['promote']}, prune {got['prune']}, held-out {got['held_out']}"
    if got == {"promote": ["foo"], "prune": ["bar"], "held_out": ["baz"]}:
        return PASS, f"{shown}: each in exactly one list"
    return FAIL, f"{shown}; expected promote [foo], prune [bar], held-out [baz]"


def throttle(ctx: Context) -> tuple[str, str]:
    vault, env = fixture(ctx), unforced(ctx.env)
    first = scan(vault, ctx.now, env)
    second = scan(vault, ctx.now + dt.timedelta(minutes=1), env)
    forced = scan(vault, ctx.now + dt.timedelta(minutes=2), env, force=True)
    if first.report is None:
        return FAIL, f"the first run did not scan ({first.skipped}: {first.detail})"
    if second.report is not None:
        return FAIL, "a second run 1 minute later scanned again: no cooldown in force"
    if forced.report is None:
        return FAIL, f"a forced run skipped ({forced.skipped}: {forced.detail})"
    return PASS, f"2nd run within the cooldown skipped ({second.detail}); forced run scanned"


def _behind_a_run(ctx: Context, age_ms: int, force: bool) -> tuple[Path, Any]:
    """The fixture's scan, forced or not, while the state file says a run started
    ``age_ms`` ago is in progress in a live process that is not this one."""
    from vaultkeeper.scan.statefile import IN_PROGRESS, default_state, write_state

    vault = fixture(ctx)
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    try:
        state = {"state": IN_PROGRESS, "lastTriggered": ctx.now_ms - age_ms, "pid": child.pid}
        write_state(vault, {**default_state(), **state})
        return vault, scan(vault, ctx.now, unforced(ctx.env), force=force)
    finally:
        child.communicate(b"", timeout=30)


def reentry_guard(ctx: Context) -> tuple[str, str]:
    _, outcome = _behind_a_run(ctx, 60_000, force=True)
    if outcome.report is not None:
        return FAIL, "a run started although another (live pid, 1 min old) is in progress"
    return PASS, f"skipped even when forced: {outcome.detail}"


def stale_recovery(ctx: Context) -> tuple[str, str]:
    from vaultkeeper.scan.statefile import IDLE, read_state

    vault, outcome = _behind_a_run(ctx, config.STALE_RUN_MS, force=False)
    after = read_state(vault).data
    if outcome.report is None:
        return (
            FAIL,
            f"a run {config.STALE_RUN_MS // 60_000} min stale still blocks: {outcome.detail}",
        )
    if after["state"] != IDLE or after["lastCompleted"] < ctx.now_ms:
        return (
            FAIL,
            f"state after the run: {after['state']}, lastCompleted {after['lastCompleted']}",
        )
    return PASS, "stale in-progress run reset to idle, then the scan ran and completed"


_WRITER = """
import sys
from vaultkeeper.scan import statefile as state
print("ready", flush=True)
if not sys.stdin.readline():  # "go": started early, so Python's start overlaps other rows
    sys.exit(0)  # verify went away before its turn: write nothing
i = 0
while True:
    i += 1
    state.write_state(sys.argv[1], {**state.default_state(), "lastCompleted": i,
                                    "perTask": {"pad": "x" * 200000}})
    if i == 1:
        print("wrote", flush=True)
"""


def _line(proc: subprocess.Popen[bytes], timeout: float) -> bytes:
    """The child's next line, or b"" if none comes within ``timeout`` (a bound, not a wait)."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    return proc.stdout.readline().strip() if ready else b""


def _kill_after_write(proc: subprocess.Popen[bytes], delay: float, bound: float) -> str | None:
    """SIGKILL ``proc`` ``delay`` s after its first finished write; why not, or None."""
    assert proc.stdout is not None
    started = _line(proc, bound) == b"ready"
    wrote = started and _line(proc, bound) == b"wrote"
    try:
        proc.wait(timeout=delay)
        return f"the writer process ended by itself (exit {proc.returncode})"
    except subprocess.TimeoutExpired:
        proc.kill()  # SIGKILL: no cleanup of any kind runs
    proc.wait(timeout=bound)
    if not started:
        return "the writer process did not start"
    if not wrote:
        return f"the writer finished no write in {bound:.0f} s"
    return None


def atomic_write(ctx: Context) -> Callable[[], tuple[str, str]]:
    """Row 8 started: kill a process mid-way through rewriting the state file, several
    times. Its writer processes start and wait; the function returned sets them
    writing, kills them, and checks."""
    from vaultkeeper.scan.statefile import read_state, state_path, write_state

    vault = fixture(ctx)
    path = Path(state_path(vault))
    path.parent.mkdir(parents=True, exist_ok=True)
    write_state(vault, read_state(vault).data)
    where = f"{config.STATE_DIR}/{config.STATE_FILE}"
    bound = config.VERIFY_CHILD_BOUND_S
    # Each kill comes after the writer's first finished write (an event, not a time: on
    # a busy machine starting Python alone can take longer than any fixed delay), then
    # a little later each time, to land at different points of the rewrites. The three
    # writers run at once, each on its own copy, so the row costs one start, not three.
    vaults = [vault]
    for n in (1, 2):
        copy = ctx.tmp / f"fixture-{n}"
        shutil.copytree(vault, copy)
        vaults.append(copy)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(v)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            bufsize=0,  # unbuffered: a readline takes one line, never the next one too
            stderr=subprocess.DEVNULL,
            env=child_env(ctx.env),
        )
        for v in vaults
    ]
    return lambda: _kill_and_check(procs, vaults, where, bound)


def _kill_and_check(
    procs: list[subprocess.Popen[bytes]], vaults: list[Path], where: str, bound: float
) -> tuple[str, str]:
    from vaultkeeper.scan.statefile import read_state, state_path

    try:
        for proc in procs:  # all write at once, each on its own copy
            assert proc.stdin is not None
            with contextlib.suppress(OSError):  # one that died: _kill_after_write says so
                proc.stdin.write(b"go\n")
                proc.stdin.flush()
        for delay, proc, target in zip((0.0, 0.02, 0.05), procs, vaults, strict=True):
            failed = _kill_after_write(proc, delay, bound)
            if failed:
                return FAIL, failed
            state_file = Path(state_path(target))
            try:
                data = json.loads(state_file.read_bytes())
            except ValueError as exc:
                return (
                    FAIL,
                    f"after a kill {delay} s past a write, {where} is not valid JSON: {exc}",
                )
            if read_state(target).note is not None or not data.get("lastCompleted"):
                why = read_state(target).note or "lastCompleted missing"
                return FAIL, f"after a kill {delay} s past a write: {why}"
    finally:
        for proc in procs:
            proc.kill()  # nothing for one already reaped
            proc.communicate(timeout=bound)  # reaps it and closes its pipes
    return PASS, f"killed 3 times while rewriting {where}: valid JSON every time"
