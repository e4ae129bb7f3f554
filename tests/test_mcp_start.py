"""`vaultkeeper mcp` with the front (start.py) against the plain SDK path: the same answers.

Each conversation runs three ways on fresh copies of the vault: the plain SDK path
(VAULTKEEPER_MCP_PLAIN=1), a first start (no saved answers: the SDK answers all and its
opening answers are saved) and a second start (the front answers the opening). The hosts'
recorded openings (tests/fixtures/hosts/*/*/mcp-traffic.jsonl) are replayed so, and
the fallbacks: an unknown method, a batch, a malformed line, another protocol version,
requests before the handshake's answer, a cancellation, the end of stdin mid-handshake.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp_harness import TODAY, program

pytest.importorskip("mcp")
HOSTS = Path(__file__).parent / "fixtures" / "hosts"
BOUND = 120.0  # a safety bound for a loaded machine, not a timing check
Message = dict[str, Any]


def handshakes(scenario: str) -> list[list[Message | int | str]]:
    """Each recorded session's lines up to its first tool call, in order; an id between
    them: the host waited for that answer (a file holds a session per server start)."""
    path = HOSTS / scenario / "mcp-traffic.jsonl"
    sessions: list[list[Message | int | str]] = []
    last, stop = None, False
    for row in (json.loads(line) for line in path.read_text().splitlines() if line.strip()):
        if last is None or row["t"] < last:
            sessions.append([])
            stop = False
        last, line = row["t"], row["line"]
        if row["dir"] == "host->server":
            stop = stop or line.get("method") == "tools/call"
            if not stop:
                sessions[-1].append(line)
        elif line.get("id") is not None and not stop:
            sessions[-1].append(line["id"])
    return sessions


def talk(vault: Path, home: Path, steps: list[Any], plain: bool = False) -> dict[str, Any]:
    """Send the steps (a message, a raw line as bytes, or an id to wait for); then EOF."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / "cache"),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "VAULTKEEPER_TODAY": TODAY,
    }
    if plain:
        env["VAULTKEEPER_MCP_PLAIN"] = "1"
    proc = subprocess.Popen(
        [*program(), "mcp", "--vault", str(vault)], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    got: list[Message] = []
    try:
        for step in steps:
            if isinstance(step, bytes):
                proc.stdin.write(step)
                proc.stdin.flush()
            elif isinstance(step, dict):
                proc.stdin.write((json.dumps(step) + "\n").encode())
                proc.stdin.flush()
            else:
                while step not in [m.get("id") for m in got]:
                    line = proc.stdout.readline()
                    assert line, f"the server ended before answering {step!r}"
                    got.append(json.loads(line))
        proc.stdin.close()
        got += [json.loads(line) for line in proc.stdout.read().splitlines()]
        code = proc.wait(timeout=BOUND)
    finally:
        if proc.poll() is None:
            proc.kill()
    return {"answers": got, "code": code, "err": proc.stderr.read().decode()}


def three_ways(sample: Path, tmp_path: Path, steps: list[Any]) -> list[dict[str, Any]]:
    """plain, first start, second start: each on a fresh copy of the vault (one path)."""
    runs = []
    home, vault = tmp_path / "home", tmp_path / "vault"
    for plain in (True, False, False):
        shutil.rmtree(vault, ignore_errors=True)
        shutil.copytree(sample, vault, symlinks=True)
        runs.append(talk(vault, home, steps, plain=plain))
    return runs


def _same(runs: list[dict[str, Any]], more: bool = False) -> None:
    """The same answers as the plain path; ``more``: the front may have answered more."""

    def by_id(run: dict[str, Any]) -> dict[str, Any]:
        return {json.dumps(m.get("id")): m for m in run["answers"] if "id" in m}

    plain = runs[0]
    for run in runs[1:]:
        assert run["code"] == plain["code"], run["err"]
        assert run["err"] == plain["err"]
        mine, theirs = by_id(run), by_id(plain)
        if more:  # at the end of stdin the SDK drops the requests still running
            mine = {k: v for k, v in mine.items() if k in theirs}
        assert mine == theirs  # as JSON values: the bytes' meaning, member order aside
        notes = [m for m in run["answers"] if "id" not in m]
        assert notes == [m for m in plain["answers"] if "id" not in m]


def _saved(tmp_path: Path) -> dict[str, Any]:
    file = tmp_path / "home/cache/vaultkeeper/mcp-answers.json"
    if not file.exists():
        return {}
    keys = json.loads(file.read_text())["keys"]
    assert len(keys) == 1
    return dict(next(iter(keys.values())))


# every distinct opening the hosts recorded (the other scenarios repeat these)
RECORDED = {
    "claude-code-2.1.332/mcp": 1,  # discover; listen; discover, prompts, resources, tools
    "claude-code-2.1.332/mcp-list": 1,  # `claude mcp list`: discover; listen; tools/list
    "claude-code-2.1.332/stream-json": 1,  # prompts/list waited for, then the others
    "claude-code-2.1.332/recall": 1,  # a slow probe, initialize after it; then the end
    "codex-0.169.0/mcp": 2,  # initialize; initialized, tools/list
    "codex-0.169.0/recall": 1,  # initialize only: the session ended before its answer
}


@pytest.mark.parametrize("scenario", sorted(RECORDED))
def test_the_recorded_handshakes_get_the_sdks_answers(
    sample: Path, tmp_path: Path, scenario: str
) -> None:
    steps = handshakes(scenario)[0]
    waited = any(not isinstance(step, dict) for step in steps)
    runs = three_ways(sample, tmp_path, steps)
    _same(runs, more=not waited)  # unwaited, the SDK may drop what it had not answered
    saved = _saved(tmp_path)  # a Claude Code opening ends at its listen
    assert len(saved) == RECORDED[scenario] or (not waited and len(saved) < RECORDED[scenario])


CLIENT = {"name": "t", "version": "1"}
INIT = {
    "jsonrpc": "2.0", "id": 0, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": CLIENT},
}  # fmt: skip
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
RECALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
          "params": {"name": "recall", "arguments": {"project": "api"}}}  # fmt: skip
CODEX_LIKE = [INIT, 0, INITIALIZED, LIST, 1]


def test_a_second_start_answers_from_the_saved_answers_and_checks_them(
    sample: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    first = talk(sample, home, CODEX_LIKE)
    saved = tmp_path / "home/cache/vaultkeeper/mcp-answers.json"
    data = json.loads(saved.read_text())
    ((key, answers),) = data["keys"].items()
    opening = next(k for k in answers if "\n" not in k)
    answers[opening]["instructions"] = "tampered"  # as if the saved answers were out of date
    saved.write_text(json.dumps(data))
    second = talk(sample, home, CODEX_LIKE)
    assert second["answers"][0]["result"]["instructions"] == "tampered"  # the front's answer
    assert second["answers"][1:] == first["answers"][1:]
    assert second["err"] == "vaultkeeper: the saved MCP answers were out of date; forgotten\n"
    assert opening not in json.loads(saved.read_text())["keys"][key]  # forgotten
    third = talk(sample, home, CODEX_LIKE)  # the SDK answers it, and it is saved again
    assert third["answers"] == first["answers"] and third["err"] == ""
    assert json.loads(saved.read_text())["keys"][key][opening] == first["answers"][0]["result"]


FALLBACKS = {
    "unknown method first": [{"jsonrpc": "2.0", "id": 9, "method": "vendor/x"}, 9, *CODEX_LIKE],
    "a batch": [b"[" + json.dumps(INIT).encode() + b"]\n", {**INIT, "id": 3}, 3, LIST, 1],
    "a malformed line": [b"{not json\n", *CODEX_LIKE],
    "a member twice": [json.dumps(INIT)[:-1].encode() + b', "method": "tools/list"}\n', 0, LIST, 1],
    "another protocol version": [
        {**INIT, "params": {**INIT["params"], "protocolVersion": "2024-11-05"}}, 0, INITIALIZED,
        LIST, 1,
    ],
    "a request before initialize": [LIST, 1, *CODEX_LIKE],
    "requests before the answer to initialize": [INIT, INITIALIZED, LIST, RECALL, 0, 1, 2],
    "a cancellation": [
        INIT, 0, INITIALIZED, LIST,
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
        RECALL, 2,
    ],
    "the end of stdin after initialize": [INIT],
    "the end of stdin after tools/list": [INIT, INITIALIZED, LIST],
}  # fmt: skip
# the plain path, at the end of stdin, drops a tools/list it had not answered; the front
# may have answered it already (a host that waits for its answers sees no difference)
ANSWERS_MORE = {"the end of stdin after tools/list"}


@pytest.mark.parametrize("case", sorted(FALLBACKS))
def test_what_the_front_does_not_know_gets_the_sdks_own_answers(
    sample: Path, tmp_path: Path, case: str
) -> None:
    talk(sample, tmp_path / "home", CODEX_LIKE)  # the saved answers of a plain handshake
    _same(three_ways(sample, tmp_path, FALLBACKS[case]), more=case in ANSWERS_MORE)


async def _client_session(vault: Path, home: Path, version: str, plain: bool) -> dict[str, Any]:
    """The SDK's own client at ``version``: the handshake, the lists and a recall."""
    import mcp_types as types
    from mcp import ClientSession, StdioServerParameters, stdio_client

    env = {"HOME": str(home), "XDG_CACHE_HOME": str(home / "cache"), "VAULTKEEPER_TODAY": TODAY}
    if plain:
        env["VAULTKEEPER_MCP_PLAIN"] = "1"
    first, *rest = program()
    params = StdioServerParameters(
        command=first, args=[*rest, "mcp", "--vault", str(vault)], env=env
    )
    home.mkdir(parents=True, exist_ok=True)
    with (home / "server-stderr.log").open("a") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            if version == "2026-07-28":
                opened: Any = await session.discover()
            else:
                opened = await session.send_request(
                    types.InitializeRequest(
                        params=types.InitializeRequestParams(
                            protocol_version=version,
                            capabilities=types.ClientCapabilities(),
                            client_info=types.Implementation(name="t", version="1"),
                        )
                    ),
                    types.InitializeResult,
                )
                session.adopt(opened)
                await session.send_notification(types.InitializedNotification())
            got = {
                "opened": opened,
                "tools": await session.list_tools(),
                "resources": await session.list_resources(),
                "templates": await session.list_resource_templates(),
                "prompts": await session.list_prompts(),
                "recall": await session.call_tool("recall", {"project": "api"}),
            }
            return {k: v.model_dump(mode="json") for k, v in got.items()}


@pytest.mark.parametrize("version", ["2026-07-28", "2025-06-18"])
def test_the_sdks_client_gets_the_same_answers_with_the_front(
    sample: Path, tmp_path: Path, version: str
) -> None:
    import anyio

    home = tmp_path / "home"
    runs = [
        anyio.run(_client_session, sample, home, version, plain) for plain in (True, False, False)
    ]
    assert runs[1] == runs[0] and runs[2] == runs[0]
    assert runs[0]["opened"]["instructions"].startswith("vaultkeeper keeps")
    assert len(runs[0]["tools"]["tools"]) == 13 and not runs[0]["recall"]["is_error"]
    saved = _saved(tmp_path)
    assert json.dumps(version) in next(iter(saved))  # the opening was saved, at its version


def test_the_answers_saved_are_the_same_for_every_vault(
    sample: Path, make_vault: Any, tmp_path: Path
) -> None:
    """The saved answers are keyed by the install, not the vault: so the requests the front
    answers (answers.ANSWERED) must not depend on it. Claude Code's opening lists them."""
    from vaultkeeper.mcp.answers import ANSWERED

    steps = handshakes("claude-code-2.1.332/mcp")[0]
    asked = {step["id"]: step["method"] for step in steps if isinstance(step, dict)}
    assert (
        {"server/discover", "prompts/list", "resources/list", "tools/list"}
        <= set(asked.values())
        <= ANSWERED | {"subscriptions/listen"}
    )
    empty = make_vault({}, init=True)
    runs = [talk(vault, tmp_path / "home", steps, plain=True) for vault in (sample, empty)]
    answered = [{m["id"]: m for m in run["answers"] if m.get("id") in asked} for run in runs]
    assert answered[0] == answered[1]
    assert {i for i, m in asked.items() if m in ANSWERED} <= set(answered[0])
