"""apply_prune through the real `vaultkeeper mcp` at both protocol versions the hosts speak.

Claude Code 2.1.332 speaks MCP 2026-07-28 (no back-channel: recorded in
tests/fixtures/hosts/claude-code-2.1.332/mcp/mcp-traffic.jsonl, where the old server's
`elicitation/create` failed with NoBackChannelError and journaled `silence`); Codex
0.169.0 sends `initialize` with 2025-06-18 and answers `elicitation/create` itself with
decline in `codex exec` (codex-0.169.0/mcp/). The SDK's high-level Client drives both:
``mode="2026-07-28"`` answers InputRequiredResult rounds through the elicitation
callback, the handshake mode (pinned to 2025-06-18 as Codex sends it) answers
`elicitation/create`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.conftest import snapshot
from tests.mcp_harness import Person, journal, params

BLOCK = "yaml-anchor-templates"
MODES = ["2026-07-28", "2025-06-18"]
CLAUDE_TRAFFIC = Path(__file__).parent / "fixtures/hosts/claude-code-2.1.332/mcp/mcp-traffic.jsonl"
CODEX_TRAFFIC = Path(__file__).parent / "fixtures/hosts/codex-0.169.0/mcp/mcp-traffic.jsonl"


def _client(vault: Path, home: Path, mode: str, person: Person | None, pin: Any) -> Client:
    home.mkdir(parents=True, exist_ok=True)
    if mode == "2026-07-28":
        return Client(params(vault, home), mode=mode, elicitation_callback=person)
    pin.setattr("mcp.client.session.LATEST_HANDSHAKE_VERSION", mode)  # as Codex sends it
    return Client(params(vault, home), mode="legacy", elicitation_callback=person)


async def _prune(client: Client) -> dict[str, Any]:
    result = await client.call_tool("apply_prune", {"target": BLOCK})
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    return dict(result.structured_content)


def _queue(vault: Path) -> list[dict[str, Any]]:
    path = vault / "state" / "queue.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return [json.loads(line) for line in lines if line.strip()]


def _recorded_version(traffic: Path) -> str:
    """The protocol version the real host sent first (initialize or server/discover)."""
    first = json.loads(traffic.read_text().splitlines()[0])["line"]["params"]
    meta = first.get("_meta", {})
    return str(first.get("protocolVersion") or meta["io.modelcontextprotocol/protocolVersion"])


def test_the_modes_are_the_versions_the_recorded_hosts_speak() -> None:
    assert [_recorded_version(CLAUDE_TRAFFIC), _recorded_version(CODEX_TRAFFIC)] == MODES


@pytest.mark.parametrize("mode", MODES)
def test_prune_reaches_the_dialog_decline_queues_and_only_the_name_deletes(
    sample: Path, tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    person = Person(("decline", None), ("accept", "yaml-anchor"), ("accept", BLOCK))
    before = snapshot(sample)
    out: list[dict[str, Any]] = []

    async def main() -> None:
        async with _client(sample, tmp_path / "home", mode, person, monkeypatch) as client:
            for _ in range(2):
                out.append(await _prune(client))
                assert snapshot(sample) == before  # nothing deleted, nothing moved
            out.append(await _prune(client))

    anyio.run(main)
    declined, wrong, yes = out
    assert len(person.shown) == 3 and f"type {BLOCK} below" in person.shown[0].message
    # a decline no person is known to have given: said as such, queued for review
    assert (declined["outcome"], declined["exit_code"]) == ("ask", 3)
    assert declined["reason"].startswith("the host declined the dialog")
    assert "person declined" not in declined["reason"]
    assert "`vaultkeeper review`" in declined["reason"]
    asks = [q for q in _queue(sample) if q["type"] == "ask"]  # the yes below closes it
    assert [(q["action"], q["target"]) for q in asks] == [("prune", BLOCK)]
    assert wrong["outcome"] == "silence" and "'yaml-anchor'" in wrong["reason"]
    assert (
        yes["outcome"] == "act"
        and f"### {BLOCK}" not in (sample / "patterns/registry.md").read_text()
    )
    records = [r for r in journal(sample) if r["action"] == "prune"]
    assert [r["outcome"] for r in records] == ["ask", "silence", "act"]
    assert records[2]["confirmed_via"] == "mcp-elicitation"


@pytest.mark.parametrize("mode", MODES)
def test_no_dialog_queues_for_review_in_one_line_and_never_journals_silence(
    sample: Path, tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = snapshot(sample)
    out: list[dict[str, Any]] = []

    async def main() -> None:
        async with _client(sample, tmp_path / "home", mode, None, monkeypatch) as client:
            out.append(await _prune(client))
            out.append(await _prune(client))  # asked again: the same request, not a second

    anyio.run(main)
    first, again = out
    assert (first["outcome"], first["exit_code"]) == ("ask", 3)
    assert "\n" not in first["reason"] and "shows no dialog" in first["reason"]
    assert f"queued as {first['id']}" in first["reason"]
    assert f"already queued as {first['id']}" in again["reason"]
    assert snapshot(sample) == before
    assert len(_queue(sample)) == 1
    outcomes = [r["outcome"] for r in journal(sample) if r["action"] == "prune"]
    assert outcomes == ["ask", "ask"]


def test_a_dry_run_asks_nobody_at_2026_07_28(sample: Path, tmp_path: Path) -> None:
    person = Person()  # any question would pop from an empty script and fail the call

    async def main() -> dict[str, Any]:
        async with Client(
            params(sample, tmp_path / "home"), mode="2026-07-28", elicitation_callback=person
        ) as client:
            result = await client.call_tool("apply_prune", {"target": BLOCK, "dry_run": True})
            assert not result.is_error, result.content
            return dict(result.structured_content or {})

    (tmp_path / "home").mkdir()
    dry = anyio.run(main)
    assert dry["outcome"] == "act" and dry["record"].get("dry_run") is True
    assert person.shown == [] and _queue(sample) == []
