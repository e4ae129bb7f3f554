"""`vaultkeeper status [--json]`: every health signal on a healthy vault and a sick one."""

from __future__ import annotations

import datetime as dt
import json
import os
import pty
import pwd
import re
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import HOME_VARS, MakeVault, session_home
from vaultkeeper import clock, config
from vaultkeeper.apply.decision import Decision
from vaultkeeper.apply.journal import enqueue
from vaultkeeper.cli import cli
from vaultkeeper.index.build import build_index
from vaultkeeper.report.candidates import HELD_OUT, PROMOTE, Candidate, Report
from vaultkeeper.scan import last
from vaultkeeper.scan.statefile import default_state, write_state
from vaultkeeper.status.health import fallback_log

NOW = dt.datetime.now(dt.timezone.utc)
SIGNALS = [
    "promote_waiting",
    "prune_waiting",
    "held_out_waiting",
    "held_out_overdue",
    "waiting_for_person",
    "lint_errors",
    "broken_links",
    "orphans",
    "last_scan_age",
    "journal_bytes",
    "uses_bytes",
    "index_budget",
    "merge_leftovers",
]


def scanned(vault: Path, ago: dt.timedelta) -> None:
    """A state file whose last completed scan was ``ago`` before now."""
    millis = int((NOW - ago).timestamp() * 1000)
    write_state(vault, {**default_state(), "lastCompleted": millis, "lastTriggered": millis})


# the reports reported() gives status in place of the one the vault's files derive: the
# signals are these tests' subject (tests/test_scan_last.py derives reports from files)
REPORTS: dict[Path, Report] = {}


def reported(vault: Path, promote: int = 0, held_out: tuple[str, ...] = ()) -> None:
    """A last report with ``promote`` candidates and held-out ones due on those dates."""
    made = (NOW - dt.timedelta(hours=1)).replace(microsecond=0)
    report = Report(
        vault=str(vault),
        generated_at=made,
        promote=tuple(
            Candidate(PROMOTE, f"p{i}", config.REGISTRY_FILE, i + 1, "0" * 64, count=2)
            for i in range(promote)
        ),
        prune=(),
        held_out=tuple(
            Candidate(HELD_OUT, f"h{i}", f"projects/a/memory/h{i}.md", 6, "0" * 64, holdout_until=d)
            for i, d in enumerate(held_out)
        ),
        problems=(),
    )
    REPORTS[vault] = report


@pytest.fixture(autouse=True)
def _clock_at_now(monkeypatch: pytest.MonkeyPatch) -> None:
    """Commands run in this process see NOW, the instant the fixtures are dated from:
    on a busy machine minutes may pass between import and the test."""
    monkeypatch.setattr(clock, "real_now", lambda: NOW)
    derive = last.derived
    fixed = lambda v: last.Last(REPORTS[v], None, None) if v in REPORTS else derive(v)  # noqa: E731
    monkeypatch.setattr(last, "derived", fixed)


def status(runner: CliRunner, vault: Path) -> tuple[int, dict[str, Any]]:
    result = runner.invoke(cli, ["--vault", str(vault), "status", "--json"])
    assert result.stderr == ""  # nothing but the output: no progress bar off a terminal
    data = json.loads(result.stdout)
    return result.exit_code, data


def by_name(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["name"]: s for s in data["signals"]}


@pytest.fixture
def healthy(make_vault: MakeVault) -> Path:
    vault = make_vault()
    build_index(vault)  # every entry linked from _index.md
    reported(vault, promote=3, held_out=(str(NOW.date()),))
    scanned(vault, dt.timedelta(hours=5))
    (vault / config.STATE_DIR / config.JOURNAL_FILE).write_text('{"action": "skip"}\n' * 3)
    linted(vault)
    return vault


def linted(vault: Path) -> None:
    """A whole-vault lint, whose figures status shows (kept in state/vaultkeeper.db)."""
    CliRunner().invoke(cli, ["--vault", str(vault), "lint"])


def test_a_healthy_vault(runner: CliRunner, healthy: Path) -> None:
    code, data = status(runner, healthy)
    assert code == 0 and data["verdict"] == "ok" and data["vault"] == str(healthy)
    assert [s["name"] for s in data["signals"]] == SIGNALS
    signals = by_name(data)
    assert {n: s["verdict"] for n, s in signals.items()} == dict.fromkeys(SIGNALS, "ok")
    assert signals["promote_waiting"]["figure"] == 3
    assert signals["promote_waiting"]["bound"] == f"< {config.STATUS_MAX_WAITING}"
    assert signals["held_out_waiting"]["figure"] == 1
    assert signals["held_out_overdue"]["figure"] == 0
    assert signals["last_scan_age"]["figure"] == 5.0 and signals["last_scan_age"]["shown"] == "5 h"
    assert signals["journal_bytes"]["figure"] == 3 * len('{"action": "skip"}\n')
    assert signals["journal_bytes"]["shown"].endswith(", 3 records")
    index = (healthy / config.INDEX_FILE).read_text()
    lines, size = index.count("\n"), len(index.encode())
    assert signals["index_budget"]["shown"] == f"{lines} lines, {size} bytes"
    for s in data["signals"]:
        assert set(s) == {"name", "label", "figure", "shown", "bound", "verdict", "detail"}


def test_a_sick_vault(runner: CliRunner, healthy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = healthy
    ten_days_ago = str(NOW.date() - dt.timedelta(days=10))
    reported(vault, promote=12, held_out=(ten_days_ago, str(NOW.date())))
    enqueue(vault, Decision("prune", "bar"), "bar", "no terminal", None, NOW)
    (vault / "projects" / "a").mkdir(parents=True)
    (vault / "projects" / "a" / "stray.md").write_text(
        "---\nname: stray\ndescription: unlinked\ntype: memory\n---\n\nsee [[nowhere]]\n"
    )
    scanned(vault, dt.timedelta(days=3))
    monkeypatch.setattr(config, "STATUS_JOURNAL_MAX_BYTES", 10)
    monkeypatch.setattr(config, "USES_WARN_BYTES", 10)  # the usage log grows
    uses = vault / config.STATE_DIR / config.USES_LOG_FILE
    uses.write_text('{"session": "s"}\n' * 2)
    index = vault / config.INDEX_FILE
    index.write_text(index.read_text() + "".join(f"- line {i}\n" for i in range(250)))
    linted(vault)  # status shows what the last lint found

    code, data = status(runner, vault)
    assert code == 1 and data["verdict"] == "fail"
    signals = by_name(data)
    verdicts = {n: (s["figure"], s["verdict"]) for n, s in signals.items()}
    assert verdicts == {
        "promote_waiting": (12, "warn"),
        "prune_waiting": (0, "ok"),
        "held_out_waiting": (2, "ok"),
        "held_out_overdue": (1, "fail"),
        "waiting_for_person": (1, "warn"),
        "lint_errors": (2, "fail"),  # as `lint` counts: the missing label and the broken link
        "broken_links": (1, "fail"),
        "orphans": (1, "warn"),
        "last_scan_age": (72.0, "fail"),
        "journal_bytes": (3 * len('{"action": "skip"}\n'), "warn"),
        "uses_bytes": (2 * len('{"session": "s"}\n'), "warn"),
        "index_budget": (index.read_text().count("\n"), "fail"),
        "merge_leftovers": (0, "ok"),
    }
    assert signals["held_out_overdue"]["detail"] == "projects/a/memory/h0.md"
    assert "vaultkeeper apply promote" in signals["promote_waiting"]["detail"]
    assert "1 deletion;" in signals["waiting_for_person"]["detail"]
    assert "vaultkeeper review" in signals["waiting_for_person"]["detail"]
    assert "hook probably never fires" in signals["last_scan_age"]["detail"]
    assert signals["last_scan_age"]["shown"] == "3 days"


def test_a_vault_never_scanned(runner: CliRunner, make_vault: MakeVault) -> None:
    code, data = status(runner, make_vault())
    signals = by_name(data)
    assert code == 0 and data["verdict"] == "not yet"  # day one is no failure
    assert signals["last_scan_age"]["figure"] is None
    assert signals["last_scan_age"]["shown"] == "never"
    assert "run `vaultkeeper scan`" in signals["last_scan_age"]["detail"]
    for name in ("promote_waiting", "prune_waiting", "held_out_waiting", "held_out_overdue"):
        assert signals[name]["figure"] is None and signals[name]["verdict"] == "not yet"
    assert "no report yet" in signals["promote_waiting"]["detail"]


def test_text_output(runner: CliRunner, healthy: Path) -> None:
    result = runner.invoke(cli, ["--vault", str(healthy), "status"])
    assert result.exit_code == 0 and result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[0] == f"vault {healthy} at {lines[0].split(' at ')[1]}"
    assert lines[1].split() == ["signal", "figure", "healthy"]
    assert re.match(
        r"ok    promote candidates waiting +3 +< 10 +report 1 h old; act with: ", lines[2]
    )
    assert len(lines) == 3 + len(SIGNALS) and lines[-1] == "overall: ok"


def test_no_vault_is_exit_2(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(cli, ["--vault", str(tmp_path / "none"), "status"])
    assert result.exit_code == 2 and "not a directory" in result.stderr


def run_on_a_terminal(vault: Path, *args: str, command: str = "status") -> tuple[str, str]:
    """Run `vaultkeeper COMMAND` with stderr on a pseudo-terminal; (stdout, terminal text)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "vaultkeeper", "--vault", str(vault), command, *args],
        stdout=subprocess.PIPE,
        stderr=slave,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "COLUMNS": "100"},
    )
    os.close(slave)
    seen = b""
    while True:
        ready, _, _ = select.select([master], [], [], 30)
        if not ready:
            break
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the terminal closed
            break
        if not chunk:
            break
        seen += chunk
    out, _ = proc.communicate(timeout=30)
    os.close(master)
    return out.decode(), seen.decode(errors="replace")


def test_progress_bar_only_on_a_terminal_and_never_with_json(healthy: Path) -> None:
    out, terminal = run_on_a_terminal(healthy)
    assert out.startswith(f"vault {healthy}") and "checking" in terminal
    out, terminal = run_on_a_terminal(healthy, "--json")
    assert json.loads(out)["verdict"] == "ok" and terminal == ""


def test_a_fifo_index_is_a_failed_signal_not_a_hang(runner: CliRunner, healthy: Path) -> None:
    (healthy / config.INDEX_FILE).unlink()
    os.mkfifo(healthy / config.INDEX_FILE)
    code, data = status(runner, healthy)
    assert code == 1
    index = by_name(data)["index_budget"]
    assert (index["verdict"], index["shown"]) == ("fail", "not a regular file")


def test_a_foreign_vault_without_an_index(runner: CliRunner, make_vault: MakeVault) -> None:
    vault = make_vault(
        {".obsidian/app.json": "{}", "a.md": "---\nx: 1\n---\n[[not yet]]\n"}, init=False
    )
    _, data = status(runner, vault)
    signals = by_name(data)
    orphans = signals["orphans"]
    assert (orphans["figure"], orphans["shown"]) == (None, "skipped: no _index.md")
    assert orphans["verdict"] == "warn" and "vaultkeeper index" in orphans["detail"]
    assert (signals["index_budget"]["shown"], signals["index_budget"]["verdict"]) == (
        "missing",
        "warn",  # one rule for a missing index, .obsidian/ or not (issue 36)
    )
    # a link to a note not written yet is a warning on a vault vaultkeeper did not create
    assert (signals["broken_links"]["figure"], signals["broken_links"]["verdict"]) == (1, "warn")
    text = runner.invoke(cli, ["--vault", str(vault), "status"]).stdout
    assert re.search(r"orphans \(not reachable from _index\.md\).*skipped: no _index\.md", text)


def test_a_vault_fresh_from_init_is_not_yet_not_a_failure(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from vaultkeeper.cli import cli
    from vaultkeeper.entries.init import init_vault

    init_vault(tmp_path / "v")
    result = CliRunner().invoke(cli, ["--vault", str(tmp_path / "v"), "status"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == "overall: not yet"
    scan_row = next(line for line in result.stdout.splitlines() if "last completed scan" in line)
    assert scan_row.startswith("not yet ") and "run `vaultkeeper scan`" in scan_row


def test_an_obsidian_vault_without_an_index_does_not_fail_its_load_budget(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from vaultkeeper.cli import cli

    (tmp_path / "o" / ".obsidian").mkdir(parents=True)
    (tmp_path / "o" / "a.md").write_text("# A\n")
    result = CliRunner().invoke(cli, ["--vault", str(tmp_path / "o"), "status", "--json"])
    budget = next(s for s in json.loads(result.stdout)["signals"] if s["name"] == "index_budget")
    assert budget["verdict"] == "warn" and result.exit_code == 0


def test_home_and_xdg_folders_are_the_sessions_temporary_ones() -> None:
    real = Path(pwd.getpwuid(os.getuid()).pw_dir).resolve()
    home = session_home()
    assert home != real and real not in home.parents
    for name in HOME_VARS:
        assert Path(os.environ[name]).is_relative_to(home), name
    # the hook log `hooks status` reads when no vault is known
    assert fallback_log(os.environ).is_relative_to(home)


def test_a_child_process_sees_the_temporary_home_too() -> None:
    code = "import os, sys; print(os.path.expanduser('~')); print(os.environ['XDG_STATE_HOME'])"
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    expanded, state = run.stdout.splitlines()
    assert Path(expanded).resolve() == session_home()
    assert Path(state).is_relative_to(session_home())
