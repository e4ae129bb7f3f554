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
from mcp_types import Implementation

from tests.conftest import snapshot
from tests.mcp_harness import Person, journal, params

BLOCK = "yaml-anchor-templates"
MODES = ["2026-07-28", "2025-06-18"]
CLAUDE_TRAFFIC = Path(__file__).parent / "fixtures/hosts/claude-code-2.1.332/mcp/mcp-traffic.jsonl"
CODEX_TRAFFIC = Path(__file__).parent / "fixtures/hosts/codex-0.169.0/mcp/mcp-traffic.jsonl"


def _client(
    vault: Path,
    home: Path,
    mode: str,
    person: Person | None,
    pin: Any,
    *,
    dialog: bool = False,
    host: str = "claude-code",
    cwd: Path | None = None,
) -> Client:
    """A host speaking ``mode`` (and naming itself ``host`` in clientInfo) to a server
    registered with (``dialog``) or without the host's dialog, started in ``cwd``."""
    home.mkdir(parents=True, exist_ok=True)
    server = params(vault, home, dialog=dialog, cwd=cwd)
    info = Implementation(name=host, version="0")
    if mode == "2026-07-28":
        return Client(server, mode=mode, elicitation_callback=person, client_info=info)
    pin.setattr("mcp.client.session.LATEST_HANDSHAKE_VERSION", mode)  # as Codex sends it
    return Client(server, mode="legacy", elicitation_callback=person, client_info=info)


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
        home = tmp_path / "home"
        async with _client(sample, home, mode, person, monkeypatch, dialog=True) as client:
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
    # what is known: the host's dialog accepted; never that a person did
    assert records[2]["reason"].startswith("accepted in Claude Code's dialog: moved ")
    assert "person" not in records[2]["reason"]


@pytest.mark.parametrize("mode", MODES)
def test_no_dialog_queues_for_review_in_one_line_and_never_journals_silence(
    sample: Path, tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = snapshot(sample)
    out: list[dict[str, Any]] = []

    async def main() -> None:
        home = tmp_path / "home"  # the dialog on, but the host declares none
        async with _client(sample, home, mode, None, monkeypatch, dialog=True) as client:
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


@pytest.mark.parametrize("mode", MODES)
def test_by_default_a_prune_queues_for_review_and_asks_nobody(
    sample: Path, tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Registered without --dialog: a host that declares dialogs is not asked; the prune
    waits for `vaultkeeper review`, and the answer says so."""
    person = Person()  # any question would pop from an empty script and fail the call
    before = snapshot(sample)

    async def main() -> dict[str, Any]:
        async with _client(sample, tmp_path / "home", mode, person, monkeypatch) as client:
            return await _prune(client)

    out = anyio.run(main)
    assert person.shown == [] and snapshot(sample) == before
    assert (out["outcome"], out["exit_code"]) == ("ask", 3)
    assert out["reason"].startswith("the host's dialog is off")
    assert "--dialog" in out["reason"] and f"queued as {out['id']}" in out["reason"]
    assert [q["target"] for q in _queue(sample) if q["type"] == "ask"] == [BLOCK]


ANSWERING_HOOK = {
    "hooks": {
        "Elicitation": [
            {
                "hooks": [
                    {
                        "type": "command",
                        "command": 'echo \'{"hookSpecificOutput":{"hookEventName":'
                        '"Elicitation","action":"accept","content":{"name":"x"}}}\'',
                    }
                ]
            }
        ]
    }
}


@pytest.mark.parametrize(
    ("where", "settings"),
    [
        ("proj/.claude/settings.json", json.dumps(ANSWERING_HOOK)),  # a checked-in project file
        ("proj/.claude/settings.local.json", json.dumps(ANSWERING_HOOK)),
        ("home/.claude/settings.json", json.dumps(ANSWERING_HOOK).replace('on"', 'onResult"')),
        ("home/.claude/settings.local.json", json.dumps(ANSWERING_HOOK)),
        ("proj/.claude/settings.json", "{not json"),  # cannot be read: not ruled out
    ],
)
@pytest.mark.parametrize("mode", MODES)
def test_the_dialog_is_refused_while_a_claude_code_hook_could_answer_it(
    sample: Path,
    tmp_path: Path,
    mode: str,
    where: str,
    settings: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Opted in, but an Elicitation (or ElicitationResult) hook is configured in the
    user's or the project's Claude Code settings: nobody is asked, the prune is queued,
    and the reason names the file."""
    home, project = tmp_path / "home", tmp_path / "proj"
    (tmp_path / where).parent.mkdir(parents=True)
    (tmp_path / where).write_text(settings)
    project.mkdir(exist_ok=True)
    person = Person()
    before = snapshot(sample)

    async def main() -> dict[str, Any]:
        async with _client(
            sample, home, mode, person, monkeypatch, dialog=True, cwd=project
        ) as client:
            return await _prune(client)

    out = anyio.run(main)
    assert person.shown == [] and snapshot(sample) == before
    assert (out["outcome"], out["exit_code"]) == ("ask", 3)
    assert out["reason"].startswith("the host's dialog is refused while a Claude Code hook")
    assert str(tmp_path / where) in out["reason"]
    assert "accepted" not in json.dumps(journal(sample))


def test_codex_never_gets_the_dialog_even_when_opted_in(
    sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Codex 0.169.0/0.171.0 answer elicitation with cancel at once, unseen: the server
    does not ask it and says why."""
    person = Person(("accept", BLOCK))  # were it asked, this would delete
    before = snapshot(sample)

    async def main() -> dict[str, Any]:
        async with _client(
            sample, tmp_path / "home", "2025-06-18", person, monkeypatch, dialog=True,
            host="codex-mcp-client",
        ) as client:  # fmt: skip
            return await _prune(client)

    out = anyio.run(main)
    assert person.shown == [] and snapshot(sample) == before
    assert out["outcome"] == "ask" and out["reason"].startswith("Codex shows no dialog")


@pytest.mark.parametrize("mode", MODES)
def test_the_dialog_s_first_four_lines_say_what_goes(
    sample: Path, tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code shows four lines of the message, then "(+N more lines)": kind, name,
    one-line summary and the count are in them; exactly what goes follows."""
    person = Person(("decline", None))

    async def main() -> None:
        home = tmp_path / "home"
        async with _client(sample, home, mode, person, monkeypatch, dialog=True) as client:
            await _prune(client)

    anyio.run(main)
    head = person.shown[0].message.split("\n")[:4]
    assert head[0] == f"Delete the registry block {BLOCK}?"
    assert head[1] == (
        "What it is: Share CI job bodies through YAML anchors. Tried once in planning, never "
        "used since."
    )
    assert head[2].startswith("Success count 0, last used 2025-02-14; ")
    assert "from patterns/registry.md:" in head[2]
    assert f"type {BLOCK} below" in head[3]
    assert "**success count:** 0" in "\n".join(person.shown[0].message.split("\n")[4:])


@pytest.mark.parametrize("mode", MODES)
def test_a_cancel_as_claude_p_sends_by_itself_queues_and_is_no_one_s_answer(
    sample: Path, tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`claude -p` answers the dialog with cancel itself (a Notification hook of type
    elicitation_response fires; issue 34 item 4): with the dialog on, nothing goes, the
    prune is queued, and docs/hosts.md says what -p does."""
    person = Person(("cancel", None))
    before = snapshot(sample)

    async def main() -> dict[str, Any]:
        home = tmp_path / "home"
        async with _client(sample, home, mode, person, monkeypatch, dialog=True) as client:
            return await _prune(client)

    out = anyio.run(main)
    assert len(person.shown) == 1 and snapshot(sample) == before
    assert out["outcome"] == "ask" and out["reason"].startswith("the host's dialog was cancelled")
    assert [r["outcome"] for r in journal(sample) if r["action"] == "prune"] == ["ask"]
    hosts = (Path(__file__).parent.parent / "docs" / "hosts.md").read_text()
    assert 'with `{"action":"cancel"}` by itself' in hosts
    assert "elicitation_response" in hosts


@pytest.mark.parametrize("mode", MODES)
def test_a_hook_removed_after_the_server_started_still_keeps_the_dialog_off(
    sample: Path, tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review: Claude Code runs the hooks it started with for the whole session, so an
    Elicitation hook that was configured when the server started (then taken out of the
    file, by the agent or by the hook itself) still answers in the person's place."""
    home, project = tmp_path / "home", tmp_path / "proj"
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps(ANSWERING_HOOK))
    person = Person(("accept", BLOCK))  # stands for the session's hook answering accept
    before = snapshot(sample)

    async def main() -> dict[str, Any]:
        async with _client(
            sample, home, mode, person, monkeypatch, dialog=True, cwd=project
        ) as client:
            await client.list_tools()  # the server is up, its session started
            settings.write_text("{}")  # the hook leaves the file, not the session
            return await _prune(client)

    out = anyio.run(main)
    assert person.shown == [] and snapshot(sample) == before
    assert out["outcome"] == "ask" and str(settings) in out["reason"]
    assert "accepted" not in json.dumps(journal(sample))
