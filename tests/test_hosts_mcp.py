"""`hooks install|uninstall|status` with --mcp: a refusal writes no file, and status says
where the MCP server is registered and for which vault."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from vaultkeeper.cli import cli
from vaultkeeper.hosts.hooks import find_program

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


@needs_program
def test_status_says_where_the_mcp_server_is_registered_and_for_which_vault(
    sample: Path, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "repo"
    project.mkdir()
    monkeypatch.chdir(project)
    claude, codex = home / ".claude.json", home / ".codex" / "config.toml"
    code, out, _ = _run(home, "hooks", "status", "claude-code")
    assert code == 0
    assert f"claude-code  mcp server vaultkeeper not registered in {claude} (user scope)" in (
        out.splitlines()
    )
    for args in (["claude-code", "--mcp"], ["claude-code", "--mcp", "--project"]):
        assert _run(home, "--vault", sample, "hooks", "install", *args)[0] == 0
    assert _run(home, "--vault", sample, "hooks", "install", "codex", "--mcp")[0] == 0
    program = json.loads(claude.read_text())["mcpServers"]["vaultkeeper"]["command"]
    command = f"{program} --vault {sample} mcp"
    code, out, _ = _run(home, "hooks", "status")
    assert code == 0
    mcp_lines = [x for x in out.splitlines() if "mcp server" in x]
    queued = "; deletions: queued for `vaultkeeper review`"
    assert mcp_lines == [
        f"claude-code  mcp server vaultkeeper in {claude} (user scope): vault {sample}: "
        f"{command}{queued}",
        f"claude-code  mcp server vaultkeeper in {project / '.mcp.json'} (project scope): "
        f"vault {sample}: {command}{queued}",
        f"codex        mcp server vaultkeeper in {codex} (user scope): vault {sample}: "
        f"{command}{queued}",
    ]
    code, out, _ = _run(home, "hooks", "status", "codex", "--json")
    assert code == 0
    assert json.loads(out)["mcp"] == [
        {
            "target": "codex",
            "scope": "user",
            "path": str(codex),
            "registered": True,
            "vault": str(sample),
            "command": command,
            "note": None,
            "dialog": False,
            "refused": None,
        }
    ]


def test_status_notes_an_unreadable_mcp_file_and_still_exits_0(home: Path) -> None:
    claude = home / ".claude.json"
    claude.write_text("{oops")
    code, out, _ = _run(home, "hooks", "status", "claude-code", "--json")
    assert code == 0
    (found,) = json.loads(out)["mcp"]
    assert (found["registered"], found["vault"]) == (False, None)
    assert found["note"].startswith(f"{claude}:1:2: not valid JSON (")
    code, out, _ = _run(home, "hooks", "status", "claude-code")
    assert code == 0
    assert f"claude-code  mcp server vaultkeeper: {claude} (user scope): {claude}:1:2: " in out


@needs_program
def test_dialog_is_an_opt_in_for_claude_code_that_status_shows_and_refuses_under_a_hook(
    sample: Path, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--dialog` records itself in the server's registration env; `hooks status` says who
    says yes to a deletion, and that an Elicitation hook of the project keeps it off;
    an install without it turns it off again."""
    project = tmp_path / "repo"
    project.mkdir()
    monkeypatch.chdir(project)
    claude = home / ".claude.json"
    code, out, err = _run(
        home, "--vault", sample, "hooks", "install", "claude-code", "--mcp", "--dialog"
    )
    assert code == 0, err
    entry = json.loads(claude.read_text())["mcpServers"]["vaultkeeper"]
    assert entry["env"] == {"VAULTKEEPER_MCP_DIALOG": "1"}
    assert "deletions: asked in Claude Code's dialog" in out and "note:" not in out
    code, out, _ = _run(home, "hooks", "status", "claude-code")
    (line,) = [x for x in out.splitlines() if "mcp server" in x]
    assert line.endswith("; deletions: asked in the host's dialog (--dialog)")
    # a checked-in project settings file with an Elicitation hook: the dialog stays off
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(
        json.dumps(
            {"hooks": {"Elicitation": [{"hooks": [{"type": "command", "command": "true"}]}]}}
        )
    )
    code, out, _ = _run(home, "hooks", "status", "claude-code", "--json")
    (found,) = json.loads(out)["mcp"]
    assert found["dialog"] is True and found["refused"] == f"{settings}: an Elicitation hook"
    code, out, _ = _run(home, "hooks", "status", "claude-code")
    assert (
        f"deletions: queued for `vaultkeeper review`: the dialog (--dialog) is refused while "
        f"{settings}: an Elicitation hook"
    ) in out
    code, out, _ = _run(
        home, "--vault", sample, "hooks", "install", "claude-code", "--mcp", "--dialog"
    )
    assert code == 0 and f"note: the dialog stays off while {settings}: an Elicitation hook" in out
    code, out, _ = _run(home, "--vault", sample, "hooks", "install", "claude-code", "--mcp")
    assert code == 0 and json.loads(claude.read_text())["mcpServers"]["vaultkeeper"]["env"] == {}
    assert "updated mcp server vaultkeeper" in out


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["codex", "--mcp", "--dialog"], "Codex answers an MCP dialog with cancel at once"),
        (["claude-code", "--dialog"], "--dialog is for claude-code --mcp"),
        (["cron", "--dialog"], "--dialog is for claude-code --mcp"),
    ],
)
def test_dialog_elsewhere_is_a_usage_error_and_writes_nothing(
    sample: Path, home: Path, args: list[str], says: str
) -> None:
    code, out, err = _run(home, "--vault", sample, "hooks", "install", *args)
    assert (code, out) == (2, "")
    assert len(err.splitlines()) == 1 and says in err
    assert sorted(p.name for p in home.iterdir()) == []
