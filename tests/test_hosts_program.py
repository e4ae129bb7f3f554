"""hooks status says when a hook's program is gone or not a vaultkeeper; hooks install
warns when it writes a path that will not last, and refuses --mcp without the MCP SDK."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import MakeVault
from vaultkeeper.cli import cli
from vaultkeeper.hosts import hooks as hostfiles
from vaultkeeper.hosts.hooks import placement_warning, program_problem


def _env(home: Path) -> dict[str, str]:
    return {"HOME": str(home), "XDG_STATE_HOME": str(home / "state")}


def _settings(home: Path, program: str, vault: Path, script: Path | None = None) -> Path:
    script = script or hostfiles.script_path("SessionStart")
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    command = f"{script} {vault} {program}"
    hook = {"hooks": [{"type": "command", "command": command, "timeout": 10}]}
    path.write_text(json.dumps({"hooks": {"SessionStart": [hook]}}))
    return path


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_install_mcp_without_the_sdk_refuses_and_writes_nothing(
    make_vault: MakeVault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, host: str
) -> None:
    vault = make_vault({})
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setitem(sys.modules, "mcp", None)  # as if the extra were not installed
    done = CliRunner().invoke(
        cli, ["--vault", str(vault), "hooks", "install", host, "--mcp"], env=_env(home)
    )
    assert done.exit_code == 2, done.output
    assert done.stdout == "" and done.stderr.count("\n") == 1
    assert done.stderr.startswith("vaultkeeper: error: --mcp registers `vaultkeeper mcp`")
    # an install line that works today: from a clone (the index comes later)
    assert "pipx install --force '.[mcp]' in a clone of vaultkeeper" in done.stderr
    assert "nothing written" in done.stderr
    assert list(home.iterdir()) == []  # no hooks file, no server list, no folder


def test_status_says_when_the_program_is_gone_or_not_a_vaultkeeper(
    make_vault: MakeVault, tmp_path: Path
) -> None:
    vault = make_vault({})
    home = tmp_path / "home"
    gone = tmp_path / "deleted-clone" / ".venv" / "bin" / "vaultkeeper"
    _settings(home, str(gone), vault)
    status = CliRunner().invoke(cli, ["hooks", "status", "claude-code"], env=_env(home))
    assert status.exit_code == 0, status.output
    assert f"SessionStart will do nothing: the program {gone} is gone" in status.stdout
    assert "`pipx install .` in a clone of vaultkeeper" in status.stdout

    other = tmp_path / "bin" / "vaultkeeper"
    other.parent.mkdir()
    other.write_text("#!/bin/sh\necho 'Vault agent 0.1.7'\n")
    other.chmod(0o755)
    _settings(home, str(other), vault)
    status = CliRunner().invoke(cli, ["hooks", "status", "--json"], env=_env(home))
    (claude,) = [h for h in json.loads(status.stdout)["hosts"] if h["target"] == "claude-code"]
    (handler,) = claude["handlers"]
    assert handler["problem"].startswith(f"the program {other} is not a vaultkeeper")
    assert "Vault agent 0.1.7" in handler["problem"]


def test_status_says_when_the_hook_script_is_gone(make_vault: MakeVault, tmp_path: Path) -> None:
    vault = make_vault({})
    home = tmp_path / "home"
    script = tmp_path / "old" / "vaultkeeper" / "_data" / "hooks" / "session-start.sh"
    _settings(home, "/usr/bin/true", vault, script)
    status = CliRunner().invoke(cli, ["hooks", "status", "claude-code"], env=_env(home))
    assert f"will do nothing: its hook script {script} is gone" in status.stdout


def test_a_working_vaultkeeper_has_no_problem() -> None:
    program = hostfiles.find_program({"PATH": str(Path(sys.executable).parent)})
    if program is None:
        pytest.skip("no vaultkeeper console script beside this interpreter")
    assert program_problem(program) is None


def test_install_warns_once_when_the_program_is_in_a_temporary_folder(
    make_vault: MakeVault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = make_vault({})
    home = tmp_path / "home"
    home.mkdir()
    scratch = tmp_path / "scratch"
    fake = scratch / "venv" / "bin" / "vaultkeeper"
    monkeypatch.setattr(hostfiles, "find_program", lambda env: str(fake))
    monkeypatch.setattr("tempfile.gettempdir", lambda: str(scratch))
    done = CliRunner().invoke(
        cli, ["--vault", str(vault), "hooks", "install", "claude-code", "--json"], env=_env(home)
    )
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["changed"] is True  # written all the same
    assert done.stderr.startswith(
        f"vaultkeeper: warning: the hooks will run {fake}, inside the temporary folder "
        f"{scratch.resolve()}: they stop working (silently) when it is deleted"
    )
    assert done.stderr.count("\n") == 1 and "`pipx install .` in a clone of" in done.stderr
    again = CliRunner().invoke(
        cli, ["--vault", str(vault), "hooks", "install", "cron", "--print"], env=_env(home)
    )
    assert again.exit_code == 0 and again.stderr == ""  # --print writes nothing: no warning


def test_the_places_that_do_not_last(tmp_path: Path) -> None:
    home = tmp_path / "home"
    pipx = home / ".local" / "pipx" / "venvs" / "vaultkeeper-memory"
    (pipx / "bin").mkdir(parents=True)
    (pipx / "pyvenv.cfg").write_text("home = /usr/bin\n")
    project = tmp_path / "src" / "api"
    (project / ".git").mkdir(parents=True)
    (project / ".venv" / "bin").mkdir(parents=True)
    (project / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    env = {"HOME": str(home)}
    elsewhere = tmp_path / "work"
    elsewhere.mkdir()

    def warn(path: Path, cwd: Path = elsewhere, temps: tuple[str, ...] = ()) -> str | None:
        return placement_warning([str(path)], env, cwd, temps)

    assert warn(pipx / "bin" / "vaultkeeper") is None  # a daily-use install
    said = warn(project / ".venv" / "bin" / "vaultkeeper")
    assert said is not None and f"the virtual environment {project / '.venv'}" in said
    assert f"of the project {project}" in said
    assert "`pipx install .` in a clone of vaultkeeper" in said
    said = warn(project / "hooks" / "session-end.sh")  # an editable install's script
    assert said is not None and f"inside the working tree of the project {project}" in said
    loose = elsewhere / "venv"
    (loose / "bin").mkdir(parents=True)
    (loose / "pyvenv.cfg").write_text("home = /usr/bin\n")
    assert warn(loose / "bin" / "vaultkeeper", cwd=home) is None
    said = warn(loose / "bin" / "vaultkeeper", cwd=elsewhere)
    assert said is not None and "of the current folder" in said
    said = warn(pipx / "bin" / "vaultkeeper", temps=(str(tmp_path),))
    assert said is not None and f"inside the temporary folder {tmp_path.resolve()}" in said
    # a home that is itself a git working tree (dotfiles) is not a project
    (home / ".git").mkdir()
    assert warn(pipx / "bin" / "vaultkeeper") is None


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_the_recall_hook_s_host_argument_is_not_read_as_its_program(
    make_vault: MakeVault, tmp_path: Path, host: str
) -> None:
    """recall.sh takes VAULT HOST PROGRAM: status once read HOST as the program ("the
    program claude-code is gone") although the hooks worked (issue 34 item 6)."""
    program = hostfiles.find_program({"PATH": str(Path(sys.executable).parent)})
    if program is None:
        pytest.skip("no vaultkeeper console script beside this interpreter")
    vault = make_vault({})
    home = tmp_path / "home"
    home.mkdir()
    handlers = hostfiles.desired(host, vault, program, recall=True)[2:]
    assert all(h.problem is None for h in handlers)
    from vaultkeeper.hosts.hooks import problem_of

    assert [problem_of(h.command) for h in handlers] == [None, None]
    gone = str(tmp_path / "deleted" / "vaultkeeper")
    broken = hostfiles.desired(host, vault, gone, recall=True)[2:]
    assert all(f"the program {gone} is gone" in (problem_of(h.command) or "") for h in broken)
    installed = CliRunner().invoke(
        cli,
        ["--vault", str(vault), "hooks", "install", host, "--recall"],
        env={**_env(home), "PATH": str(Path(sys.executable).parent)},
    )
    assert installed.exit_code == 0, installed.output
    status = CliRunner().invoke(cli, ["hooks", "status", host], env=_env(home))
    assert status.exit_code == 0, status.output
    assert "will do nothing" not in status.stdout and "is gone" not in status.stdout
    assert "UserPromptSubmit" in status.stdout and "PreToolUse" in status.stdout
