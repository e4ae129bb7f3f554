"""`hooks install claude-code|codex --recall`: the recall hook's two handlers, and back."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import MakeVault
from tests.test_hosts_hooks import HOSTS, ORIGINAL, ours, run
from vaultkeeper import config


@pytest.mark.parametrize(("host", "flag", "end_timeout"), HOSTS)
def test_recall_install_adds_prompt_and_file_tool_hooks_and_uninstall_restores_bytes(
    runner: CliRunner,
    make_vault: MakeVault,
    tmp_path: Path,
    host: str,
    flag: str,
    end_timeout: int,
) -> None:
    vault = make_vault()
    settings = tmp_path / "settings.json"
    settings.write_text(ORIGINAL)
    done = run(runner, "--vault", vault, "hooks", "install", host, flag, settings, "--recall")
    assert done.exit_code == 0, done.output
    data: dict[str, Any] = json.loads(settings.read_text())
    prompt, tool = ours(data, "UserPromptSubmit"), ours(data, "PreToolUse")
    assert len(prompt) == len(tool) == 1
    argv = shlex.split(tool[0]["command"])
    assert Path(argv[0]).name == config.RECALL_HOOK_SCRIPT
    assert argv[1:3] == [str(vault), host]
    assert tool[0]["timeout"] == config.RECALL_HOOK_TIMEOUT
    groups = data["hooks"]["PreToolUse"]
    assert groups[0] == {"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}
    assert groups[-1]["matcher"] == config.RECALL_MATCHERS[host]
    assert "matcher" not in data["hooks"]["UserPromptSubmit"][-1]
    if host == "claude-code":
        assert groups[-1]["matcher"] == "Read|Edit|Write|MultiEdit|NotebookEdit"
    installed = settings.read_bytes()
    again = run(runner, "--vault", vault, "hooks", "install", host, flag, settings, "--recall")
    assert again.exit_code == 0 and settings.read_bytes() == installed
    plain = run(runner, "--vault", vault, "hooks", "install", host, flag, settings)
    assert plain.exit_code == 0 and settings.read_bytes() == installed  # recall left alone
    gone = run(runner, "hooks", "uninstall", host, flag, settings)
    assert gone.exit_code == 0, gone.output
    assert "removed UserPromptSubmit" in gone.output and "removed PreToolUse" in gone.output
    assert settings.read_text() == ORIGINAL  # byte for byte


def test_recall_is_refused_for_cron(runner: CliRunner, make_vault: MakeVault) -> None:
    done = run(runner, "--vault", make_vault(), "hooks", "install", "cron", "--recall")
    assert done.exit_code == 2 and "--recall is for claude-code and codex" in done.output
