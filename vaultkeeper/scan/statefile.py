"""The state file ``state/self-maintain.json`` and the checks made on it alone.

Split from state.py so the throttled no-op path (a scan inside the cooldown, the commonest
run by far) loads only this: the paths, reading and validating the file, the cooldown and
the re-entry guard. Only the standard library, config and plainjson are imported here, so
that path costs little more than starting Python. It imports neither typing nor json (each
about a tenth of its run): the tuples below are collections.namedtuple at run time, and
the state file, in the form write_state gives it, is read without json (plainjson.py).
Times are epoch milliseconds, as in the spec.
"""

from __future__ import annotations

import os
from collections import namedtuple
from stat import S_ISREG

from vaultkeeper import config
from vaultkeeper.store import plainjson

_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, NamedTuple

    from vaultkeeper.report.candidates import Report

IDLE = "idle"
IN_PROGRESS = "in-progress"
SKIP_COOLDOWN = "cooldown"
SKIP_LOCKED = "locked"
SKIP_IN_PROGRESS = "in-progress"
_TRUE = ("1", "true", "yes", "on")


if TYPE_CHECKING:  # the types; at run time the same tuples, without importing typing

    class StateRead(NamedTuple):
        """The state file as read: always a full, valid state; ``note`` says what was wrong."""

        data: dict[str, Any]
        note: str | None

    class Skip(NamedTuple):
        """Why a run did not scan (``reason`` is one of the SKIP_* names) and what to tell."""

        reason: str
        detail: str
        notes: tuple[str, ...]

    class Run(NamedTuple):
        """A run that holds the lock and may scan; pass it to finish()/abort() and release()."""

        vault: str
        pid: int
        started_ms: int
        cooldown_ms: int
        previous: dict[str, Any]
        notes: tuple[str, ...]

    class ScanOutcome(NamedTuple):
        """A completed scan's report, or why the run skipped; ``notes`` go to stderr.
        (The throttled no-op returns one of these: see the module's docstring.)"""

        report: Report | None
        skipped: str | None
        detail: str
        notes: tuple[str, ...]

else:
    StateRead = namedtuple("StateRead", ("data", "note"))
    Skip = namedtuple("Skip", ("reason", "detail", "notes"))
    Run = namedtuple("Run", ("vault", "pid", "started_ms", "cooldown_ms", "previous", "notes"))
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
            if not S_ISREG(os.fstat(fh.fileno()).st_mode):
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
    vault: str | os.PathLike[str], env: Mapping[str, str], now_ms: int, force: bool
) -> Skip | None:
    """The no-op path: read the state file only, write nothing, say why to skip (or None)."""
    cooldown, _ = cooldown_ms(env)
    state, _ = read_state(vault)
    if not forced(env, force):
        since = cooling(state, now_ms, cooldown)
        if since is not None:
            left = (cooldown - since + 999) // 1000
            return Skip(
                SKIP_COOLDOWN,
                f"last scan completed {since // 1000} s ago; {left} s of cooldown left",
                (),
            )
    if scan_running(state, now_ms):
        return Skip(SKIP_IN_PROGRESS, f"a scan is in progress (pid {state['pid']})", ())
    return None


def ordered(data: dict[str, Any]) -> dict[str, Any]:
    """Exactly the spec's keys, in the spec's order."""
    return {key: data[key] for key in default_state()}
