"""`hooks install|uninstall|status` for Claude Code and Codex settings files, and cron."""

from __future__ import annotations

import json
import os
import re
import shlex
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import MakeVault, run_bounded
from vaultkeeper import config
from vaultkeeper.cli import cli
from vaultkeeper.entries.init import init_vault
from vaultkeeper.hosts.cron import cron_line
from vaultkeeper.hosts.hooks import is_ours, script_path

# Another tool's hooks, including a SessionEnd hook whose script has our script's name.
OTHER_TOOL_END = {
    "type": "command",
    "command": "/opt/other/hooks/session-end.sh --flush",
    "timeout": 5,
}
OTHER_TOOL_START = {"type": "command", "command": "other-tool brief"}
SETTINGS: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(ls:*)"], "deny": []},
    "env": {"FOO": "bar"},
    "hooks": {
        "SessionEnd": [{"matcher": "", "hooks": [OTHER_TOOL_END]}],
        "SessionStart": [{"matcher": "startup", "hooks": [OTHER_TOOL_START]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}],
    },
    "statusLine": {"type": "command", "command": "status.sh"},
}
ORIGINAL = json.dumps(SETTINGS, indent=2) + "\n"
HOSTS = [
    ("claude-code", "--settings", config.CLAUDE_SESSION_END_TIMEOUT),
    ("codex", "--hooks", config.CODEX_SESSION_END_TIMEOUT),
]


def run(runner: CliRunner, *args: str | Path, env: dict[str, str] | None = None) -> Any:
    return runner.invoke(cli, [str(a) for a in args], env=env)


def ours(data: dict[str, Any], event: str) -> list[dict[str, Any]]:
    groups = data.get("hooks", {}).get(event, [])
    return [h for g in groups for h in g["hooks"] if is_ours(h, event)]


@pytest.mark.parametrize(("host", "flag", "end_timeout"), HOSTS)
def test_install_merges_and_keeps_everything_else(
    runner: CliRunner, make_vault: MakeVault, tmp_path: Path, host: str, flag: str, end_timeout: int
) -> None:
    vault = make_vault()
    settings = tmp_path / "settings.json"
    settings.write_text(ORIGINAL)
    result = run(runner, "--vault", vault, "hooks", "install", host, flag, settings)
    assert result.exit_code == 0, result.output
    assert "added   SessionEnd" in result.stdout and "added   SessionStart" in result.stdout
    # Codex: hooks are on unless [features] hooks = false; a new hook waits for trust
    assert ("open /hooks and press t" in result.stdout) == (host == "codex")
    assert "codex_hooks = true" not in result.stdout
    data = json.loads(settings.read_text())
    # every other key and every other tool's hook, as it was
    for key in ("model", "permissions", "env", "statusLine"):
        assert data[key] == SETTINGS[key]
    assert data["hooks"]["PreToolUse"] == SETTINGS["hooks"]["PreToolUse"]
    assert data["hooks"]["SessionEnd"][0] == {"matcher": "", "hooks": [OTHER_TOOL_END]}
    assert data["hooks"]["SessionStart"][0] == {"matcher": "startup", "hooks": [OTHER_TOOL_START]}
    # ours: absolute script, absolute vault, absolute program; a timeout inside the budget
    (end,) = ours(data, "SessionEnd")
    (start,) = ours(data, "SessionStart")
    assert end["type"] == start["type"] == "command"
    assert end["timeout"] == end_timeout < (3 if host == "codex" else 1.5)
    assert start["timeout"] == config.SESSION_START_TIMEOUT
    for handler, event in ((end, "SessionEnd"), (start, "SessionStart")):
        script, vault_arg, program = shlex.split(handler["command"])
        assert script == str(script_path(event)) and Path(script).is_absolute()
        assert os.access(script, os.X_OK)
        assert vault_arg == str(vault.resolve())
        assert Path(program).is_absolute() and os.access(program, os.X_OK)
    # the previous file is kept
    backup = settings.with_name(settings.name + config.HOOK_BACKUP_SUFFIX)
    assert backup.read_text() == ORIGINAL


@pytest.mark.parametrize(("host", "flag", "end_timeout"), HOSTS)
def test_round_trip_twice_restores_the_file(
    runner: CliRunner, make_vault: MakeVault, tmp_path: Path, host: str, flag: str, end_timeout: int
) -> None:
    vault = make_vault()
    settings = tmp_path / "settings.json"
    settings.write_text(ORIGINAL)
    for _ in range(2):
        assert (
            run(runner, "--vault", vault, "hooks", "install", host, flag, settings).exit_code == 0
        )
        installed = settings.read_bytes()
        again = run(runner, "--vault", vault, "hooks", "install", host, flag, settings)
        assert again.exit_code == 0 and "(unchanged)" in again.stdout
        assert settings.read_bytes() == installed  # a second install changes nothing
        assert run(runner, "hooks", "uninstall", host, flag, settings).exit_code == 0
        assert settings.read_text() == ORIGINAL  # byte for byte
        none = run(runner, "hooks", "uninstall", host, flag, settings)
        assert none.exit_code == 0 and "(unchanged)" in none.stdout
        assert settings.read_text() == ORIGINAL


def test_install_into_a_missing_file_and_back(
    runner: CliRunner, make_vault: MakeVault, tmp_path: Path
) -> None:
    vault = make_vault()
    settings = tmp_path / "new" / "settings.json"
    assert (
        run(
            runner, "--vault", vault, "hooks", "install", "claude-code", "--settings", settings
        ).exit_code
        == 0
    )
    data = json.loads(settings.read_text())
    assert set(data) == {"hooks"} and set(data["hooks"]) == {"SessionEnd", "SessionStart"}
    assert not settings.with_name(settings.name + config.HOOK_BACKUP_SUFFIX).exists()
    assert run(runner, "hooks", "uninstall", "claude-code", "--settings", settings).exit_code == 0
    assert not (tmp_path / "new").exists()  # install made the folder and the file: both gone


def test_uninstall_removes_only_ours_from_a_shared_group(
    runner: CliRunner, make_vault: MakeVault, tmp_path: Path
) -> None:
    """A person may have moved our handler into another tool's matcher group."""
    vault = make_vault()
    settings = tmp_path / "settings.json"
    run(runner, "--vault", vault, "hooks", "install", "claude-code", "--settings", settings)
    data = json.loads(settings.read_text())
    (mine,) = ours(data, "SessionEnd")
    data["hooks"]["SessionEnd"] = [{"matcher": "", "hooks": [OTHER_TOOL_END, mine]}]
    settings.write_text(json.dumps(data, indent=4) + "\n")
    result = run(runner, "hooks", "uninstall", "claude-code", "--settings", settings)
    assert result.exit_code == 0
    after = json.loads(settings.read_text())
    assert after["hooks"] == {"SessionEnd": [{"matcher": "", "hooks": [OTHER_TOOL_END]}]}
    assert settings.read_text().startswith('{\n    "hooks"')  # the file's own indent kept


def test_install_for_another_vault_updates_in_place(
    runner: CliRunner, make_vault: MakeVault, tmp_path: Path
) -> None:
    first, second = make_vault(), make_vault()
    settings = tmp_path / "settings.json"
    settings.write_text(ORIGINAL)
    run(runner, "--vault", first, "hooks", "install", "claude-code", "--settings", settings)
    result = run(
        runner, "--vault", second, "hooks", "install", "claude-code", "--settings", settings
    )
    assert result.exit_code == 0 and "updated SessionEnd" in result.stdout
    data = json.loads(settings.read_text())
    (end,) = ours(data, "SessionEnd")
    assert shlex.split(end["command"])[1] == str(second.resolve())
    assert data["hooks"]["SessionEnd"][0]["hooks"] == [OTHER_TOOL_END]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{\n  "model": "opus",\n  "hooks": {\n', "settings.json:4:1: not valid JSON"),
        ("[1, 2]\n", "holds a JSON list, not an object"),
        ('{"hooks": []}\n', '"hooks" is not an object'),
        ('{"hooks": {"SessionEnd": {"hooks": []}}}\n', '"hooks.SessionEnd" is not a list'),
    ],
)
def test_bad_settings_are_refused_and_nothing_is_written(
    runner: CliRunner, make_vault: MakeVault, tmp_path: Path, content: str, message: str
) -> None:
    vault = make_vault()
    settings = tmp_path / "settings.json"
    settings.write_text(content)
    for args in (("--vault", vault, "hooks", "install"), ("hooks", "uninstall")):
        result = run(runner, *args, "claude-code", "--settings", settings)
        assert result.exit_code == 1
        assert message in result.stderr and "nothing written" in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.output
        assert settings.read_text() == content
        assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json", vault.name]


def test_a_symlinked_settings_file_stays_a_link(
    runner: CliRunner, make_vault: MakeVault, tmp_path: Path
) -> None:
    vault = make_vault()
    real = tmp_path / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_text(ORIGINAL)
    link = tmp_path / "settings.json"
    link.symlink_to(real)
    assert (
        run(
            runner, "--vault", vault, "hooks", "install", "claude-code", "--settings", link
        ).exit_code
        == 0
    )
    assert link.is_symlink()
    assert len(ours(json.loads(real.read_text()), "SessionEnd")) == 1


def test_whose_hook_is_whose(tmp_path: Path) -> None:
    moved = tmp_path / "old-checkout" / "hooks" / "session-end.sh"
    moved.parent.mkdir(parents=True)
    moved.write_text(script_path("SessionEnd").read_text())
    foreign = tmp_path / "other" / "session-end.sh"
    foreign.parent.mkdir()
    foreign.write_text("#!/bin/sh\necho flush\n")
    gone_wheel = "/gone/site-packages/vaultkeeper/_data/hooks/session-end.sh /v"

    def handler(command: str) -> dict[str, str]:
        return {"type": "command", "command": command}

    assert is_ours(handler(f"{shlex.quote(str(script_path('SessionEnd')))} /v"), "SessionEnd")
    assert is_ours(handler(f"{moved} /v"), "SessionEnd")  # carries our marker line
    assert is_ours(handler(gone_wheel), "SessionEnd")
    assert not is_ours(handler(f"{foreign} /v"), "SessionEnd")
    assert not is_ours(handler("/home/u/vaultkeeper-notes/session-end.sh"), "SessionEnd")
    assert not is_ours(handler(f"{moved} /v"), "SessionStart")  # wrong event
    assert not is_ours(handler("'unbalanced"), "SessionEnd")
    assert not is_ours({"type": "prompt", "prompt": "x"}, "SessionEnd")


def test_a_hook_script_that_is_a_fifo_or_a_device_is_never_read(tmp_path: Path) -> None:
    """A cloned repository's .claude/settings.json may name a "script" that is a FIFO or a
    link to /dev/zero: whose hook it is gets decided without waiting on it or reading it
    whole (``hooks status`` in that folder hung, or filled the memory)."""
    repo = tmp_path / "repo"
    (repo / ".claude").mkdir(parents=True)
    (repo / "fifo").mkdir()
    os.mkfifo(repo / "fifo" / "session-end.sh")
    (repo / "zero").mkdir()
    (repo / "zero" / "session-end.sh").symlink_to("/dev/zero")
    groups = [
        {"hooks": [{"type": "command", "command": f"./{where}/session-end.sh /v"}]}
        for where in ("fifo", "zero")
    ]
    settings = {"hooks": {"SessionEnd": groups}}
    (repo / ".claude" / "settings.json").write_text(json.dumps(settings))

    done = run_bounded(
        ["hooks", "status", "claude-code"],
        "hooks status waited on a FIFO named as a hook script",
        cwd=repo,
    )
    assert done.returncode == 0, done.stderr
    assert f"not installed in {repo / '.claude' / 'settings.json'}" in done.stdout
    assert "session-end.sh" not in done.stdout  # neither handler is ours


def test_options_must_fit_the_target(
    runner: CliRunner, make_vault: MakeVault, tmp_path: Path
) -> None:
    vault = make_vault()
    for args in (
        ("install", "codex", "--settings", tmp_path / "s.json"),
        ("install", "claude-code", "--hooks", tmp_path / "h.json"),
        ("install", "claude-code", "--print"),
        ("install", "cron", "--settings", tmp_path / "s.json"),
    ):
        result = run(runner, "--vault", vault, "hooks", *args)
        assert result.exit_code == 2, args
    assert list(tmp_path.iterdir()) == [vault]


# -- cron ---------------------------------------------------------------------------

FAKE_CRONTAB = """#!/bin/sh
# crontab -l / crontab -, on a file; each write is counted
case "$1" in
-l)
    [ -f "$FAKE_CRONTAB" ] || { echo "no crontab for tester" >&2; exit 1; }
    cat "$FAKE_CRONTAB" ;;
-) cat >"$FAKE_CRONTAB" && echo write >>"$FAKE_CRONTAB.writes" ;;
*) echo "usage: crontab [-l | -]" >&2; exit 2 ;;
esac
"""
EXISTING = "MAILTO=me@example.com\n# nightly backup\n0 3 * * * /usr/bin/backup --all  # keep\n"


@pytest.fixture
def crontab(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A fake ``crontab`` first on PATH; returns (its table file, the env for the runner)."""
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir()
    fake = bin_dir / "crontab"
    fake.write_text(FAKE_CRONTAB)
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    table = tmp_path / "crontab.txt"
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "FAKE_CRONTAB": str(table)}
    return table, env


def writes(table: Path) -> int:
    log = Path(str(table) + ".writes")
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_cron_install_adds_one_marked_line_and_keeps_the_rest(
    runner: CliRunner, make_vault: MakeVault, crontab: tuple[Path, dict[str, str]]
) -> None:
    table, env = crontab
    table.write_text(EXISTING)
    vault = make_vault()
    result = run(runner, "--vault", vault, "hooks", "install", "cron", env=env)
    assert result.exit_code == 0, result.output
    text = table.read_text()
    assert text.startswith(EXISTING)
    (line,) = text[len(EXISTING) :].splitlines()
    fields = line.split(None, 5)
    assert " ".join(fields[:5]) == config.CRON_SCHEDULE
    argv = shlex.split(fields[5], comments=True)  # as sh reads it
    assert Path(argv[0]).is_absolute() and os.access(argv[0], os.X_OK)
    assert argv[1:4] == ["--vault", str(vault.resolve()), "scan"]
    log = vault.resolve() / config.STATE_DIR / config.HOOK_LOG_FILE
    stamp = 'sed "s/^/$(date -u +\\%Y-\\%m-\\%dT\\%H:\\%M:\\%SZ) cron: /"'
    assert fields[5].split(" 2>&1 | ", 1)[1].startswith(f"{stamp} | {{ L={log}; ")
    assert argv[4:7] == ["2>&1", "|", "sed"]
    assert line.endswith(f" {config.CRON_MARKER} {vault.resolve()}")
    assert (vault / config.STATE_DIR).is_dir()
    # idempotent: the second install does not even rewrite the table
    again = run(runner, "--vault", vault, "hooks", "install", "cron", env=env)
    assert again.exit_code == 0 and "(unchanged)" in again.stdout
    assert table.read_text() == text and writes(table) == 1


def test_an_older_cron_line_keeps_working_until_install_rewrites_it_to_hooks_log(
    runner: CliRunner, make_vault: MakeVault, crontab: tuple[Path, dict[str, str]]
) -> None:
    """A line of an older version sends the scan's output to state/cron.log: it is still
    ours (hooks status lists it), and `hooks install cron` updates it in place, keeping its
    schedule; the old log file is left as it was, not one line lost."""
    table, env = crontab
    vault = make_vault().resolve()
    state = vault / config.STATE_DIR
    old_log = state / "cron.log"
    state.mkdir(exist_ok=True)
    old_log.write_text("vaultkeeper: scan done\n")
    old = f"0 6 * * * /usr/bin/vaultkeeper --vault {vault} scan >>{old_log} 2>&1"
    table.write_text(f"{EXISTING}{old} {config.CRON_MARKER} {vault}\n")
    listed = json.loads(run(runner, "hooks", "status", "--json", env=env).stdout)
    assert [(e["vault"], e["outdated"]) for e in listed["cron"]] == [(str(vault), True)]
    said = run(runner, "hooks", "status", "cron", env=env).stdout
    assert "an older version's line" in said and "hooks install cron` rewrites it" in said
    result = run(runner, "--vault", vault, "hooks", "install", "cron", env=env)
    assert result.exit_code == 0 and "updated 0 6 * * * " in result.stdout, result.output
    (line,) = table.read_text()[len(EXISTING) :].splitlines()
    assert line.startswith("0 6 * * * ") and f"L={state / config.HOOK_LOG_FILE};" in line
    assert "cron.log" not in line and old_log.read_text() == "vaultkeeper: scan done\n"
    listed = json.loads(run(runner, "hooks", "status", "--json", env=env).stdout)
    assert [e["outdated"] for e in listed["cron"]] == [False]
    assert "older version" not in run(runner, "hooks", "status", "cron", env=env).stdout


def test_cron_schedule_print_and_uninstall(
    runner: CliRunner, make_vault: MakeVault, crontab: tuple[Path, dict[str, str]]
) -> None:
    table, env = crontab
    vault, other = make_vault(), make_vault()
    printed = run(
        runner,
        "--vault",
        vault,
        "hooks",
        "install",
        "cron",
        "--print",
        "--schedule",
        "5 * * * 1-5",
        env=env,
    )
    assert printed.exit_code == 0
    assert printed.stdout.startswith("5 * * * 1-5 ") and printed.stdout.count("\n") == 1
    assert not table.exists() and writes(table) == 0  # --print only prints
    table.write_text(EXISTING)
    run(runner, "--vault", other, "hooks", "install", "cron", env=env)
    run(runner, "--vault", vault, "hooks", "install", "cron", "--schedule", "5 * * * 1-5", env=env)
    assert table.read_text().count(config.CRON_MARKER) == 2  # one line per vault
    moved = run(
        runner, "--vault", vault, "hooks", "install", "cron", "--schedule", "@daily", env=env
    )
    assert "updated" in moved.stdout and table.read_text().count(config.CRON_MARKER) == 2
    status = run(runner, "--vault", vault, "hooks", "status", "cron", env=env)
    assert status.exit_code == 0 and status.stdout.count(config.CRON_MARKER) == 2
    removed = run(runner, "--vault", vault, "hooks", "uninstall", "cron", env=env)
    assert removed.exit_code == 0 and "removed @daily" in removed.stdout
    lines = table.read_text().splitlines(keepends=True)
    assert "".join(lines[:3]) == EXISTING and len(lines) == 4
    assert lines[3].rstrip().endswith(f"{config.CRON_MARKER} {other.resolve()}")
    gone = run(runner, "--vault", vault, "hooks", "uninstall", "cron", env=env)
    assert gone.exit_code == 0 and "(unchanged)" in gone.stdout


def test_cron_reinstall_without_schedule_keeps_the_installed_one(
    runner: CliRunner, make_vault: MakeVault, crontab: tuple[Path, dict[str, str]]
) -> None:
    table, env = crontab
    vault = make_vault()
    run(runner, "--vault", vault, "hooks", "install", "cron", "--schedule", "5 * * * 1-5", env=env)
    custom = table.read_text()
    again = run(runner, "--vault", vault, "hooks", "install", "cron", env=env)
    assert again.exit_code == 0 and "(already installed)" in again.stdout
    assert table.read_text() == custom and custom.startswith("5 * * * 1-5 ")
    printed = run(runner, "--vault", vault, "hooks", "install", "cron", "--print", env=env)
    assert printed.stdout.startswith("5 * * * 1-5 ")  # what an install would write
    nickname = run(
        runner, "--vault", vault, "hooks", "install", "cron", "--schedule", "@daily", env=env
    )
    assert "updated" in nickname.stdout
    run(runner, "--vault", vault, "hooks", "install", "cron", env=env)
    assert table.read_text().startswith("@daily ")


def test_cron_escapes_percent_and_refuses_bad_schedules(
    runner: CliRunner, crontab: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    table, env = crontab
    vault = tmp_path / "100%"
    init_vault(vault)
    assert run(runner, "--vault", vault, "hooks", "install", "cron", env=env).exit_code == 0
    line = table.read_text().strip()
    assert "100\\%" in line and "100%" not in line.replace("100\\%", "")
    assert run(runner, "--vault", vault, "hooks", "install", "cron", env=env).stdout.endswith(
        "(already installed)\n"
    )
    for bad in ("every day", "* * * *", "0 3 * * * rm", "%"):
        result = run(
            runner, "--vault", vault, "hooks", "install", "cron", "--schedule", bad, env=env
        )
        assert result.exit_code == 2 and "not a cron schedule" in result.stderr
    assert writes(table) == 1


def test_cron_without_crontab_says_so(
    runner: CliRunner, make_vault: MakeVault, tmp_path: Path
) -> None:
    vault = make_vault()
    env = {"PATH": str(tmp_path)}  # no crontab anywhere
    result = run(runner, "--vault", vault, "hooks", "install", "cron", env=env)
    # a setup that cannot work is exit 2 (the README's table), not 1 (a refusal)
    assert result.exit_code == 2 and "crontab: not found on PATH" in result.stderr
    assert "--print" in result.stderr
    assert (
        run(runner, "--vault", vault, "hooks", "install", "cron", "--print", env=env).exit_code == 0
    )


def test_a_broken_crontab_is_not_overwritten(
    runner: CliRunner, make_vault: MakeVault, crontab: tuple[Path, dict[str, str]]
) -> None:
    table, env = crontab
    fake = Path(env["PATH"].split(os.pathsep)[0]) / "crontab"
    fake.write_text("#!/bin/sh\necho 'crontab: permission denied' >&2\nexit 1\n")
    result = run(runner, "--vault", make_vault(), "hooks", "install", "cron", env=env)
    assert (
        result.exit_code == 1 and "crontab -l failed: crontab: permission denied" in result.stderr
    )
    assert not table.exists()


# -- hooks status ------------------------------------------------------------------------


def test_hooks_status_shows_a_hook_logs_and_a_settings_commands_escapes_inert(
    runner: CliRunner, make_vault: MakeVault, tmp_path: Path, crontab: tuple[Path, dict[str, str]]
) -> None:
    """The hook log (any process of the session may append to it) and a settings file's
    command (a repository's .claude/settings.json) never reach the terminal raw: no OSC 52
    clipboard write, no screen clear, no forged row."""
    _, env = crontab
    vault = make_vault()
    settings, codex = tmp_path / "settings.json", tmp_path / "hooks.json"
    run(runner, "--vault", vault, "hooks", "install", "claude-code", "--settings", settings)
    data = json.loads(settings.read_text())
    data["hooks"]["SessionEnd"][0]["hooks"][0]["command"] += " \x1b]52;c;QUFB\x07\nforged"
    settings.write_text(json.dumps(data))
    log = vault / config.STATE_DIR / config.HOOK_LOG_FILE
    log.write_text("x \x1b]52;c;QUFB\x07 y \x1b[2J\n")
    own = {**env, "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state-home")}
    args = ("hooks", "status", "--settings", settings, "--hooks", codex)
    text = run(runner, "--vault", vault, *args, env=own)
    assert "\x1b" not in text.stdout and "\x07" not in text.stdout
    assert text.stdout.endswith(f"hook log     {log}: x \\x1b]52;c;QUFB\\x07 y \\x1b[2J\n")
    assert not any(line.startswith("forged") for line in text.stdout.splitlines())


def test_hooks_status_says_what_is_installed_where(
    runner: CliRunner, make_vault: MakeVault, tmp_path: Path, crontab: tuple[Path, dict[str, str]]
) -> None:
    _, env = crontab
    vault = make_vault()
    settings, codex = tmp_path / "settings.json", tmp_path / "hooks.json"
    run(runner, "--vault", vault, "hooks", "install", "claude-code", "--settings", settings)
    args = ("hooks", "status", "--settings", settings, "--hooks", codex)
    text = run(runner, "--vault", vault, *args, env=env)
    assert text.exit_code == 0
    assert f"claude-code  SessionEnd (timeout 1 s) in {settings}" in text.stdout
    assert f"codex        not installed in {codex}" in text.stdout
    assert "cron         no vaultkeeper line in the crontab" in text.stdout
    assert f"last scan    {vault.resolve()}: never" in text.stdout
    state = vault / config.STATE_DIR / config.STATE_FILE
    state.write_text(
        json.dumps(
            {
                "state": "idle",
                "lastCompleted": 1_790_000_000_000,
                "lastTriggered": 1_790_000_000_000,
                "cooldownMs": 3_600_000,
                "pid": None,
                "perTask": {},
            }
        )
    )
    log = vault / config.STATE_DIR / config.HOOK_LOG_FILE
    log.write_text("2026-11-01T00:00:00Z session-end: old\n2026-11-02T00:00:00Z session-end: new\n")
    # a home of its own: the fallback log of other tests' hooks is not this vault's
    own = {**env, "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state-home")}
    text = run(runner, "--vault", vault, *args, env=own)
    assert text.stdout.endswith(f"hook log     {log}: 2026-11-02T00:00:00Z session-end: new\n")
    log.unlink()
    data = json.loads(run(runner, *args, "--json", env=env).stdout)  # no vault needed
    (claude, cdx) = data["hosts"]
    assert [h["event"] for h in claude["handlers"]] == ["SessionEnd", "SessionStart"]
    assert claude["handlers"][0]["vault"] == str(vault.resolve()) and cdx["handlers"] == []
    assert data["cron"] == [] and data["last_scans"] == [
        {"vault": str(vault.resolve()), "last_completed": "2026-09-21T14:13:20+00:00"}
    ]


def test_the_cron_line_runs_with_cron_s_bare_environment(
    runner: CliRunner, make_vault: MakeVault, tmp_path: Path
) -> None:
    """Cron runs the command with sh, a bare PATH and another working directory."""
    vault = make_vault()
    printed = run(runner, "--vault", vault, "hooks", "install", "cron", "--print")
    command = printed.stdout.strip().split(None, 5)[5].replace("\\%", "%")  # as cron does
    done = subprocess.run(
        ["/bin/sh", "-c", command],
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "SHELL": "/bin/sh"},
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    log = (vault / config.STATE_DIR / config.HOOK_LOG_FILE).read_text()
    assert re.search(
        rf"^\d{{4}}-\d\d-\d\dT\d\d:\d\d:\d\dZ cron: {config.SUMMARY_PREFIX} prune candidates 0 \|",
        log,
        re.M,
    ), log
    assert all(" cron: " in line for line in log.splitlines())  # every line says cron wrote it
    assert '"state": "idle"' in (vault / config.STATE_DIR / config.STATE_FILE).read_text()


def test_hooks_status_reports_an_unreadable_file_without_failing(
    runner: CliRunner, tmp_path: Path
) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text("{oops")
    result = run(runner, "hooks", "status", "claude-code", "--settings", settings)
    assert result.exit_code == 0
    assert result.stdout.startswith(f"claude-code  {settings}:1:2: not valid JSON (")
    hooks_lines = [x for x in result.stdout.splitlines() if " mcp server " not in x]
    assert len(hooks_lines) == 1 and "nothing written" not in result.stdout


def test_default_files_are_under_home(
    runner: CliRunner, make_vault: MakeVault, tmp_path: Path
) -> None:
    vault, home = make_vault(), tmp_path / "home"
    for host, where in (("claude-code", config.CLAUDE_SETTINGS), ("codex", config.CODEX_HOOKS)):
        result = run(runner, "--vault", vault, "hooks", "install", host, env={"HOME": str(home)})
        assert result.exit_code == 0
        target = home / where.removeprefix("~/")
        assert result.stdout.startswith(f"{host}: {target}\n")
        assert len(ours(json.loads(target.read_text()), "SessionEnd")) == 1


# -- hostile input (adversarial review) --------------------------------------------------


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ('{"limit": 1e999}', "Out of range float"),  # would come back as Infinity
        ('{"limit": NaN}', "Out of range float"),
        ('{"name": "\\ud800"}', "surrogates not allowed"),  # valid JSON, not writable UTF-8
    ],
)
def test_settings_that_cannot_round_trip_are_refused_untouched(
    runner: CliRunner, make_vault: MakeVault, tmp_path: Path, content: str, why: str
) -> None:
    vault = make_vault()
    settings = tmp_path / "settings.json"
    settings.write_text(content)
    result = run(
        runner, "--vault", vault, "hooks", "install", "claude-code", "--settings", settings
    )
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert f"{settings}: cannot be written back as valid JSON (" in result.stderr
    assert why in result.stderr and result.stderr.rstrip().endswith("nothing written")
    assert settings.read_text() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json", vault.name]  # no .bak


def test_a_fifo_settings_file_is_refused_not_waited_on(
    runner: CliRunner, make_vault: MakeVault, tmp_path: Path
) -> None:
    fifo = tmp_path / "settings.json"
    os.mkfifo(fifo)
    vault = make_vault()
    result = run(runner, "--vault", vault, "hooks", "install", "claude-code", "--settings", fifo)
    assert result.exit_code == 1 and "not a regular file; nothing written" in result.stderr
    status = run(runner, "hooks", "status", "claude-code", "--settings", fifo)
    assert status.exit_code == 0 and "not a regular file" in status.stdout


def test_cron_keeps_a_crontab_that_is_not_utf8_byte_for_byte(
    runner: CliRunner, make_vault: MakeVault, crontab: tuple[Path, dict[str, str]]
) -> None:
    table, env = crontab
    existing = b"# caf\xe9 (latin-1)\r\n0 1 * * * echo hi\r\n"
    table.write_bytes(existing)
    vault = make_vault()
    result = run(runner, "--vault", vault, "hooks", "install", "cron", env=env)
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    assert table.read_bytes().startswith(existing)
    status = run(runner, "--vault", vault, "hooks", "status", "cron", env=env)
    assert status.exit_code == 0 and config.CRON_MARKER in status.stdout
    assert run(runner, "--vault", vault, "hooks", "uninstall", "cron", env=env).exit_code == 0
    assert table.read_bytes() == existing


@pytest.mark.parametrize("target", ["claude-code", "codex", "cron"])
def test_install_for_a_folder_that_is_not_a_vault_is_refused(
    runner: CliRunner, tmp_path: Path, crontab: tuple[Path, dict[str, str]], target: str
) -> None:
    # `--vault ~` by mistake: every session's scan would refuse it, logged where nobody looks
    table, env = crontab
    home = tmp_path / "home"
    home.mkdir()
    result = run(
        runner, "--vault", home, "hooks", "install", target, env={**env, "HOME": str(home)}
    )
    assert result.exit_code == 2
    assert f"{home.resolve()}: not a vault (no _index.md, projects/ or patterns/)" in result.stderr
    assert list(home.iterdir()) == [] and not table.exists()


def test_status_finds_a_project_level_claude_code_install(
    runner: CliRunner, make_vault: MakeVault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Installed with --settings .claude/settings.json --project: status, run in the
    project without --settings, finds the hooks there as it finds the .mcp.json."""
    vault = make_vault()
    project = tmp_path / "proj"
    project.mkdir()
    monkeypatch.chdir(project)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    args = ["--settings", ".claude/settings.json", "--mcp", "--project"]
    done = run(runner, "--vault", vault, "hooks", "install", "claude-code", *args)
    assert done.exit_code == 0, done.output
    shown = run(runner, "hooks", "status", "claude-code")
    assert shown.exit_code == 0, shown.output
    settings = project / ".claude" / "settings.json"
    lines = [line for line in shown.stdout.splitlines() if line.startswith("claude-code")]
    assert any("SessionEnd (timeout" in line and f"in {settings}:" in line for line in lines)
    assert any("SessionStart (timeout" in line and f"in {settings}:" in line for line in lines)
    assert sum("mcp server vaultkeeper in" in line for line in lines) == 1  # listed once
    assert f"not installed in {tmp_path / 'home'}" in shown.stdout  # the user file: none


@pytest.mark.parametrize(
    ("command", "usage"),
    [("install", "TARGET"), ("uninstall", "TARGET"), ("status", "[TARGET]")],
)
def test_hooks_help_names_target_and_lists_the_targets(
    runner: CliRunner, command: str, usage: str
) -> None:
    shown = run(runner, "hooks", command, "--help").stdout
    assert shown.splitlines()[0].endswith(f" hooks {command} [OPTIONS] {usage}")
    assert "TARGET (claude-code, codex, cron or git)" in " ".join(shown.split())
    assert "Example:" in shown


def _run_as_cron(line: str, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    """What cron runs of ``line``: the command after the schedule, ``\\%`` back to ``%``."""
    command = line.split(None, 1 if line.startswith("@") else 5)[-1].replace("\\%", "%")
    return subprocess.run(["/bin/sh", "-c", command], env=env, timeout=20, capture_output=True)


@pytest.mark.parametrize("odd", ["symlink", "fifo", "state-symlink"])
def test_the_cron_line_never_logs_through_a_link_or_into_a_fifo(tmp_path: Path, odd: str) -> None:
    # The line appended with a plain `>>state/hooks.log`: through a symlink out of the
    # vault, and for ever on a FIFO (each run left a scan and a sed waiting). The hook
    # scripts refuse both; the cron line now does too, logging in the user's folder.
    vault = tmp_path / "vault"
    (vault / config.STATE_DIR).mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / config.HOOK_LOG_FILE).write_text("not vaultkeeper's\n")
    log = vault / config.STATE_DIR / config.HOOK_LOG_FILE
    if odd == "symlink":
        log.symlink_to(outside / config.HOOK_LOG_FILE)
    elif odd == "fifo":
        os.mkfifo(log)
    else:
        (vault / config.STATE_DIR).rmdir()
        (vault / config.STATE_DIR).symlink_to(outside)
    program = tmp_path / "vk"
    program.write_text("#!/bin/sh\necho 'vaultkeeper: error: disk full'\nexit 1\n")
    program.chmod(0o755)
    line = cron_line(vault, str(program), "0 6 * * *")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home")}
    done = _run_as_cron(line, env)
    assert done.returncode == 0, done.stderr
    assert (outside / config.HOOK_LOG_FILE).read_text() == "not vaultkeeper's\n"
    mine = tmp_path / "home" / ".local" / "state" / "vaultkeeper" / config.HOOK_LOG_FILE
    assert mine.read_text().endswith(" cron: vaultkeeper: error: disk full\n")


def test_the_cron_line_logs_in_the_vault(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / config.STATE_DIR).mkdir(parents=True)
    program = tmp_path / "vk"
    program.write_text('#!/bin/sh\necho "scanned $*"\n')
    program.chmod(0o755)
    line = cron_line(vault, str(program), "@daily")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home")}
    assert _run_as_cron(line, env).returncode == 0
    text = (vault / config.STATE_DIR / config.HOOK_LOG_FILE).read_text()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ cron: scanned --vault \S+ scan\n", text)
    assert not (tmp_path / "home").exists()


def test_a_settings_file_nested_past_jsons_depth_is_refused_in_one_line(
    runner: CliRunner, make_vault: MakeVault, tmp_path: Path
) -> None:
    # json.loads raises RecursionError (not JSONDecodeError) past its nesting depth:
    # install, uninstall and status ended in "internal error ... a bug in vaultkeeper".
    settings = tmp_path / "settings.json"
    deep = '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"
    settings.write_text(deep)
    vault = make_vault()
    for verb in ("install", "uninstall"):
        done = runner.invoke(
            cli, ["--vault", str(vault), "hooks", verb, "claude-code", "--settings", str(settings)]
        )
        assert done.exit_code == 1, (verb, done.output)
        assert "internal error" not in done.stderr and "not valid JSON" in done.stderr
    assert settings.read_text() == deep
