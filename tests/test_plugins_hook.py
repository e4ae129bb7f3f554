"""The plugins' launcher (plugins/*/scripts/vaultkeeper-hook) and MCP wrapper, run as the
hosts run them: what the person sees when vaultkeeper or the vault is missing, and the
installed vaultkeeper's own hook script run with the vault otherwise."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import MakeVault
from vaultkeeper import config

REPO = Path(__file__).resolve().parent.parent
HOOK = REPO / "plugins" / "vaultkeeper" / "scripts" / "vaultkeeper-hook"
MCP = REPO / "plugins" / "vaultkeeper" / "scripts" / "vaultkeeper-mcp"
PROGRAM = Path(sys.executable).parent / "vaultkeeper"  # this checkout's, on the venv's PATH


def env_for(home: Path, path: str, **extra: str) -> dict[str, str]:
    e = {"HOME": str(home), "PATH": path, "LANG": "C.UTF-8", "XDG_STATE_HOME": str(home / "st")}
    e.update(extra)
    return e


def run(args: list[str], env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(HOOK), *args], env=env, input=stdin, capture_output=True, text=True, timeout=120
    )


def fallback_log(home: Path) -> str:
    return (home / "st" / "vaultkeeper" / config.HOOK_LOG_FILE).read_text(encoding="utf-8")


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_no_vaultkeeper_installed_says_so_in_one_line_the_host_shows(
    tmp_path: Path, host: str
) -> None:
    r = run([host, "session-start"], env_for(tmp_path, "/usr/bin:/bin"))
    assert r.returncode == 0  # never blocking
    lines = r.stdout.splitlines()
    assert len(lines) == 1
    out = json.loads(lines[0])
    said = "vaultkeeper plugin: the vaultkeeper command is not installed (not on PATH)"
    assert out["systemMessage"].startswith(said)  # shown to the person by both hosts
    assert out["hookSpecificOutput"] == {
        "hookEventName": "SessionStart",
        "additionalContext": out["systemMessage"],
    }
    assert config.DIST_NAME in out["systemMessage"]
    assert "not installed" in fallback_log(tmp_path)


@pytest.mark.parametrize("event", ["session-end", "recall"])
def test_other_hooks_print_nothing_and_leave_the_line_in_the_log(
    tmp_path: Path, event: str
) -> None:
    r = run(["codex", event], env_for(tmp_path, "/usr/bin:/bin"), stdin='{"cwd": "/"}')
    assert (r.returncode, r.stdout) == (0, "")
    assert f"plugin {event}: the vaultkeeper command is not installed" in fallback_log(tmp_path)


def test_no_vault_set_and_a_missing_vault_are_named(tmp_path: Path) -> None:
    path = f"{PROGRAM.parent}:/usr/bin:/bin"
    r = run(["claude-code", "session-start"], env_for(tmp_path, path))
    msg = json.loads(r.stdout)["systemMessage"]
    assert r.returncode == 0 and "no vault set: set VAULTKEEPER_VAULT" in msg
    gone = tmp_path / "nowhere"
    r = run(["claude-code", "session-start"], env_for(tmp_path, path, VAULTKEEPER_VAULT=str(gone)))
    msg = json.loads(r.stdout)["systemMessage"]
    assert f"{gone}: no such vault directory" in msg and "vaultkeeper init" in msg


def test_unknown_host_or_hook_is_a_line_not_a_failure(tmp_path: Path) -> None:
    r = run(["vim", "session-start"], env_for(tmp_path, "/usr/bin:/bin"))
    assert r.returncode == 0 and "unknown host 'vim'" in json.loads(r.stdout)["systemMessage"]
    r = run(["codex", "lunch"], env_for(tmp_path, "/usr/bin:/bin"))
    assert (r.returncode, r.stdout) == (0, "")
    assert "unknown hook 'lunch'" in fallback_log(tmp_path)


def brief_by_hooks_install(vault: Path, env: dict[str, str]) -> str:
    """What `hooks install`'s SessionStart handler prints: the installed script, the vault
    and the program by absolute path."""
    from vaultkeeper.hosts.hooks import script_path

    script = script_path("SessionStart")
    r = subprocess.run(
        [str(script), str(vault), str(PROGRAM)], env=env, input='{"cwd": "/"}',
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize("where", ["env", "option"])
def test_the_brief_is_the_one_hooks_install_gives(tmp_path: Path, sample: Path, where: str) -> None:
    path = f"{PROGRAM.parent}:/usr/bin:/bin"
    if where == "env":
        env = env_for(tmp_path, path, VAULTKEEPER_VAULT=str(sample))
    else:  # Claude Code: `claude plugin install ... --config vault=PATH`
        env = env_for(tmp_path, path, CLAUDE_PLUGIN_OPTION_VAULT=str(sample))
    r = run(["claude-code", "session-start"], env, stdin='{"cwd": "/"}')
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"Memory vault: {sample}.")
    assert r.stdout == brief_by_hooks_install(sample, env)


def test_vaultkeeper_vault_wins_over_the_plugin_option(tmp_path: Path, sample: Path) -> None:
    env = env_for(
        tmp_path, f"{PROGRAM.parent}:/usr/bin:/bin",
        VAULTKEEPER_VAULT=str(sample), CLAUDE_PLUGIN_OPTION_VAULT=str(tmp_path / "other"),
    )  # fmt: skip
    r = run(["claude-code", "session-start"], env, stdin="{}")
    assert r.stdout.startswith(f"Memory vault: {sample}.")


def fake_install(root: Path) -> Path:
    """A pipx-style install: bin/vaultkeeper whose #! names bin/python, the wheel's hook
    scripts under lib/python3.X/site-packages/vaultkeeper/_data/hooks/ (stubs that say
    how they were called)."""
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "python").symlink_to(sys.executable)
    prog = root / "bin" / "vaultkeeper"
    prog.write_text(f"#!{root}/bin/python\nraise SystemExit(3)\n")
    prog.chmod(0o755)
    hooks = root / "lib" / "python3.99" / "site-packages" / "vaultkeeper" / "_data" / "hooks"
    hooks.mkdir(parents=True)
    for name in ("session-start.sh", "session-end.sh", "recall.sh"):
        stub = hooks / name
        stub.write_text(f'#!/bin/sh\necho "{name}" "$@"\n')
        stub.chmod(0o755)
    return prog


@pytest.mark.parametrize(
    ("event", "called"),
    [
        ("session-start", "session-start.sh {vault} {prog}"),
        ("session-end", "session-end.sh {vault} {prog}"),
        ("recall", "recall.sh {vault} codex {prog}"),
    ],
)
def test_runs_the_installed_wheel_s_own_script(
    tmp_path: Path, make_vault: MakeVault, event: str, called: str
) -> None:
    vault = make_vault()
    prog = fake_install(tmp_path / "venv")
    env = env_for(tmp_path, f"{prog.parent}:/usr/bin:/bin", VAULTKEEPER_VAULT=str(vault))
    r = run(["codex", event], env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == called.format(vault=vault, prog=prog)


def test_pipx_bin_is_found_off_path(tmp_path: Path, make_vault: MakeVault) -> None:
    vault = make_vault()
    prog = fake_install(tmp_path / "venv")
    (tmp_path / ".local" / "bin").mkdir(parents=True)
    (tmp_path / ".local" / "bin" / "vaultkeeper").symlink_to(prog)
    env = env_for(tmp_path, "/usr/bin:/bin", VAULTKEEPER_VAULT=str(vault))
    r = run(["codex", "session-start"], env)
    assert r.stdout.startswith("session-start.sh ")


def test_an_install_without_hook_scripts_is_named(tmp_path: Path, make_vault: MakeVault) -> None:
    vault = make_vault()
    prog = fake_install(tmp_path / "venv")
    shutil.rmtree(tmp_path / "venv" / "lib")
    env = env_for(tmp_path, f"{prog.parent}:/usr/bin:/bin", VAULTKEEPER_VAULT=str(vault))
    r = run(["codex", "session-start"], env)
    assert "its hook scripts were not found" in json.loads(r.stdout)["systemMessage"]


def test_mcp_wrapper_names_what_is_missing_and_runs_the_server(
    tmp_path: Path, sample: Path
) -> None:
    r = subprocess.run([str(MCP)], env=env_for(tmp_path, "/usr/bin:/bin"), capture_output=True,
                       text=True, timeout=60)  # fmt: skip
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "vaultkeeper command is not installed" in r.stderr
    path = f"{PROGRAM.parent}:/usr/bin:/bin"
    r = subprocess.run([str(MCP)], env=env_for(tmp_path, path), capture_output=True, text=True,
                       timeout=60)  # fmt: skip
    assert r.returncode == 1 and "no vault set" in r.stderr
    # with the option set: `vaultkeeper --vault VAULT mcp --help` (the server, not started)
    env = env_for(tmp_path, path, VAULTKEEPER_PLUGIN_VAULT=str(sample))
    r = subprocess.run([str(MCP), "--help"], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "Usage: vaultkeeper mcp" in r.stdout
    assert os.access(MCP, os.X_OK)


# Review (issue 36 item 2): the hosts run the plugin's launcher in the project's folder, so
# a PATH entry that is empty, `.` or relative would find a `vaultkeeper` the repository
# carries. Only absolute PATH entries are searched.
def _planted(repo: Path) -> Path:
    repo.mkdir(parents=True)
    marker = repo / "ran"
    fake = repo / "bin" / "vaultkeeper"
    fake.parent.mkdir()
    fake.write_text(
        f"#!{sys.executable}\nimport pathlib\npathlib.Path({str(marker)!r}).write_text('x')\n"
    )
    fake.chmod(0o755)
    shutil.copy(fake, repo / "vaultkeeper")
    return marker


@pytest.mark.parametrize("entry", ["", ".", "bin"])
def test_a_vaultkeeper_in_the_project_folder_is_never_run(
    tmp_path: Path, sample: Path, entry: str
) -> None:
    repo = tmp_path / "repo"
    marker = _planted(repo)
    env = env_for(tmp_path, f"/usr/bin:/bin:{entry}", VAULTKEEPER_VAULT=str(sample))
    hook = [str(HOOK), "claude-code", "session-start"]
    r = subprocess.run(hook, env=env, cwd=repo, input='{"cwd": "/"}', capture_output=True,
                       text=True, timeout=120)  # fmt: skip
    said = json.loads(r.stdout)["systemMessage"]
    assert "the vaultkeeper command is not installed" in said
    r = subprocess.run([str(MCP), "--help"], env=env, cwd=repo, capture_output=True, text=True,
                       timeout=60)  # fmt: skip
    assert r.returncode == 1 and "not installed" in r.stderr
    assert not marker.exists()


# Review: the vault option or VAULTKEEPER_VAULT with a newline, tab or escape (a name
# that came from anywhere) still gives one JSON line the host can show.
def test_a_vault_name_with_control_characters_still_gives_one_json_line(tmp_path: Path) -> None:
    path = f"{PROGRAM.parent}:/usr/bin:/bin"
    odd = str(tmp_path / "a\nb\tc\x1b[2Jd")
    r = run(["claude-code", "session-start"], env_for(tmp_path, path, VAULTKEEPER_VAULT=odd))
    assert r.returncode == 0 and r.stdout.count("\n") == 1
    msg = json.loads(r.stdout)["systemMessage"]
    assert "no such vault directory" in msg and "\x1b" not in msg and "\n" not in msg
