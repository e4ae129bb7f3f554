"""The vault's MCP tools are there on a session's first turn, in both real hosts.

tools/hosts/record.py's `mcp` scenario starts each host with `vaultkeeper mcp` registered
by `hooks install <host> --mcp` and no server running: a cold start (a new process; the
server keeps nothing between starts). The recorded model requests show what the host put
in front of the model: the first request of the turn must already offer every tool the
server listed (Claude Code: as deferred tools by name, `mcp__vaultkeeper__<tool>`; Codex:
the `mcp__vaultkeeper` namespace among its deferred tool namespaces). The scenario
`mcp-sdk-alone` is the same run with the server's front off (the SDK alone answers,
after its import): Codex began that turn without the namespace, and its tool search
found nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.host_fixtures import CLAUDE, CODEX


def _requests(scenario: Path) -> list[dict[str, Any]]:
    """The model requests of the scenario (the mock's own notes between them left out)."""
    rows = (json.loads(x) for x in (scenario / "model-requests.jsonl").read_text().splitlines())
    return [row["body"] for row in rows if isinstance(row.get("body"), dict)]


def _listed(scenario: Path) -> list[str]:
    """The tools the server listed to the host, from the recorded MCP traffic (the first)."""
    for raw in (scenario / "mcp-traffic.jsonl").read_text().splitlines():
        line = json.loads(raw).get("line")
        if isinstance(line, dict) and "tools" in (line.get("result") or {}):
            return [tool["name"] for tool in line["result"]["tools"]]
    raise AssertionError(f"{scenario}: the server never listed its tools")


def _first_turn(scenario: Path, prompt: str) -> str:
    """The first model request carrying the scenario's prompt, as text."""
    for body in _requests(scenario):
        text = json.dumps(body)
        if prompt in text:
            return text
    raise AssertionError(f"{scenario}: no model request with {prompt!r}")


def test_claude_code_offers_every_vaultkeeper_tool_on_the_first_turn() -> None:
    scenario = CLAUDE / "mcp"
    listed = _listed(scenario)
    assert len(listed) == 13 and "recall" in listed
    first = _first_turn(scenario, "VKSCN:mcp")
    deferred = first[first.index("deferred tools are now available") :]
    for tool in listed:
        assert f"\\nmcp__vaultkeeper__{tool}\\n" in deferred, tool


def _codex_first_turn(scenario: Path) -> tuple[bool, bool]:
    """(the first request lists the mcp__vaultkeeper namespace, the turn's tool search
    returned it)."""
    assert len(_listed(scenario)) == 13
    first = _first_turn(scenario, "VKSCN:mcp")
    namespaces = first[first.index("Deferred tool namespaces:") :].split("</tools>")[0]
    offered = "\\n- mcp__vaultkeeper: vaultkeeper keeps this user's markdown memory" in namespaces
    later = "".join(json.dumps(body) for body in _requests(scenario))
    assert '"type": "tool_search_output"' in later
    found = '{"type": "namespace", "name": "mcp__vaultkeeper", "tools": ["' in later
    return offered, found


def test_codex_offers_the_vaultkeeper_namespace_on_the_first_turn() -> None:
    assert _codex_first_turn(CODEX / "mcp") == (True, True)


def test_codex_without_the_front_starts_the_turn_without_the_tools() -> None:
    """Why the front is there: the SDK alone answered initialize after its import."""
    assert _codex_first_turn(CODEX / "mcp-sdk-alone") == (False, False)
