"""The scheduler's run guards: the mkdir lock, leftovers of killed runs, start/finish/abort.

The state file itself and the checks read from it alone (cooldown, re-entry) live in
statefile.py, which the throttled no-op imports without this module; their names are
re-exported here so callers keep one place for the scheduler. Times are epoch
milliseconds, as in the spec.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import time

from vaultkeeper import config
from vaultkeeper.scan.statefile import IDLE as IDLE
from vaultkeeper.scan.statefile import IN_PROGRESS as IN_PROGRESS
from vaultkeeper.scan.statefile import SKIP_COOLDOWN as SKIP_COOLDOWN
from vaultkeeper.scan.statefile import SKIP_IN_PROGRESS as SKIP_IN_PROGRESS
from vaultkeeper.scan.statefile import SKIP_LOCKED as SKIP_LOCKED
from vaultkeeper.scan.statefile import Run as Run
from vaultkeeper.scan.statefile import Skip as Skip
from vaultkeeper.scan.statefile import StateRead as StateRead
from vaultkeeper.scan.statefile import cooldown_ms as cooldown_ms
from vaultkeeper.scan.statefile import cooling, ordered, scan_running, whole_number
from vaultkeeper.scan.statefile import default_state as default_state
from vaultkeeper.scan.statefile import forced as forced
from vaultkeeper.scan.statefile import lock_path as lock_path
from vaultkeeper.scan.statefile import pid_alive as pid_alive
from vaultkeeper.scan.statefile import precheck as precheck
from vaultkeeper.scan.statefile import read_state as read_state
from vaultkeeper.scan.statefile import state_dir as state_dir
from vaultkeeper.scan.statefile import state_path as state_path
from vaultkeeper.scan.statefile import write_state as write_state

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


def _lock_owner(lock: str) -> int | None:
    try:
        with open(os.path.join(lock, config.LOCK_PID_FILE), "rb") as fh:
            text = fh.read().strip()
    except OSError:
        return None
    return whole_number(text)


def _remove_lock(path: str) -> None:
    """Remove what sits at the lock's name: a folder with its pid file, or a file or link."""
    try:
        info = os.lstat(path)
    except OSError:
        return
    if stat.S_ISDIR(info.st_mode):
        _remove_dir(path)
    else:
        with contextlib.suppress(OSError):
            os.unlink(path)


def _remove_dir(path: str) -> None:
    try:
        for name in os.listdir(path):
            os.unlink(os.path.join(path, name))
        os.rmdir(path)
    except OSError:
        pass  # already gone, or not ours to empty: the next run looks again


def _try_lock(vault: str | os.PathLike[str], pid: int) -> bool:
    """Take the lock: a directory whose ``pid`` file names the owner.

    The directory is made under a private name with the pid file already inside, then
    renamed into place, so the lock never exists without its owner's pid (a run killed
    between a bare mkdir and writing the pid would leave a lock nobody can judge).
    """
    folder = state_dir(vault)
    os.makedirs(folder, exist_ok=True)
    private = os.path.join(folder, f".{config.LOCK_DIR}.{pid}.tmp")
    _remove_dir(private)  # a leftover of a dead process that had our pid
    os.mkdir(private)
    try:
        with open(os.path.join(private, config.LOCK_PID_FILE), "w", encoding="ascii") as fh:
            fh.write(f"{pid}\n")
        os.rename(private, lock_path(vault))
        return True
    except OSError as exc:
        if exc.errno in (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR):
            return False
        raise
    finally:
        _remove_dir(private)


def _stale_lock(lock: str, now_ms: int) -> tuple[str | None, int | None]:
    """(why the held lock is stale or None, its owner's pid).

    Only a real folder can be a lock this code made: a file or a symlink (dangling or
    not) at its name is stale at once, and so is a folder dated in the future (else it
    would block every scan until that date).
    """
    try:
        info = os.lstat(lock)
    except OSError:
        return "gone", None
    if stat.S_ISLNK(info.st_mode):
        return "a symlink, not a lock folder", None
    if not stat.S_ISDIR(info.st_mode):
        return "a file, not a lock folder", None
    owner = _lock_owner(lock)
    age = now_ms - int(info.st_mtime * 1000)
    # the future against the real clock: ``now_ms`` may be a test's fixed day, and no
    # running process can have made a lock after the real now
    if info.st_mtime * 1000 > time.time() * 1000 + config.LOCK_CLOCK_SLACK_MS:
        return "its time is in the future", owner
    if age >= config.STALE_RUN_MS:
        return f"older than {config.STALE_RUN_MS // 60_000} minutes", owner
    if owner is not None and not pid_alive(owner):
        return f"its owner pid {owner} is not running", owner
    return None, owner


def release(vault: str | os.PathLike[str], pid: int) -> None:
    """Remove the lock if ``pid`` holds it; safe to call any number of times."""
    lock = lock_path(vault)
    if _lock_owner(lock) == pid:
        _remove_dir(lock)


def _sweep(vault: str | os.PathLike[str]) -> None:
    """Remove what killed runs left in state/: private lock dirs and half-written temp files.

    Called while holding the lock. Only a holder writes the state file: its temp
    files go at once. Any other (the report, the recall table and its rows: an apply,
    `hooks install --recall` or `new` may be writing one under the writer lock, not this
    one) goes once older than a run may last (STALE_RUN_MS), by the rule of
    store.fsio.sweep_temps.
    """
    folder = state_dir(vault)
    lock_prefix = f".{config.LOCK_DIR}."
    own = f".{config.STATE_FILE}."
    stale = time.time() - config.STALE_RUN_MS / 1000
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        path = os.path.join(folder, name)
        if name.startswith(lock_prefix) and name.endswith(".tmp"):
            pid = whole_number(name[len(lock_prefix) : -len(".tmp")])
            if pid is not None and not pid_alive(pid):
                _remove_dir(path)
            continue
        if not (name.startswith(".") and name.endswith(".vk-tmp")):
            continue
        with contextlib.suppress(OSError):
            if name.startswith(own) or os.lstat(path).st_mtime < stale:
                os.unlink(path)


def start(
    vault: str | os.PathLike[str],
    *,
    env: Mapping[str, str],
    now_ms: int,
    force: bool,
    pid: int,
) -> Run | Skip:
    """Pass every guard and mark the run in progress, or say why not.

    Order: cooldown and re-entry on the state file alone (the no-op path writes nothing);
    then the lock (a stale one is removed); then both checks again under the lock, since
    another run may have completed in between. ``force`` skips only the cooldown.
    """
    cooldown, env_note = cooldown_ms(env)
    notes: list[str] = [env_note] if env_note else []
    skip = precheck(vault, env, now_ms, force)
    if skip is not None:
        return skip._replace(notes=tuple(notes))
    lock = lock_path(vault)
    where = f"{config.STATE_DIR}/{config.LOCK_DIR}"
    if not _try_lock(vault, pid):
        why, owner = _stale_lock(lock, now_ms)
        if why is None:
            return Skip(SKIP_LOCKED, f"{where} is held by pid {owner}", tuple(notes))
        if _lock_owner(lock) == owner:  # still the lock we judged, not a fresh one
            _remove_lock(lock)
            if why != "gone" and not os.path.lexists(lock):
                notes.append(f"{where}: stale ({why}); removed")
        if not _try_lock(vault, pid):
            if _stale_lock(lock, now_ms)[0] not in (None, "gone"):
                # said on every run (notes always print), so the scanner never goes
                # silently dead behind a lock it cannot remove
                notes.append(f"{where}: stale ({why}) but could not be removed; remove it by hand")
            return Skip(SKIP_LOCKED, f"{where} is held by pid {_lock_owner(lock)}", tuple(notes))
    marked = False
    try:
        state, note = read_state(vault)
        if note:
            notes.append(note)
        if not forced(env, force) and cooling(state, now_ms, cooldown) is not None:
            release(vault, pid)
            return Skip(SKIP_COOLDOWN, "another run completed a scan just now", tuple(notes))
        if scan_running(state, now_ms):
            release(vault, pid)
            return Skip(
                SKIP_IN_PROGRESS, f"a scan is in progress (pid {state['pid']})", tuple(notes)
            )
        if state["state"] == IN_PROGRESS:
            age = max(0, now_ms - int(state["lastTriggered"])) // 1000
            notes.append(
                f"{config.STATE_DIR}/{config.STATE_FILE}: the run by pid {state['pid']} "
                f"started {age} s ago is stale; reset to idle"
            )
        _sweep(vault)
        running = dict(state, state=IN_PROGRESS, lastTriggered=now_ms, cooldownMs=cooldown, pid=pid)
        marked = True  # from here the file may say in-progress (a signal may land mid-write)
        write_state(vault, ordered(running), flush_folder=False)
    except BaseException:
        if marked:  # the caller never gets a Run to abort: put the file back to idle here
            with contextlib.suppress(Exception):
                abort(Run(os.fspath(vault), pid, now_ms, cooldown, state, ()))
        release(vault, pid)
        raise
    return Run(os.fspath(vault), pid, now_ms, cooldown, state, tuple(notes))


def finish(run: Run, completed_ms: int, figures: Mapping[str, Any]) -> None:
    """Mark the run completed: idle, lastCompleted, pid null, perTask.selfMaintain."""
    per_task = dict(run.previous.get("perTask") or {})
    per_task["selfMaintain"] = dict(figures)
    done = dict(
        run.previous,
        state=IDLE,
        lastCompleted=completed_ms,
        lastTriggered=run.started_ms,
        cooldownMs=run.cooldown_ms,
        pid=None,
        perTask=per_task,
    )
    write_state(run.vault, ordered(done))


def abort(run: Run) -> None:
    """Back to idle after a failed or interrupted run; lastCompleted stays as it was."""
    back = dict(run.previous, state=IDLE, lastTriggered=run.started_ms, pid=None)
    write_state(run.vault, ordered(back))
