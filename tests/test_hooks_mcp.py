"""`hooks install|uninstall|status` with --mcp: a refusal writes no file, and status says
where the MCP server is registered and for which vault."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from vaultkeeper.cli import cli
from vaultkeeper.hooks import find_program

needs_program = pytest.mark.skipif(
    find_program(os.environ) is None, reason="no vaultkeeper program to register"
)


def _run(home: Path, *args: str | Path) -> tuple[int, str, str]:
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CONFIG_HOME": str(home / "config"),
    }
    result = CliRunner().invoke(cli, [str(a) for a in args], env=env)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def home(tmp_path: Path) -> Path:
    made = tmp_path / "home"
    made.mkdir()
    return made


@needs_program
def test_malformed_claude_json_refuses_before_the_hooks_file_is_written(
    sample: Path, home: Path
) -> None:
    claude = home / ".claude.json"
    claude.write_text('{"numStartups": 3,\n')
    code, out, err = _run(home, "--vault", sample, "hooks", "install", "claude-code", "--mcp")
    assert (code, out) == (1, "")
    assert err.splitlines() == [
        f"vaultkeeper: error: {claude}:2:1: not valid JSON (Expecting property name "
        "enclosed in double quotes); nothing written"
    ]
    assert sorted(p.name for p in home.iterdir()) == [".claude.json"]  # no .claude/ made
    assert claude.read_text() == '{"numStartups": 3,\n'

    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(b'{\n    "model": "opus"\n}\n')
    code, _, err = _run(home, "--vault", sample, "hooks", "install", "claude-code", "--mcp")
    assert code == 1 and str(claude) in err and len(err.splitlines()) == 1
    assert settings.read_bytes() == b'{\n    "model": "opus"\n}\n'
    assert sorted(p.name for p in settings.parent.iterdir()) == ["settings.json"]  # no backup


@needs_program
def test_malformed_codex_config_refuses_before_the_hooks_file_is_written(
    sample: Path, home: Path
) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text("[mcp_servers\nmodel = 1\n")
    code, out, err = _run(home, "--vault", sample, "hooks", "install", "codex", "--mcp")
    assert (code, out) == (1, "")
    assert len(err.splitlines()) == 1 and err.startswith(f"vaultkeeper: error: {config}")
    assert sorted(p.name for p in config.parent.iterdir()) == ["config.toml"]  # no hooks.json


@needs_program
def test_uninstall_refuses_before_the_mcp_entry_goes_when_the_hooks_file_is_bad(
    sample: Path, home: Path
) -> None:
    code, _, err = _run(home, "--vault", sample, "hooks", "install", "claude-code", "--mcp")
    assert code == 0, err
    claude = home / ".claude.json"
    registered = claude.read_bytes()
    settings = home / ".claude" / "settings.json"
    settings.write_text('{"hooks": [}')
    code, out, err = _run(home, "hooks", "uninstall", "claude-code", "--mcp")
    assert (code, out) == (1, "")
    assert err.startswith(f"vaultkeeper: error: {settings}:1:") and len(err.splitlines()) == 1
    assert claude.read_bytes() == registered
