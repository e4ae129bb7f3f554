"""The scheduler's guards: the spec's state file ``state/self-maintain.json``, its mkdir
lock, the cooldown and re-entry checks, stale-run recovery, and start/finish/abort.

The throttled no-op (a scan inside the cooldown, the commonest run by far) runs only
``precheck``: it reads the state file and writes nothing, so this module imports only
the standard library's cheapest modules, config and plainjson (no typing, json or
contextlib: each is about a tenth of that run), and reads the state file as
write_state writes it without json. Times are epoch milliseconds, as in the spec.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from collections import namedtuple

from vaultkeeper import config
from vaultkeeper.store import plainjson

_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

IDLE = "idle"
IN_PROGRESS = "in-progress"
SKIP_COOLDOWN = "cooldown"
SKIP_LOCKED = "locked"
SKIP_IN_PROGRESS = "in-progress"
_TRUE = ("1", "true", "yes", "on")


# collections.namedtuple, not typing.NamedTuple: the no-op imports no typing
# the state file as read (always full and valid; ``note`` says what was wrong)
StateRead = namedtuple("StateRead", ("data", "note"))
# why a run did not scan (``reason`` is a SKIP_* name) and what to tell
Skip = namedtuple("Skip", ("reason", "detail", "notes"))
# a run that holds the lock and may scan: for finish()/abort() and release()
Run = namedtuple("Run", ("vault", "pid", "started_ms", "cooldown_ms", "previous", "notes"))
# a completed scan's report, or why the run skipped; notes go to stderr
ScanOutcome = namedtuple("ScanOutcome", ("report", "skipped", "detail", "notes"))


def state_dir(vault: str | os.PathLike[str]) -> str:
    return os.path.join(os.fspath(vault), config.STATE_DIR)


def state_path(vault: str | os.PathLike[str]) -> str:
    return os.path.join(state_dir(vault), config.STATE_FILE)


def lock_path(vault: str | os.PathLike[str]) -> str:
    return os.path.join(state_dir(vault), config.LOCK_DIR)


def whole_number(text: str | bytes) -> int | None:
    """1 to 18 ASCII digits -> int; anything else (signs, other scripts' digits, a
    5,000-digit value that int() would refuse) -> None."""
    if isinstance(text, bytes):
        text = text.decode("ascii", "replace")
    if 0 < len(text) <= 18 and text.isascii() and text.isdigit():
        return int(text)
    return None


def cooldown_ms(env: Mapping[str, str]) -> tuple[int, str | None]:
    """The cooldown in force: ``$SELF_MAINTAIN_COOLDOWN_MS`` if it is a whole number >= 0."""
    raw = env.get(config.ENV_COOLDOWN)
    if raw is None or not raw.strip():
        return config.COOLDOWN_MS, None
    value = whole_number(raw.strip())  # no sign, no fraction, no exponent
    if value is not None:
        return value, None
    note = (
        f"{config.ENV_COOLDOWN}={raw!r} is not a whole number of milliseconds; "
        f"using the default {config.COOLDOWN_MS}"
    )
    return config.COOLDOWN_MS, note


def forced(env: Mapping[str, str], flag: bool = False) -> bool:
    """``--force`` or ``$SELF_MAINTAIN_FORCE=1`` (true/yes/on also count)."""
    return flag or env.get(config.ENV_FORCE, "").strip().lower() in _TRUE


def default_state(cooldown: int = config.COOLDOWN_MS) -> dict[str, Any]:
    """The spec's state file, idle and never run; exactly its six keys, in its order."""
    return {
        "state": IDLE,
        "lastCompleted": 0,
        "lastTriggered": 0,
        "cooldownMs": cooldown,
        "pid": None,
        "perTask": {},
    }


def _ms(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value) if value == value and abs(value) < 1e15 else None  # NaN, absurd


def _validate(data: Any) -> tuple[dict[str, Any], str | None]:
    if not isinstance(data, dict):
        return default_state(), "is not a JSON object"
    out = default_state()
    if data.get("state") not in (IDLE, IN_PROGRESS):
        return out, f"has state {data.get('state')!r}, not {IDLE!r} or {IN_PROGRESS!r}"
    for key in ("lastCompleted", "lastTriggered", "cooldownMs"):
        value = _ms(data.get(key))
        if value is None:
            return default_state(), f"has {key} {data.get(key)!r}, not epoch milliseconds"
        out[key] = value
    pid = data.get("pid")
    if pid is not None and (isinstance(pid, bool) or not isinstance(pid, int)):
        return default_state(), f"has pid {pid!r}, not a process id or null"
    per_task = data.get("perTask", {})
    if not isinstance(per_task, dict):
        return default_state(), "has a perTask that is not a JSON object"
    out.update(state=data["state"], pid=pid, perTask=per_task)
    return out, None


def read_state(vault: str | os.PathLike[str]) -> StateRead:
    """Read the state file; missing, empty or corrupt -> idle (``note`` says which)."""
    path = state_path(vault)
    where = f"{config.STATE_DIR}/{config.STATE_FILE}"
    try:  # a regular file only: a symlink (to /dev/zero) or a FIFO would never end
        with open(os.open(path, _READ_FLAGS), "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise OSError(0, "not a regular file")
            raw = fh.read()
    except FileNotFoundError:
        return StateRead(default_state(), f"{where}: missing; starting from idle")
    except OSError as exc:
        return StateRead(default_state(), f"{where}: unreadable ({exc.strerror}); treated as idle")
    if not raw.strip():
        return StateRead(default_state(), f"{where}: empty; treated as idle and replaced")
    try:
        data = plainjson.loads(raw)  # the file as write_state wrote it, without importing json
        if data is plainjson.NOT_PLAIN:
            import json

            data = json.loads(raw)
    except (ValueError, RecursionError):
        return StateRead(default_state(), f"{where}: not valid JSON; treated as idle and replaced")
    state, problem = _validate(data)
    if problem is not None:
        return StateRead(state, f"{where}: {problem}; treated as idle and replaced")
    return StateRead(state, None)


def write_state(
    vault: str | os.PathLike[str], data: dict[str, Any], flush_folder: bool = True
) -> None:
    """Replace the state file atomically, its bytes always flushed (valid JSON after a
    crash, as the spec asks); ``flush_folder=False`` leaves the rename itself unflushed
    (the in-progress mark: if a crash loses it, the file says what it said before)."""
    import json
    from pathlib import Path

    from vaultkeeper.store.fsio import (
        atomic_write,  # stdlib-only module; not needed on the no-op path
    )

    text = json.dumps(data, indent=2) + "\n"
    atomic_write(Path(state_path(vault)), text, fsync_dir=flush_folder)


def pid_alive(pid: int) -> bool:
    """True when ``pid`` is a running process (not a zombie) other than this one."""
    if pid <= 0 or pid == os.getpid():
        return False  # our own pid in the state file is a previous run's, reused
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    except (OSError, OverflowError, ValueError):  # e.g. a hand-edited pid past the C range
        return False
    try:  # a killed child not yet reaped still answers signal 0
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[-1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True


def cooling(state: dict[str, Any], now_ms: int, cooldown: int) -> int | None:
    """Milliseconds since the last completed run when that is inside the cooldown."""
    since = now_ms - int(state["lastCompleted"])
    return since if state["lastCompleted"] > 0 and 0 <= since < cooldown else None


def scan_running(state: dict[str, Any], now_ms: int) -> bool:
    """The re-entry guard: in progress, with a live pid, triggered under 10 minutes ago."""
    pid = state["pid"]
    return (
        state["state"] == IN_PROGRESS
        and isinstance(pid, int)
        and now_ms - int(state["lastTriggered"]) < config.STALE_RUN_MS
        and pid_alive(pid)
    )


def precheck(
    vault: str | os.PathLike[str],
    env: Mapping[str, str],
    now_ms: int,
    force: bool,
    state: dict[str, Any] | None = None,
) -> Skip | None:
    """The no-op path: read the state file only (or judge ``state``, read again under the
    lock), write nothing, say why to skip (or None)."""
    cooldown, _ = cooldown_ms(env)
    again = state is not None
    if state is None:
        state, _ = read_state(vault)
    if not forced(env, force):
        since = cooling(state, now_ms, cooldown)
        if since is not None:
            left = (cooldown - since + 999) // 1000
            detail = f"last scan completed {since // 1000} s ago; {left} s of cooldown left"
            return Skip(
                SKIP_COOLDOWN, "another run completed a scan just now" if again else detail, ()
            )
    if scan_running(state, now_ms):
        return Skip(SKIP_IN_PROGRESS, f"a scan is in progress (pid {state['pid']})", ())
    return None


def ordered(data: dict[str, Any]) -> dict[str, Any]:
    """Exactly the spec's keys, in the spec's order."""
    return {key: data[key] for key in default_state()}


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
        return
    try:  # noqa: SIM105 - no contextlib on the no-op's path
        os.unlink(path)
    except OSError:
        pass


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

    Called while holding the lock. Only a holder writes the state file: its temp files
    go at once; any other (a command may be writing one under the writer lock) once
    older than a run may last (STALE_RUN_MS), by store.fsio.sweep_temps's rule.
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
        try:
            if name.startswith(own) or os.lstat(path).st_mtime < stale:
                os.unlink(path)
        except OSError:
            pass


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
        skip = precheck(vault, env, now_ms, force, state)
        if skip is not None:
            release(vault, pid)
            return skip._replace(notes=tuple(notes))
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
            try:  # noqa: SIM105 - no contextlib on the no-op's path
                abort(Run(os.fspath(vault), pid, now_ms, cooldown, state, ()))
            except Exception:  # noqa: BLE001 - the original error is the one to report
                pass
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
