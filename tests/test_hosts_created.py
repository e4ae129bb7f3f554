"""`hooks uninstall` leaves a fresh home as it was when `hooks install` created the file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import MakeVault
from vaultkeeper import config
from vaultkeeper.cli import cli

HOSTS = [("claude-code", ".claude", "settings.json"), ("codex", ".codex", "hooks.json")]


def tree(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


def vk(runner: CliRunner, home: Path, *args: str | Path) -> Any:
    env = {"HOME": str(home), "XDG_STATE_HOME": str(home / ".local/state")}
    result = runner.invoke(cli, [str(a) for a in args], env=env)
    assert result.exit_code == 0, result.output
    return result


@pytest.mark.parametrize(("host", "folder", "name"), HOSTS)
def test_a_fresh_home_is_left_as_it_was(
    runner: CliRunner, make_vault: MakeVault, tmp_path: Path, host: str, folder: str, name: str
) -> None:
    vault = make_vault()
    home = tmp_path / "home"
    home.mkdir()
    vk(runner, home, "--vault", vault, "hooks", "install", host)
    settings = home / folder / name
    assert set(json.loads(settings.read_text())["hooks"]) == {"SessionEnd", "SessionStart"}
    # a second install for another vault rewrites the file and keeps a backup: both ours
    other = make_vault()
    vk(runner, home, "--vault", other, "hooks", "install", host)
    assert settings.with_name(name + config.HOOK_BACKUP_SUFFIX).exists()
    done = vk(runner, home, "hooks", "uninstall", host)
    assert tree(home) == []
    assert f"deleted {settings}: install created it and it held nothing else" in done.stdout
    assert f"deleted {home / folder}/: install created it" in done.stdout


def test_a_file_someone_added_to_stays(
    runner: CliRunner, make_vault: MakeVault, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    vk(runner, home, "--vault", make_vault(), "hooks", "install", "claude-code")
    settings = home / ".claude/settings.json"
    data = json.loads(settings.read_text())
    settings.write_text(json.dumps({**data, "model": "opus"}, indent=2) + "\n")
    (home / ".claude/notes.txt").write_text("mine\n")
    vk(runner, home, "hooks", "uninstall", "claude-code")
    assert json.loads(settings.read_text()) == {"model": "opus"}
    assert not settings.with_name("settings.json" + config.HOOK_CREATED_SUFFIX).exists()
    # it is the person's file now: a later install and uninstall never delete it
    vk(runner, home, "--vault", make_vault(), "hooks", "install", "claude-code")
    settings.write_text("{}\n")
    vk(runner, home, "hooks", "uninstall", "claude-code")
    assert settings.read_text() == "{}\n"


def test_an_existing_file_and_folder_are_never_deleted(
    runner: CliRunner, make_vault: MakeVault, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    vk(runner, home, "--vault", make_vault(), "hooks", "install", "codex")
    vk(runner, home, "hooks", "uninstall", "codex")
    # the folder was there: it stays (empty, as it was); the file was made, so it goes
    assert tree(home) == [".codex"]
    (home / ".codex/hooks.json").write_text("{}\n")
    vk(runner, home, "--vault", make_vault(), "hooks", "install", "codex")
    vk(runner, home, "hooks", "uninstall", "codex")
    assert (home / ".codex/hooks.json").read_text() == "{}\n"


def mcp_installed(
    runner: CliRunner, make_vault: MakeVault, tmp_path: Path, host: str
) -> tuple[Path, Path]:
    """A fresh home after ``hooks install HOST --mcp``: the home and the MCP file."""
    home = tmp_path / "home"
    home.mkdir()
    vk(runner, home, "--vault", make_vault(), "hooks", "install", host, "--mcp")
    served = home / (".claude.json" if host == "claude-code" else ".codex/config.toml")
    assert "vaultkeeper" in served.read_text()
    return home, served


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_a_fresh_home_is_left_as_it_was_with_mcp(
    runner: CliRunner, make_vault: MakeVault, tmp_path: Path, host: str
) -> None:
    home, served = mcp_installed(runner, make_vault, tmp_path, host)
    # a second install for another vault rewrites the file and keeps a backup: both ours
    vk(runner, home, "--vault", make_vault(), "hooks", "install", host, "--mcp")
    assert served.with_name(served.name + config.HOOK_BACKUP_SUFFIX).exists()
    done = vk(runner, home, "hooks", "uninstall", host, "--mcp")
    assert tree(home) == []
    assert f"deleted {served}: install created it and it held nothing else" in done.stdout


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_an_mcp_file_someone_added_to_stays(
    runner: CliRunner, make_vault: MakeVault, tmp_path: Path, host: str
) -> None:
    home, served = mcp_installed(runner, make_vault, tmp_path, host)
    if host == "claude-code":  # the host writes its own keys into ~/.claude.json
        data = json.loads(served.read_text())
        served.write_text(json.dumps({"numStartups": 3, **data}, indent=2) + "\n")
        kept = '{\n  "numStartups": 3\n}\n'
    else:
        served.write_text('model = "o4"\n\n' + served.read_text())
        kept = 'model = "o4"\n'
    vk(runner, home, "hooks", "uninstall", host, "--mcp")
    assert served.read_text() == kept
    assert not served.with_name(served.name + config.HOOK_CREATED_SUFFIX).exists()
