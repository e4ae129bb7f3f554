"""One bad file never stops the scan; the lock never blocks for ever."""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from pathlib import Path

from click.testing import CliRunner

from tests.conftest import MakeVault
from vaultkeeper import config
from vaultkeeper.cli import cli
from vaultkeeper.scan import classify as scan

NOW = dt.datetime(2026, 9, 1, 12, 0, tzinfo=dt.timezone.utc)
HUGE = "9" * 4301


def memory(name: str, status: str, until: str) -> str:
    return (
        f"---\nname: {name}\ndescription: a lesson\ntype: memory\nstatus: {status}\n"
        f"label: inferred\nholdout_until: {until}\n---\nBody.\n"
    )


def huge_vault(make_vault: MakeVault) -> Path:
    return make_vault(
        {
            "projects/p/memory/status.md": memory("status", HUGE, '"2026-01-01"'),
            "projects/p/memory/until.md": memory("until", "held_out", HUGE),
            "projects/p/memory/due.md": memory("due", "held_out", '"2026-08-01"'),
        }
    )


def test_a_huge_number_is_a_problem_line_and_the_scan_goes_on(make_vault: MakeVault) -> None:
    vault = huge_vault(make_vault)
    report = scan.classify(vault, NOW)
    assert [c.path for c in report.held_out] == ["projects/p/memory/due.md"]
    reasons = {(p.path, p.line): p.reason for p in report.problems}
    for path, line in (("projects/p/memory/status.md", 5), ("projects/p/memory/until.md", 7)):
        assert reasons[(path, line)] == (
            "bad YAML frontmatter: a number too long to read (thousands of digits)"
        )


def test_the_scan_command_exits_0_with_the_problem(make_vault: MakeVault) -> None:
    vault = huge_vault(make_vault)
    env = {"VAULTKEEPER_TODAY": "2026-09-01"}
    result = CliRunner().invoke(cli, ["--vault", str(vault), "scan", "--force"], env=env)
    assert result.exit_code == 0, result.output
    assert "held-out due 1" in result.stdout
    assert "projects/p/memory/until.md:7: bad YAML frontmatter: a number too long" in (
        result.stdout + result.stderr
    )
    report = json.loads((vault / "state" / config.LAST_REPORT_FILE).read_text())
    assert len(report["problems"]) == 2


LOCK = f"{config.STATE_DIR}/{config.LOCK_DIR}"


def _scan(vault: Path) -> tuple[int, str, bool]:
    """(exit code, stderr, whether a report was written) of one forced scan."""
    report = vault / config.STATE_DIR / config.LAST_REPORT_FILE
    report.unlink(missing_ok=True)
    result = CliRunner().invoke(cli, ["--vault", str(vault), "scan", "--force"])
    return result.exit_code, result.stderr, report.is_file()


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
