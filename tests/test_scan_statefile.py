"""The scheduler's guards, one at a time: state file, cooldown, lock, re-entry, stale recovery."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import MakeVault
from vaultkeeper import config
from vaultkeeper.cli import cli
from vaultkeeper.scan import statefile as state

NOW_MS = 1_788_264_000_000  # 2026-09-01T12:00:00Z
MINUTE = 60_000
KEYS = ["state", "lastCompleted", "lastTriggered", "cooldownMs", "pid", "perTask"]
ME = os.getpid()


@pytest.fixture
def vault(make_vault: MakeVault) -> Path:
    return make_vault()


@pytest.fixture
def live_pid() -> Iterator[int]:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield proc.pid
    proc.kill()
    proc.wait()


@pytest.fixture
def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def write(vault: Path, **values: object) -> None:
    data = {**state.default_state(), **values}
    (vault / "state" / config.STATE_FILE).write_text(json.dumps(data))


def read(vault: Path) -> dict[str, object]:
    data = json.loads((vault / "state" / config.STATE_FILE).read_text())
    assert list(data) == KEYS
    return data


def listing(folder: Path) -> list[str]:
    """What is in state/, less the applier's writer lock (``init`` may leave it)."""
    return sorted(n for n in os.listdir(folder) if n != config.WRITER_LOCK_FILE)


def lock_dir(vault: Path) -> Path:
    return vault / "state" / config.LOCK_DIR


def hold_lock(vault: Path, pid: int | None, age_ms: int = 0) -> None:
    lock_dir(vault).mkdir()
    if pid is not None:
        (lock_dir(vault) / config.LOCK_PID_FILE).write_text(f"{pid}\n")
    when = (NOW_MS - age_ms) / 1000
    os.utime(lock_dir(vault), (when, when))


def start(vault: Path, force: bool = False, **env: str) -> state.Run | state.Skip:
    return state.start(vault, env=env, now_ms=NOW_MS, force=force, pid=ME)


def finish(run: state.Run | state.Skip) -> None:
    assert isinstance(run, state.Run), run
    state.finish(run, NOW_MS + 5, {"promote": 1})
    state.release(run.vault, ME)


# -- the state file -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (None, "missing"),
        (b"", "empty"),
        (b"  \n", "empty"),
        (b'{"state": "idle", "lastComp', "not valid JSON"),
        (b"[1, 2]", "not a JSON object"),
        (b'{"state": "busy", "lastCompleted": 0}', "has state 'busy'"),
        (b'{"state": "idle", "lastCompleted": "soon"}', "has lastCompleted 'soon'"),
        (b'{"state": "idle", "lastCompleted": true}', "has lastCompleted True"),
    ],
)
def test_missing_empty_or_corrupt_state_is_idle_noted_and_replaced(
    vault: Path, content: bytes | None, why: str
) -> None:
    path = vault / "state" / config.STATE_FILE
    if content is not None:
        path.write_bytes(content)
    read_back = state.read_state(vault)
    assert read_back.data == state.default_state()
    assert read_back.note is not None and why in read_back.note
    run = start(vault)
    assert isinstance(run, state.Run)
    assert any(why in note for note in run.notes)
    finish(run)
    assert read(vault)["state"] == "idle"


def test_a_run_marks_in_progress_first_then_idle_with_figures(vault: Path) -> None:
    write(vault, lastCompleted=NOW_MS - 2 * 3_600_000, perTask={"other": {"kept": True}})
    run = start(vault)
    assert isinstance(run, state.Run)
    during = read(vault)
    assert (during["state"], during["pid"], during["lastTriggered"]) == ("in-progress", ME, NOW_MS)
    assert during["lastCompleted"] == NOW_MS - 2 * 3_600_000
    assert (lock_dir(vault) / config.LOCK_PID_FILE).read_text() == f"{ME}\n"
    state.finish(run, NOW_MS + 42, {"promote": 1, "durationMs": 42})
    state.release(vault, ME)
    after = read(vault)
    assert after == {
        "state": "idle",
        "lastCompleted": NOW_MS + 42,
        "lastTriggered": NOW_MS,
        "cooldownMs": config.COOLDOWN_MS,
        "pid": None,
        "perTask": {"other": {"kept": True}, "selfMaintain": {"promote": 1, "durationMs": 42}},
    }
    assert not lock_dir(vault).exists()


def test_abort_returns_to_idle_and_keeps_last_completed(vault: Path) -> None:
    write(vault, lastCompleted=123)
    run = start(vault)
    assert isinstance(run, state.Run)
    state.abort(run)
    state.release(vault, ME)
    data = read(vault)
    assert (data["state"], data["pid"], data["lastCompleted"]) == ("idle", None, 123)


# -- throttle -------------------------------------------------------------------------------


def test_inside_the_cooldown_skips_and_writes_nothing(vault: Path) -> None:
    write(vault, lastCompleted=NOW_MS - 59 * MINUTE)
    before = sorted(os.listdir(vault / "state")), read(vault)
    skip = start(vault)
    assert isinstance(skip, state.Skip) and skip.reason == state.SKIP_COOLDOWN
    assert skip.notes == ()
    assert (sorted(os.listdir(vault / "state")), read(vault)) == before


def test_after_the_cooldown_runs(vault: Path) -> None:
    write(vault, lastCompleted=NOW_MS - 60 * MINUTE)
    finish(start(vault))


@pytest.mark.parametrize("how", ["flag", "env"])
def test_force_skips_the_cooldown(vault: Path, how: str) -> None:
    write(vault, lastCompleted=NOW_MS - MINUTE)
    run = start(vault, force=True) if how == "flag" else start(vault, SELF_MAINTAIN_FORCE="1")
    finish(run)


def test_cooldown_env_override_and_bad_values() -> None:
    assert state.cooldown_ms({}) == (config.COOLDOWN_MS, None)
    assert state.cooldown_ms({config.ENV_COOLDOWN: " 5000 "}) == (5000, None)
    assert state.cooldown_ms({config.ENV_COOLDOWN: "0"}) == (0, None)
    for bad in ("soon", "-5", "1.5", "1e6", "\u00b2", "9" * 5000):
        value, note = state.cooldown_ms({config.ENV_COOLDOWN: bad})
        assert value == config.COOLDOWN_MS
        assert note is not None and "not a whole number" in note


def test_cooldown_env_is_used_by_the_throttle(vault: Path) -> None:
    write(vault, lastCompleted=NOW_MS - 10 * MINUTE)
    assert isinstance(start(vault, SELF_MAINTAIN_COOLDOWN_MS="600001"), state.Skip)
    run = start(vault, SELF_MAINTAIN_COOLDOWN_MS="600000")
    assert isinstance(run, state.Run) and run.cooldown_ms == 600_000
    finish(run)
    assert read(vault)["cooldownMs"] == 600_000


def test_force_values() -> None:
    assert state.forced({}, True)
    assert not state.forced({})
    assert state.forced({config.ENV_FORCE: "1"})
    assert not state.forced({config.ENV_FORCE: "0"})


# -- the lock -------------------------------------------------------------------------------


def test_a_held_lock_skips_silently(vault: Path, live_pid: int) -> None:
    hold_lock(vault, live_pid)
    skip = start(vault, force=True)
    assert isinstance(skip, state.Skip) and skip.reason == state.SKIP_LOCKED
    assert skip.notes == ()
    assert (lock_dir(vault) / config.LOCK_PID_FILE).read_text() == f"{live_pid}\n"
    assert not (vault / "state" / config.STATE_FILE).exists()


def test_a_lock_whose_owner_is_dead_is_removed_with_a_note(vault: Path, dead_pid: int) -> None:
    hold_lock(vault, dead_pid)
    run = start(vault)
    assert isinstance(run, state.Run)
    assert (
        f"state/self-maintain.lock: stale (its owner pid {dead_pid} is not running); removed"
        in (run.notes)
    )
    assert (lock_dir(vault) / config.LOCK_PID_FILE).read_text() == f"{ME}\n"
    finish(run)


def test_a_lock_older_than_ten_minutes_is_stale_even_if_its_owner_lives(
    vault: Path, live_pid: int
) -> None:
    hold_lock(vault, live_pid, age_ms=config.STALE_RUN_MS)
    run = start(vault)
    assert isinstance(run, state.Run)
    assert any("older than 10 minutes" in note for note in run.notes)
    finish(run)


def test_a_lock_without_a_readable_pid_is_respected_until_it_is_old(vault: Path) -> None:
    hold_lock(vault, None, age_ms=config.STALE_RUN_MS - 1)
    (lock_dir(vault) / config.LOCK_PID_FILE).write_text("not a pid")
    os.utime(lock_dir(vault), ((NOW_MS - config.STALE_RUN_MS + 1) / 1000,) * 2)
    assert isinstance(start(vault), state.Skip)
    os.utime(lock_dir(vault), ((NOW_MS - config.STALE_RUN_MS) / 1000,) * 2)
    finish(start(vault))


def test_an_empty_lock_directory_has_no_owner_and_is_taken(vault: Path) -> None:
    # our own locks always hold a pid; an empty one is a lock being removed, or a bare mkdir
    hold_lock(vault, None)
    finish(start(vault))


def test_the_lock_is_never_left_behind(vault: Path) -> None:
    finish(start(vault))
    assert listing(vault / "state") == [config.STATE_FILE]


def test_release_leaves_someone_elses_lock(vault: Path, live_pid: int) -> None:
    hold_lock(vault, live_pid)
    state.release(vault, ME)
    assert lock_dir(vault).exists()


def test_leftovers_of_killed_runs_are_swept(vault: Path, dead_pid: int) -> None:
    folder = vault / "state"
    (folder / f".{config.STATE_FILE}.abc.vk-tmp").write_text("{")  # only a run writes it
    old = time.time() - config.STALE_RUN_MS / 1000 - 60  # older than any run
    (folder / f".{config.QUEUE_FILE}.def.vk-tmp").write_text("{")
    os.utime(folder / f".{config.QUEUE_FILE}.def.vk-tmp", (old, old))
    private = folder / f".{config.LOCK_DIR}.{dead_pid}.tmp"
    private.mkdir()
    (private / config.LOCK_PID_FILE).write_text(str(dead_pid))
    finish(start(vault))
    assert listing(folder) == [config.STATE_FILE]


def test_an_apply_writing_meanwhile_keeps_its_temp_file(vault: Path) -> None:
    """An apply writes the review queue under the writer lock, not the scan's: a scan
    starting meanwhile leaves its fresh temp files alone."""
    folder = vault / "state"
    writing = folder / f".{config.QUEUE_FILE}.xyz.vk-tmp"
    writing.write_text("{")
    finish(start(vault))
    assert writing.exists()


# -- re-entry ---------------------------------------------------------------------------------


def test_row6_in_progress_with_a_live_pid_skips_even_when_forced(
    vault: Path, live_pid: int
) -> None:
    write(vault, state="in-progress", pid=live_pid, lastTriggered=NOW_MS - 9 * MINUTE)
    before = read(vault)
    for force in (False, True):
        skip = start(vault, force=force)
        assert isinstance(skip, state.Skip) and skip.reason == state.SKIP_IN_PROGRESS
    assert read(vault) == before
    assert not lock_dir(vault).exists()


def test_row7_in_progress_for_ten_minutes_resets_to_idle_and_runs(
    vault: Path, live_pid: int
) -> None:
    write(vault, state="in-progress", pid=live_pid, lastTriggered=NOW_MS - 10 * MINUTE)
    run = start(vault)
    assert isinstance(run, state.Run)
    assert any(f"run by pid {live_pid} started 600 s ago is stale" in n for n in run.notes)
    finish(run)
    assert read(vault)["state"] == "idle"


def test_in_progress_with_a_dead_pid_runs(vault: Path, dead_pid: int) -> None:
    write(vault, state="in-progress", pid=dead_pid, lastTriggered=NOW_MS - MINUTE)
    finish(start(vault))


def test_in_progress_with_our_own_pid_is_a_dead_earlier_run(vault: Path) -> None:
    write(vault, state="in-progress", pid=ME, lastTriggered=NOW_MS - MINUTE)
    finish(start(vault))


def test_a_run_completed_while_waiting_for_the_lock_is_not_repeated(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # another run finishes between our first look at the state file and our lock
    real = state._try_lock

    def late(v: str | os.PathLike[str], pid: int) -> bool:
        write(vault, lastCompleted=NOW_MS - 1)
        return real(v, pid)

    monkeypatch.setattr(state, "_try_lock", late)
    skip = start(vault)
    assert isinstance(skip, state.Skip) and skip.reason == state.SKIP_COOLDOWN
    assert not lock_dir(vault).exists()


def test_precheck_reads_only(vault: Path) -> None:
    write(vault, lastCompleted=NOW_MS - MINUTE)
    skip = state.precheck(vault, {}, NOW_MS, False)
    assert skip is not None and skip.reason == state.SKIP_COOLDOWN
    assert "60 s ago; 3540 s of cooldown left" in skip.detail
    assert state.precheck(vault, {}, NOW_MS, True) is None
    assert listing(vault / "state") == [config.STATE_FILE]


@pytest.mark.parametrize("bad_pid", [99999999999999999999, -1])
def test_a_pid_no_process_can_have_counts_as_dead(vault: Path, bad_pid: int) -> None:
    # (a lock whose pid file is no plain, short number is respected until it is old)
    write(vault, state="in-progress", pid=bad_pid, lastTriggered=NOW_MS - MINUTE)
    run = start(vault)
    assert isinstance(run, state.Run), run
    finish(run)
    assert read(vault)["state"] == "idle"


def test_a_lock_pid_file_of_thousands_of_digits_is_unreadable_not_a_crash(vault: Path) -> None:
    lock = lock_dir(vault)
    lock.mkdir(parents=True)
    (lock / config.LOCK_PID_FILE).write_text("9" * 5000)
    skip = start(vault)  # respected until old, like any lock without a readable pid
    assert isinstance(skip, state.Skip) and "held by pid None" in skip.detail


LOCK = f"{config.STATE_DIR}/{config.LOCK_DIR}"


def _scan(vault: Path) -> tuple[int, str, bool]:
    """(exit code, stderr, whether it completed) of one forced scan."""
    state = vault / config.STATE_DIR / config.STATE_FILE
    before = json.loads(state.read_text())["lastCompleted"] if state.is_file() else 0
    result = CliRunner().invoke(cli, ["--vault", str(vault), "scan", "--force"])
    after = json.loads(state.read_text())["lastCompleted"] if state.is_file() else 0
    return result.exit_code, result.stderr, after > before


def test_a_stale_regular_file_at_the_lock_is_removed(make_vault: MakeVault) -> None:
    vault = make_vault()
    lock = vault / LOCK
    lock.write_text("12345\n")
    old = time.time() - config.STALE_RUN_MS / 1000 - 60
    os.utime(lock, (old, old))
    code, err, reported = _scan(vault)
    assert (code, reported) == (0, True), err
    assert f"vaultkeeper: note: {LOCK}: stale (a file, not a lock folder); removed" in err
    assert not lock.exists()


def test_a_dangling_symlink_at_the_lock_is_removed_loudly(
    make_vault: MakeVault, tmp_path: Path
) -> None:
    vault = make_vault()
    lock = vault / LOCK
    lock.symlink_to(tmp_path / "nowhere")
    code, err, reported = _scan(vault)
    assert (code, reported) == (0, True), err
    assert f"{LOCK}: stale (a symlink, not a lock folder); removed" in err
    assert not os.path.lexists(lock)
    assert not (tmp_path / "nowhere").exists()


def test_a_lock_folder_dated_in_the_future_is_removed(make_vault: MakeVault) -> None:
    vault = make_vault()
    lock = vault / LOCK
    lock.mkdir()
    (lock / config.LOCK_PID_FILE).write_text(f"{os.getpid()}\n")  # a live pid, too
    ahead = time.time() + 365 * 86400
    os.utime(lock, (ahead, ahead))
    code, err, reported = _scan(vault)
    assert (code, reported) == (0, True), err
    assert f"{LOCK}: stale (its time is in the future); removed" in err


def test_a_stale_lock_that_cannot_be_removed_is_reported_every_run(make_vault: MakeVault) -> None:
    vault = make_vault()
    lock = vault / LOCK
    (lock / "a-folder-inside").mkdir(parents=True)  # unlink fails on it: not removable
    old = time.time() - config.STALE_RUN_MS / 1000 - 60
    os.utime(lock, (old, old))
    for _ in range(2):
        code, err, reported = _scan(vault)
        assert (code, reported) == (0, False)
        assert f"{LOCK}: stale (older than 10 minutes) but could not be removed" in err


def test_a_state_file_that_is_a_symlink_or_a_fifo_is_unreadable_not_followed(
    tmp_path: Path,
) -> None:
    # read_state followed a symlinked state/self-maintain.json: one to /dev/zero made
    # every command that reads it (report, status, the brief, even the throttled scan)
    # read until memory ran out; a FIFO would wait for ever. Now: unreadable, idle.
    from vaultkeeper import config
    from vaultkeeper.scan.statefile import read_state

    vault = tmp_path / "v"
    (vault / config.STATE_DIR).mkdir(parents=True)
    path = vault / config.STATE_DIR / config.STATE_FILE
    outside = tmp_path / "elsewhere.json"
    outside.write_text('{"state": "idle", "lastCompleted": 5}')
    path.symlink_to(outside)
    found = read_state(vault)
    assert found.note is not None and "unreadable" in found.note
    assert found.data["lastCompleted"] == 0
    path.unlink()
    os.mkfifo(path)
    found = read_state(vault)  # returns: a FIFO is never waited on
    assert found.note is not None and "unreadable" in found.note
