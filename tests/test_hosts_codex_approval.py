"""`hooks install codex --mcp` approves the tools an agent may run alone, as Codex reads it.

Recorded with Codex 0.169.0 (tests/fixtures/hosts/codex-0.169.0/): in `mcp-unapproved`
the config.toml had no tool approvals and the agent's `cite` came back "MCP tool call
requires approval, but approval policy is never"; in `mcp` the same server with
`[mcp_servers.vaultkeeper.tools.TOOL] approval_mode = "approve"` reached the server.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from tests.conftest import MakeVault
from tests.host_fixtures import CODEX
from vaultkeeper import config
from vaultkeeper.cli import cli

_TOOL_TABLE = re.compile(
    r'^\[mcp_servers\.vaultkeeper\.tools\.(\w+)\]\napproval_mode = "(\w+)"$', re.M
)


def _listed_tools(traffic: Path) -> set[str]:
    """The tool names the server listed to the real Codex (tools/list in the traffic)."""
    for line in traffic.read_text().splitlines():
        result = json.loads(line)["line"].get("result", {})
        if "tools" in result:
            return {t["name"] for t in result["tools"]}
    raise AssertionError("no tools/list answer recorded")


def test_the_recorded_facts_hold() -> None:
    unapproved = "".join(p.read_text() for p in (CODEX / "mcp-unapproved").rglob("rollout-*.jsonl"))
    assert "MCP tool call requires approval, but approval policy is never" in unapproved
    assert not _TOOL_TABLE.search((CODEX / "mcp-unapproved/config/config.toml").read_text())
    approved = dict(_TOOL_TABLE.findall((CODEX / "mcp/config/config.toml").read_text()))
    assert approved["cite"] == config.CODEX_TOOL_APPROVAL
    served = "".join(p.read_text() for p in (CODEX / "mcp").rglob("rollout-*.jsonl"))
    assert '\\"counted\\":true' in served  # the approved cite reached the server


def test_install_approves_every_agent_tool_and_leaves_the_prune_to_codex_s_gate(
    make_vault: MakeVault, tmp_path: Path
) -> None:
    listed = _listed_tools(CODEX / "mcp/mcp-traffic.jsonl")
    assert set(config.MCP_AGENT_TOOLS) | set(config.MCP_PERSON_TOOLS) == listed
    assert not set(config.MCP_AGENT_TOOLS) & set(config.MCP_PERSON_TOOLS)
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    vault = make_vault()
    result = CliRunner().invoke(
        cli,
        [
            "--vault",
            str(vault),
            "hooks",
            "install",
            "codex",
            "--mcp",
            "--hooks",
            str(home / ".codex/hooks.json"),
        ],
        env={"HOME": str(home)},
    )
    assert result.exit_code == 0, result.output
    written = (home / ".codex/config.toml").read_text()
    approved = dict(_TOOL_TABLE.findall(written))
    assert approved == dict.fromkeys(config.MCP_AGENT_TOOLS, "approve")
    assert "apply_prune" not in written
    assert "apply_prune keeps Codex's approval" in result.output
