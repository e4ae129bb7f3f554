"""The plugins under plugins/ and their marketplaces have the shape the hosts' code requires.

What each host requires, as read in its code (Claude Code 2.1.197's bundled manifest schema;
Codex 0.171's codex-rs/core-plugins manifest.rs, marketplace.rs, loader.rs), and checked
by the hosts themselves in the recording (tests/test_plugins_recorded.py): `claude plugin
validate` passed on each, and both hosts installed them. The hooks each plugin registers
are the ones `hooks install` writes: same events, timeouts and matchers.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from vaultkeeper import config
from vaultkeeper.hosts import plugins as hostplugins
from vaultkeeper.learn.transcripts import vault_tool

REPO = Path(__file__).resolve().parent.parent
PLUGINS = REPO / "plugins"
NAMES = hostplugins.NAMES
KEBAB = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
# Claude Code's zod schema: userConfig keys become CLAUDE_PLUGIN_OPTION_<KEY> env vars
OPTION_KEY = re.compile(r"^[A-Za-z_]\w*$")
OPTION_TYPES = {"string", "number", "boolean", "directory", "file"}
CLAUDE_EVENTS = {"SessionStart", "SessionEnd", "UserPromptSubmit", "PreToolUse"}
CODEX_INSTALL = {"NOT_AVAILABLE", "AVAILABLE", "INSTALLED_BY_DEFAULT"}
CODEX_AUTH = {"ON_INSTALL", "ON_USE"}
LAUNCHER = '"${CLAUDE_PLUGIN_ROOT}/scripts/vaultkeeper-hook"'


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def version() -> str:
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    found = re.search(r'^version = "([^"]+)"', text, re.M)
    assert found
    return found.group(1)


def relative(root: Path, raw: str) -> Path:
    """A manifest path as both hosts take it: `./` first, no `..`, inside the plugin."""
    assert raw.startswith("./") and raw != "./", raw
    assert ".." not in Path(raw).parts, raw
    path = (root / raw).resolve()
    assert path.is_relative_to(root.resolve()), raw
    return path


def handlers(hooks: dict[str, Any]) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    return [(e, g, h) for e, groups in hooks["hooks"].items() for g in groups for h in g["hooks"]]


@pytest.mark.parametrize("name", NAMES)
def test_claude_manifest(name: str) -> None:
    root = PLUGINS / name
    m = load(root / ".claude-plugin" / "plugin.json")
    assert m["name"] == name and KEBAB.match(name)
    assert m["version"] == version()
    hooks = load(relative(root, m["hooks"]))
    assert set(hooks) == {"hooks"}
    for event, group, handler in handlers(hooks):
        assert event in CLAUDE_EVENTS
        assert set(group) <= {"matcher", "hooks"}
        assert handler["type"] == "command" and isinstance(handler["timeout"], int)
        assert handler["command"].startswith(LAUNCHER + " claude-code ")
    for key, option in m.get("userConfig", {}).items():
        assert OPTION_KEY.match(key)
        assert option["type"] in OPTION_TYPES
        assert option["title"] and option["description"]  # both required by the schema
    for server in m.get("mcpServers", {}).values():
        command = server["command"].replace("${CLAUDE_PLUGIN_ROOT}", str(root))
        assert os.access(command, os.X_OK), command
        # a ${user_config.KEY} reference must name a declared option
        for ref in re.findall(r"\$\{user_config\.([^}]+)\}", json.dumps(server)):
            assert ref in m["userConfig"]


@pytest.mark.parametrize("name", NAMES)
def test_codex_manifest(name: str) -> None:
    root = PLUGINS / name
    m = load(root / ".codex-plugin" / "plugin.json")
    assert m["name"] == name and m["version"] == version()
    for field in ("skills", "hooks"):
        if field in m:
            assert relative(root, m[field]).exists()
    hooks = load(relative(root, m["hooks"]))
    for _event, _group, handler in handlers(hooks):
        assert handler["command"].startswith(LAUNCHER + " codex ")
    interface = m["interface"]
    assert interface["displayName"] and interface["shortDescription"]
    assert set(m) <= {
        "name", "version", "description", "author", "license", "keywords", "skills",
        "mcpServers", "apps", "hooks", "interface",
    }  # fmt: skip
    if name == "vaultkeeper":
        server = m["mcpServers"][config.MCP_SERVER_NAME]
        assert server["command"] == "vaultkeeper" and server["args"] == ["mcp"]
        assert server["env_vars"] == [config.ENV_VAULT]  # Codex passes only named variables


def test_marketplaces_list_both_plugins_at_their_paths() -> None:
    claude = load(REPO / ".claude-plugin" / "marketplace.json")
    assert claude["name"] == "vaultkeeper" and claude["owner"]["name"]
    assert [p["name"] for p in claude["plugins"]] == list(NAMES)
    for entry in claude["plugins"]:
        root = relative(REPO, entry["source"])
        assert load(root / ".claude-plugin" / "plugin.json")["name"] == entry["name"]
    codex = load(REPO / ".agents" / "plugins" / "marketplace.json")
    assert codex["name"] == claude["name"]  # one plugin id, name@vaultkeeper, in both
    assert [p["name"] for p in codex["plugins"]] == list(NAMES)
    for entry in codex["plugins"]:
        assert entry["source"]["source"] == "local"
        root = relative(REPO, entry["source"]["path"])
        assert load(root / ".codex-plugin" / "plugin.json")["name"] == entry["name"]
        assert entry["policy"]["installation"] in CODEX_INSTALL
        assert entry["policy"]["authentication"] in CODEX_AUTH


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_plugin_hooks_are_the_ones_hooks_install_writes(host: str) -> None:
    session = load(PLUGINS / "vaultkeeper" / "hooks" / f"{host}.json")
    end = {
        "claude-code": config.CLAUDE_SESSION_END_TIMEOUT,
        "codex": config.CODEX_SESSION_END_TIMEOUT,
    }[host]
    want = {
        "SessionStart": (f"{LAUNCHER} {host} session-start", config.SESSION_START_TIMEOUT, None),
        "SessionEnd": (f"{LAUNCHER} {host} session-end", end, None),
    }
    got = {e: (h["command"], h["timeout"], g.get("matcher")) for e, g, h in handlers(session)}
    assert got == want
    recall = load(PLUGINS / "vaultkeeper-recall" / "hooks" / f"{host}.json")
    got = {e: (h["command"], h["timeout"], g.get("matcher")) for e, g, h in handlers(recall)}
    command = f"{LAUNCHER} {host} recall"
    assert got == {
        config.RECALL_HOOK_EVENTS[0]: (command, config.RECALL_HOOK_TIMEOUT, None),
        config.RECALL_HOOK_EVENTS[1]: (
            command, config.RECALL_HOOK_TIMEOUT, config.RECALL_MATCHERS[host],
        ),
    }  # fmt: skip


def test_launcher_is_one_script_in_both_plugins_and_in_step_with_config() -> None:
    texts = [(PLUGINS / n / hostplugins.LAUNCHER).read_bytes() for n in NAMES]
    assert texts[0] == texts[1]
    text = texts[0].decode("ascii")  # pure ASCII
    assert hostplugins.MARKER in text.splitlines()[1]
    names = dict(re.findall(r"(\w+)=(\S+)", text.split("Names repeated", 1)[1].splitlines()[1]))
    assert names == {
        "ENV_VAULT": config.ENV_VAULT,
        "HOOK_LOG_FILE": config.HOOK_LOG_FILE,
        "DIST_NAME": config.DIST_NAME,
    }
    assert f"${{{config.ENV_VAULT}:-" in text and config.DIST_NAME in text
    for n in NAMES:
        for script in (PLUGINS / n / "scripts").iterdir():
            assert os.access(script, os.X_OK), script


def test_skill_tells_how_to_cite_and_record() -> None:
    text = (PLUGINS / "vaultkeeper" / "skills" / "vaultkeeper" / "SKILL.md").read_text("ascii")
    head, body = text.split("---\n")[1:3]
    fields = dict(line.split(": ", 1) for line in head.strip().splitlines())
    assert fields["name"] == "vaultkeeper" and len(fields["description"]) < 1024
    assert "[[patterns/registry#NAME]]" in body  # the form ingest counts (report --brief says it)
    assert "new_lesson" in body and "new memory NAME" in body and "`cite`" in body


def test_the_plugin_mcp_tool_names_count_as_the_vault_s() -> None:
    # Claude Code names a plugin's server plugin_<plugin>_<server> (recorded)
    assert vault_tool("mcp__plugin_vaultkeeper_vaultkeeper__cite") == "cite"
    assert vault_tool("mcp__vaultkeeper__cite") == "cite"
    assert vault_tool("mcp__plugin_other_vaultkeeper__cite") is None
    assert vault_tool("mcp__plugin_vaultkeeper_other__cite") is None
