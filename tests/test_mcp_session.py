"""The server ties a `cite` to the host's session by the ids the host sends in `_meta`.

The `_meta` of each cite is the one the real host sent (tests/fixtures/hosts/*/mcp/
mcp-traffic.jsonl): Codex 0.169.0 `sessionId`/`threadId`, Claude Code 2.1.332
`claudecode/toolUseId` (its transcript, recorded beside it, holds that tool_use id).
The case that counted twice before: a hand-run `ingest` mid-session counts the
session's use, then the agent cites the same pattern through the server.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from tests.host_fixtures import CLAUDE, CODEX, after, claude_files, rollouts
from tests.mcp_harness import params
from vaultkeeper.learn.ingest import ingest
from vaultkeeper.store.uses import read_events

NAME = "pin-test-clock"


def _count(vault: Path) -> int:
    lines = (vault / "patterns/registry.md").read_text().split("\n")
    at = lines.index(f"### {NAME}")
    return int(next(x for x in lines[at:] if x.startswith("**success count:**")).split()[-1])


def _recorded_cite(traffic: Path) -> dict[str, Any]:
    for line in traffic.read_text().splitlines():
        sent = json.loads(line)["line"]
        if sent.get("method") == "tools/call" and sent["params"]["name"] == "cite":
            return dict(sent["params"])
    raise AssertionError("no cite recorded")


def _cite(server: StdioServerParameters, sent: dict[str, Any], mode: str) -> dict[str, Any]:
    async def main() -> dict[str, Any]:
        async with Client(server, mode=mode) as client:
            meta = {k: v for k, v in sent["_meta"].items() if "/" not in k or "claudecode" in k}
            result = await client.call_tool("cite", sent["arguments"], meta=meta)
            assert not result.is_error, result.content
            return dict(result.structured_content or {})

    return anyio.run(main)


def test_codex_session_id_ties_the_cite_to_the_rollout_s_session(
    sample: Path, tmp_path: Path
) -> None:
    sent = _recorded_cite(CODEX / "mcp/mcp-traffic.jsonl")
    (rollout,) = rollouts(CODEX / "mcp")
    now = after(rollout)
    copied = Path(shutil.copy(rollout, tmp_path / rollout.name))
    before = _count(sample)
    assert ingest(sample, [copied], now).ok  # mid-session, by hand: the link counts
    assert _count(sample) == before + 1
    (tmp_path / "home").mkdir()
    out = _cite(params(sample, tmp_path / "home"), sent, "legacy")
    assert out["session"] == sent["_meta"]["sessionId"] and out["counted"] is False
    assert _count(sample) == before + 1  # the same session's use: once
    assert ingest(sample, [copied], now).ok and _count(sample) == before + 1


def test_claude_tool_use_id_finds_the_transcript_s_session(sample: Path, tmp_path: Path) -> None:
    sent = _recorded_cite(CLAUDE / "mcp/mcp-traffic.jsonl")
    (recorded,) = claude_files(CLAUDE / "mcp").values()
    now = after(recorded)
    home, project = tmp_path / "home", tmp_path / "proj"
    project.mkdir()
    # Claude Code names a project's folder by its path, every other character a dash
    folder = home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(project))
    folder.mkdir(parents=True)
    transcript = Path(shutil.copy(recorded, folder / recorded.name))
    assert f'"id":"{sent["_meta"]["claudecode/toolUseId"]}"' in transcript.read_text()
    before = _count(sample)
    assert ingest(sample, [transcript], now).ok  # mid-session, by hand
    assert _count(sample) == before + 1
    server = params(sample, home)
    server = StdioServerParameters(
        command=server.command, args=server.args, env=server.env, cwd=project
    )
    out = _cite(server, sent, "2026-07-28")
    assert out["session"] == transcript.stem and out["counted"] is False
    assert _count(sample) == before + 1
    assert [e.session for e in read_events(sample) if e.target == NAME] == [transcript.stem]
    assert ingest(sample, [transcript], now).ok and _count(sample) == before + 1
