"""Which Claude Code settings files configure a hook able to answer an MCP dialog.

The host's dialog for a deletion (`hooks install claude-code --mcp --dialog`) is refused
while one does (hosts/elicitation.py); these are the files and forms that count.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from vaultkeeper.hosts.elicitation import CODEX_NEVER, OFF, answering, refusal

HOOK = {"hooks": [{"type": "command", "command": "answer.sh"}]}


def _env(tmp_path: Path, **more: str) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), **more}


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_nothing_configured_nothing_found_and_other_hooks_do_not_count(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    other = {"hooks": {"SessionStart": [HOOK], "Notification": [HOOK]}}
    _write(project / ".claude" / "settings.json", json.dumps(other))
    _write(tmp_path / "home" / ".claude" / "settings.json", json.dumps({"model": "x"}))
    assert answering(_env(tmp_path), project) == ()
    assert (
        refusal("Claude Code", {**_env(tmp_path), "VAULTKEEPER_MCP_DIALOG": "1"}, project) is None
    )


@pytest.mark.parametrize(
    "where",
    [
        "home/.claude/settings.json",
        "home/.claude/settings.local.json",
        "proj/.claude/settings.json",
        "proj/.claude/settings.local.json",
        ".claude/settings.json",  # a folder above the project
        "conf/settings.json",  # $CLAUDE_CONFIG_DIR
        "home/.claude/plugins/cache/market/answerer/hooks/hooks.json",
    ],
)
@pytest.mark.parametrize("event", ["Elicitation", "ElicitationResult"])
def test_an_answering_hook_anywhere_claude_code_reads_one_is_found(
    tmp_path: Path, where: str, event: str
) -> None:
    project = tmp_path / "proj" / "sub" if where.startswith(".claude") else tmp_path / "proj"
    project.mkdir(parents=True)
    found = _write(tmp_path / where, json.dumps({"hooks": {event: [HOOK]}}))
    env = (
        _env(tmp_path, CLAUDE_CONFIG_DIR=str(tmp_path / "conf"))
        if "conf/" in where
        else _env(tmp_path)
    )
    (hit,) = answering(env, project)
    assert hit.path == str(found) and "Elicitation" in hit.why
    on = {**env, "VAULTKEEPER_MCP_DIALOG": "1"}
    said = refusal("Claude Code", on, project)
    assert said is not None and str(found) in said and "person's place" in said


def test_a_file_that_cannot_be_read_is_not_ruled_out(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    bad = _write(project / ".claude" / "settings.json", '{"hooks": ')
    fifo = project / ".claude" / "settings.local.json"
    os.mkfifo(fifo)  # never opened: it would block
    odd = _write(tmp_path / "home" / ".claude" / "settings.json", '{"hooks": ["Elicitation"]}')
    found = {a.path: a.why for a in answering(_env(tmp_path), project)}
    assert found[str(bad)].startswith("cannot be read (")
    assert found[str(fifo)].startswith("cannot be read (")
    assert "cannot be ruled out" in found[str(odd)]


def test_the_opt_in_and_codex(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    assert refusal("Claude Code", _env(tmp_path), project) == OFF
    assert (
        refusal("Claude Code", {**_env(tmp_path), "VAULTKEEPER_MCP_DIALOG": "yes"}, project) == OFF
    )
    assert (
        refusal("Codex", {**_env(tmp_path), "VAULTKEEPER_MCP_DIALOG": "1"}, project) == CODEX_NEVER
    )


# Review (issue 34 item 2): an installed plugin's answering hook in the forms Claude Code
# accepts but a file-name and byte search missed: a symlinked plugin folder, a hooks file
# the manifest names (any name, even under node_modules), the event name spelled with a
# JSON escape.
@pytest.mark.parametrize("form", ["symlinked-folder", "named-hooks-file", "json-escape"])
def test_a_plugin_hook_in_any_form_claude_code_loads_is_found(tmp_path: Path, form: str) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    plugins = tmp_path / "home" / ".claude" / "plugins" / "cache" / "market"
    hooks = json.dumps({"hooks": {"Elicitation": [HOOK]}})
    if form == "symlinked-folder":  # a plugin installed as a link to its working copy
        real = tmp_path / "dev" / "answerer"
        _write(real / "hooks" / "hooks.json", hooks)
        plugins.mkdir(parents=True)
        (plugins / "answerer").symlink_to(real, target_is_directory=True)
    elif form == "named-hooks-file":  # plugin.json: "hooks": "./node_modules/x/on.json"
        root = plugins / "answerer"
        _write(
            root / ".claude-plugin" / "plugin.json",
            json.dumps({"name": "answerer", "hooks": "./node_modules/x/on.json"}),
        )
        _write(root / "node_modules" / "x" / "on.json", hooks)
    else:
        _write(
            plugins / "answerer" / "hooks" / "hooks.json",
            hooks.replace("Elicitation", "\\u0045licitation"),
        )
    found = answering(_env(tmp_path), project)
    assert found, f"an Elicitation hook in a plugin ({form}) was not found"
    on = {**_env(tmp_path), "VAULTKEEPER_MCP_DIALOG": "1"}
    assert refusal("Claude Code", on, project) is not None


def test_a_plugin_folder_that_links_to_itself_ends(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    plugins = tmp_path / "home" / ".claude" / "plugins"
    _write(plugins / "a" / "hooks" / "hooks.json", json.dumps({"hooks": {"Stop": [HOOK]}}))
    (plugins / "a" / "loop").symlink_to(plugins, target_is_directory=True)
    assert answering(_env(tmp_path), project) == ()


# Review: a settings file's "env" reaches the server (Claude Code passes it to the MCP
# servers it starts). A repository's .claude/settings.json that sets the opt-in, or moves
# the folders the check reads (CLAUDE_CONFIG_DIR, HOME: where the plugins it enabled
# live), keeps the dialog off: the opt-in is the person's, recorded in the registration.
@pytest.mark.parametrize("name", ["VAULTKEEPER_MCP_DIALOG", "CLAUDE_CONFIG_DIR", "HOME"])
def test_a_settings_env_that_sets_the_opt_in_or_moves_the_checked_folders_refuses(
    tmp_path: Path, name: str
) -> None:
    project = tmp_path / "proj"
    found = _write(
        project / ".claude" / "settings.json",
        json.dumps({"env": {name: "1" if name.startswith("VAULT") else str(tmp_path / "x")}}),
    )
    on = {**_env(tmp_path), "VAULTKEEPER_MCP_DIALOG": "1"}
    said = refusal("Claude Code", on, project)
    assert said is not None and str(found) in said and name in said
