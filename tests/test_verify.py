"""``vaultkeeper verify``: the spec's 12 rows, and a vault that stays untouched."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import MakeVault, snapshot
from vaultkeeper import config, verify
from vaultkeeper.cli import cli
from vaultkeeper.verify import FAIL, PASS, SKIP, verify_vault
from vaultkeeper.verify.common import Context
from vaultkeeper.verify.setup_rows import trigger_registered

NOW = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.timezone.utc)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """No real home (no ~/.claude, no ~/.codex) and no crontab on PATH."""
    home = tmp_path / "home"
    home.mkdir()
    empty = tmp_path / "bin"
    empty.mkdir()
    keep = {
        k: v for k, v in os.environ.items() if not k.startswith(("SELF_MAINTAIN", "VAULTKEEPER"))
    }
    return {**keep, "HOME": str(home), "PATH": str(empty)}


def statuses(vault: Path, env: dict[str, str]) -> dict[int, str]:
    return {c.number: c.status for c in verify_vault(vault, now=NOW, env=env).checks}


def test_fresh_init_vault_passes_every_row_but_9_and_is_not_changed(
    make_vault: MakeVault, env: dict[str, str]
) -> None:
    vault = make_vault()
    before = snapshot(vault, skip_state=False)
    result = verify_vault(vault, now=NOW, env=env)
    assert [c.number for c in result.checks] == list(range(1, 15))
    assert result.checks[12].name == "supersession"
    assert result.checks[13].name == "merge"
    failed = {c.number: c.detail for c in result.checks if c.status != PASS}
    assert list(failed) == [9], failed
    assert "no session-end hook or cron line" in failed[9]
    assert "no scan completed yet" in failed[9]
    assert result.failed
    assert snapshot(vault, skip_state=False) == before


def test_cli_rows_and_exit_code(
    make_vault: MakeVault, env: dict[str, str], runner: CliRunner
) -> None:
    vault = make_vault()
    result = runner.invoke(cli, ["--vault", str(vault), "verify"], env=env)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert len(lines) == 14
    assert lines[0].startswith(" 1  store present       PASS  _index.md, projects/")
    assert lines[8].startswith(" 9  trigger registered  FAIL  ")
    assert lines[11].startswith("12  format (SFS)        PASS  ")
    assert lines[12].startswith("13  supersession        PASS  supersede links both sides")
    assert lines[13].startswith("14  merge               PASS  duplicate reported; merge waits")
    data = json.loads(
        runner.invoke(cli, ["--vault", str(vault), "verify", "--json"], env=env).stdout
    )
    assert [c["status"] for c in data["checks"]].count(FAIL) == 1
    assert set(data["checks"][0]) == {"number", "name", "status", "detail"}


def test_row_9_passes_with_a_session_end_hook_for_this_vault(
    make_vault: MakeVault, env: dict[str, str], tmp_path: Path
) -> None:
    from vaultkeeper.hosts.hooks import default_path, install
    from vaultkeeper.scan.statefile import default_state, write_state

    vault = make_vault()
    other = make_vault()
    settings = default_path("claude-code", env)
    settings.parent.mkdir(parents=True)
    install("claude-code", settings, other, None)
    ctx = Context(vault, NOW, env, tmp_path)
    assert trigger_registered(ctx)[0] == FAIL  # a hook for another vault does not count
    install("claude-code", settings, vault, None)
    completed = int(NOW.timestamp() * 1000)
    write_state(vault, {**default_state(), "lastCompleted": completed})
    status, detail = trigger_registered(ctx)
    assert status == PASS
    assert "claude-code SessionEnd hook" in detail
    assert "last scan completed 2026-11-30 12:00 UTC" in detail


def test_rows_that_read_the_vault_fail_on_a_bad_vault(
    make_vault: MakeVault, env: dict[str, str]
) -> None:
    vault = make_vault(
        {
            "notes/a.md": "---\nname: a\ndescription: d\ntype: memory\n---\n"
            "x \u2014 y\n```\nz\n```\n",
            # laid out as vaultkeeper's (the spec): lint runs VK101 and VK2xx here
            config.SPEC_FILE: "# The vault spec\n",
        },
        init=False,
    )
    result = {c.number: c for c in verify_vault(vault, now=NOW, env=env).checks}
    assert result[1].status == FAIL
    assert result[1].detail.startswith("missing: _index.md, projects/, patterns/")
    assert (
        result[2].status == FAIL and "VK201" in result[2].detail and "'label'" in result[2].detail
    )
    assert (
        result[12].status == FAIL
        and "VK101" in result[12].detail
        and "+1 more" in result[12].detail
    )
    assert result[3].status == FAIL and "not a vault" in result[3].detail  # the real scanner
    # the rows that run on fixtures do not depend on the user's vault
    assert all(result[n].status == PASS for n in (4, 5, 6, 7, 8, 10, 11))


def test_throttle_row_fails_when_the_cooldown_is_switched_off(
    make_vault: MakeVault, env: dict[str, str], tmp_path: Path
) -> None:
    from vaultkeeper.verify.scanner_rows import throttle

    ctx = Context(make_vault(), NOW, {**env, config.ENV_COOLDOWN: "0"}, tmp_path)
    status, detail = throttle(ctx)
    assert status == FAIL and "no cooldown" in detail
    assert throttle(Context(ctx.vault, NOW, env, tmp_path / "again"))[0] == PASS


def test_a_crashing_row_is_a_fail_and_a_missing_part_a_skip(
    make_vault: MakeVault, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(ctx: Context) -> tuple[str, str]:
        raise RuntimeError("boom")

    def missing(ctx: Context) -> tuple[str, str]:
        raise ImportError("No module named 'vaultkeeper.scan.classify'")

    monkeypatch.setattr(verify, "ROWS", (("store present", boom), ("frontmatter valid", missing)))
    checks = verify_vault(make_vault(), now=NOW, env=env).checks
    assert (checks[0].status, checks[0].detail) == (FAIL, "RuntimeError: boom")
    assert checks[1].status == SKIP and "vaultkeeper.scan.classify" in checks[1].detail


def test_a_fifo_named_md_is_a_finding_not_a_hang_or_a_false_fail(
    make_vault: MakeVault, env: dict[str, str]
) -> None:
    vault = make_vault()
    os.mkfifo(vault / "projects" / "pipe.md")
    checks = {c.number: c for c in verify_vault(vault, now=NOW, env=env).checks}
    assert checks[3].status == PASS, checks[3].detail  # was SpecialFileError: a named pipe
    assert checks[2].status == FAIL and "VK001" in checks[2].detail  # lint says what it is


def test_atomic_write_row_waits_for_the_first_write_not_a_fixed_time(
    make_vault: MakeVault, env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # On a busy machine the writer may take longer than any fixed delay to
    # finish its first write. A writer held back for a second stands in for that.
    from vaultkeeper.verify import scanner_rows as rows

    slow = rows._WRITER.replace(
        'print("ready", flush=True)', 'print("ready", flush=True)\nimport time\ntime.sleep(1)'
    )
    assert slow != rows._WRITER
    monkeypatch.setattr(rows, "_WRITER", slow)
    status, detail = rows.atomic_write(Context(make_vault(), NOW, env, tmp_path))()
    assert status == PASS, detail
    assert detail.startswith("killed 3 times while rewriting state/")


def test_supersession_row_fails_when_the_undo_is_not_exact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultkeeper.apply import supersede
    from vaultkeeper.verify.applier_rows import supersession

    ctx = Context(tmp_path, NOW, {}, tmp_path / "row")
    ctx.tmp.mkdir()
    assert supersession(ctx)[0] == PASS
    monkeypatch.setattr(supersede, "_restored", lambda text, record, side: None)
    again = Context(tmp_path, NOW, {}, tmp_path / "row2")
    again.tmp.mkdir()
    assert supersession(again) == (FAIL, "reactivate did not restore both files byte for byte")


def test_a_terminal_sees_which_row_runs_and_json_sees_no_bar(
    make_vault: MakeVault, env: dict[str, str]
) -> None:
    from tests.test_status_health import run_on_a_terminal

    vault = make_vault()
    heard: list[str] = []
    verify_vault(vault, now=dt.datetime.now(dt.timezone.utc), env=env, progress=heard.append)
    assert heard == [name for name, _ in verify.ROWS]
    out, terminal = run_on_a_terminal(vault, command="verify")
    assert out.splitlines()[0].startswith(" 1  store present") and "verifying" in terminal
    out, terminal = run_on_a_terminal(vault, "--json", command="verify")
    assert len(json.loads(out)["checks"]) == len(verify.ROWS) and terminal == ""


def test_verify_runs_the_format_rows_by_lints_rules_for_the_vault(
    tmp_path: Path, env: dict[str, str], make_vault: MakeVault
) -> None:
    """Someone's Obsidian vault with curly apostrophes: `lint` leaves VK101 off there, so
    row 12 does too (it failed before); a vaultkeeper vault still fails on them."""
    theirs = tmp_path / "theirs"
    (theirs / ".obsidian").mkdir(parents=True)
    (theirs / "note.md").write_text("It\u2019s a note with a curly apostrophe.\n", "utf-8")
    linted = CliRunner().invoke(cli, ["--vault", str(theirs), "lint"])
    assert linted.exit_code == 0 and "VK101" not in linted.stdout
    rows = {c.number: c for c in verify_vault(theirs, now=NOW, env=env).checks}
    assert rows[12].status == PASS, rows[12].detail
    assert "VK101/VK102 not run, as by `vaultkeeper lint` on this vault" in rows[12].detail
    ours = make_vault({"projects/api/research/n.md": "It\u2019s ours.\n"})
    rows = {c.number: c for c in verify_vault(ours, now=NOW, env=env).checks}
    assert rows[12].status == FAIL and "VK101" in rows[12].detail


def test_the_rows_that_start_a_python_start_it_before_row_1_and_leave_none(
    make_vault: MakeVault, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows 3 and 8 spend most of their time waiting for a new Python to start: that
    start overlaps rows 1-7, and every child is gone when verify returns."""
    import subprocess

    events: list[str] = []
    children: list[subprocess.Popen[bytes]] = []
    real = subprocess.Popen

    class Seen(real):  # type: ignore[misc, valid-type]
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            events.append("child")
            children.append(self)

    monkeypatch.setattr(subprocess, "Popen", Seen)  # the rows' children too
    checks = verify_vault(make_vault(), now=NOW, env=env, progress=events.append).checks
    assert {c.number: c.status for c in checks}[3] == PASS
    assert {c.number: c.status for c in checks}[8] == PASS
    first_row = events.index("store present")
    assert events[:first_row].count("child") == 4  # the scan's, and the three writers
    assert all(child.poll() is not None for child in children)
