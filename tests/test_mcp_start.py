"""`vaultkeeper mcp` with the front (start.py) against the plain SDK path: the same answers.

Each conversation runs two ways on fresh copies of the vault: the plain SDK path
(VAULTKEEPER_MCP_PLAIN=1) and the usual start (the front answers the opening from the
shipped answers while the SDK loads, then hands over). The hosts' recorded openings
(tests/fixtures/hosts/*/*/mcp-traffic.jsonl) are replayed so, and the fallbacks: an
unknown method, a batch, a malformed line, another protocol version, requests before the
handshake's answer, a cancellation, the end of stdin mid-handshake. And with the SDK's
import held until the test lets it go, every opening a host sends is answered: by the
front, without the SDK.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
from mcp_harness import TODAY, program

pytest.importorskip("mcp")
HOSTS = Path(__file__).parent / "fixtures" / "hosts"
BOUND = 120.0  # a safety bound for a loaded machine, not a timing check
Message = dict[str, Any]
RELEASE = "release the SDK"  # a step: the held SDK import goes on
ACK = "notifications/subscriptions/acknowledged"


def _key(message: Message) -> Any:
    """What a step waits for: a response's id, or a listen's acknowledgement (by its id)."""
    if message.get("method") == ACK:
        return ("ack", message["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"])
    return message.get("id")


HOLD = """\
import os, sys
class _Hold:
    def find_spec(self, name, path=None, target=None):
        if name == "mcp":
            sys.meta_path.remove(self)
            with open(os.environ["VK_TEST_HOLD_SDK"]) as fifo:  # blocks until written
                fifo.read()
        return None
if os.environ.get("VK_TEST_HOLD_SDK"):
    sys.meta_path.insert(0, _Hold())
"""


def hold_sdk(tmp_path: Path) -> Path:
    """A FIFO the server's ``import mcp`` waits on (a sitecustomize on PYTHONPATH)."""
    folder = tmp_path / "hold"
    folder.mkdir(exist_ok=True)
    (folder / "sitecustomize.py").write_text(HOLD)
    fifo = folder / "sdk-import"
    if not fifo.exists():
        os.mkfifo(fifo)
    return fifo


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
        elif line.get("method") == ACK and not stop:
            sessions[-1].append(_key(line))
    return sessions


def talk(
    vault: Path, home: Path, steps: list[Any], plain: bool = False, held: Path | None = None
) -> dict[str, Any]:
    """Send the steps (a message, a raw line as bytes, or an id to wait for); then EOF.
    ``held``: the SDK's import waits until the test writes to this FIFO (hold_sdk)."""
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
    if held is not None:
        env["PYTHONPATH"] = str(held.parent)
        env["VK_TEST_HOLD_SDK"] = str(held)
    proc = subprocess.Popen(
        [*program(), "mcp", "--vault", str(vault)], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    got: list[Message] = []
    # a safety bound, not a timing check: a server that never answers (a held SDK and no
    # front) is killed, so the wait below ends and the test fails instead of hanging
    watchdog = threading.Timer(BOUND, _stop, (proc, held))
    watchdog.start()
    try:
        for step in steps:
            if isinstance(step, bytes):
                proc.stdin.write(step)
                proc.stdin.flush()
            elif isinstance(step, dict):
                proc.stdin.write((json.dumps(step) + "\n").encode())
                proc.stdin.flush()
            elif step == RELEASE:
                if held is not None:
                    held.write_text("go\n")  # the FIFO: the SDK's import goes on
            else:
                while step not in [_key(m) for m in got]:
                    line = proc.stdout.readline()
                    assert line, f"the server ended before answering {step!r}"
                    got.append(json.loads(line))
        proc.stdin.close()
        got += [json.loads(line) for line in proc.stdout.read().splitlines()]
        code = proc.wait(timeout=BOUND)
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
    return {"answers": got, "code": code, "err": proc.stderr.read().decode()}


def _stop(proc: subprocess.Popen[bytes], held: Path | None) -> None:
    """The watchdog's: kill the server, and free a test waiting to write to the FIFO."""
    proc.kill()
    if held is not None:
        os.close(os.open(held, os.O_RDONLY | os.O_NONBLOCK))


def two_ways(sample: Path, tmp_path: Path, steps: list[Any]) -> list[dict[str, Any]]:
    """plain, then with the front: each on a fresh copy of the vault (one path)."""
    runs = []
    home, vault = tmp_path / "home", tmp_path / "vault"
    for plain in (True, False):
        shutil.rmtree(vault, ignore_errors=True)
        shutil.copytree(sample, vault, symlinks=True)
        runs.append(talk(vault, home, steps, plain=plain))
    return runs


def _same(runs: list[dict[str, Any]], more: bool = False) -> None:
    """The same answers as the plain path; ``more``: the front may have answered more."""

    def by_id(run: dict[str, Any]) -> dict[str, Any]:
        return {json.dumps(m.get("id")): m for m in run["answers"] if "id" in m}

    plain, run = runs
    assert run["code"] == plain["code"], run["err"]
    assert run["err"] == plain["err"]
    mine, theirs = by_id(run), by_id(plain)
    if more:  # at the end of stdin the SDK drops the requests still running
        mine = {k: v for k, v in mine.items() if k in theirs}
    assert mine == theirs  # as JSON values: the bytes' meaning, member order aside
    notes = [m for m in run["answers"] if "id" not in m]
    theirs_notes = [m for m in plain["answers"] if "id" not in m]
    if more:  # likewise a listen's acknowledgement the SDK had not sent when stdin ended
        assert all(m in notes for m in theirs_notes)
    else:
        assert notes == theirs_notes


def _openings() -> dict[str, list[Message | int | str]]:
    """Every distinct opening the hosts recorded (methods and versions), by one scenario."""
    found: dict[str, tuple[str, list[Message | int | str]]] = {}
    for path in sorted(HOSTS.glob("*/*/mcp-traffic.jsonl")):
        scenario = f"{path.parent.parent.name}/{path.parent.name}"
        for steps in handshakes(scenario)[:1]:
            shape = json.dumps([
                (s.get("method"), (s.get("params") or {}).get("protocolVersion"))
                if isinstance(s, dict) else "wait" for s in steps
            ])  # fmt: skip
            found.setdefault(shape, (scenario, steps))
    return dict(found.values())


RECORDED = _openings()


@pytest.mark.parametrize("scenario", sorted(RECORDED))
def test_the_recorded_handshakes_get_the_sdks_answers(
    sample: Path, tmp_path: Path, scenario: str
) -> None:
    steps = RECORDED[scenario]
    waited = any(not isinstance(step, dict) for step in steps)
    _same(two_ways(sample, tmp_path, steps), more=not waited)


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
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    "io.modelcontextprotocol/clientInfo": CLIENT,
}
PROBE = {"jsonrpc": "2.0", "id": "probe", "method": "server/discover",
         "params": {"_meta": ENVELOPE}}  # fmt: skip
LISTEN = {"jsonrpc": "2.0", "id": "listen:0", "method": "subscriptions/listen",
          "params": {"_meta": ENVELOPE, "notifications": {
              "toolsListChanged": True, "promptsListChanged": True,
              "resourcesListChanged": True}}}  # fmt: skip
CLAUDE_LIKE = [
    PROBE, "probe", LISTEN, ("ack", "listen:0"), {**PROBE, "id": 0},
    *({"jsonrpc": "2.0", "id": n, "method": m, "params": {"_meta": ENVELOPE}}
      for n, m in enumerate(("prompts/list", "resources/list", "tools/list"), 1)),
    0, 1, 2, 3,
]  # fmt: skip
HANDSHAKES = {
    "initialize 2025-06-18 (Codex)": CODEX_LIKE,
    "initialize 2025-11-25": [
        {**INIT, "params": {**INIT["params"], "protocolVersion": "2025-11-25"}}, 0,
        INITIALIZED, LIST, 1,
    ],
    "server/discover, subscriptions/listen and the lists (Claude Code)": CLAUDE_LIKE,
}  # fmt: skip
MODERN_RECALL = {**RECALL, "params": {**RECALL["params"], "_meta": ENVELOPE}}


@pytest.mark.parametrize("case", sorted(HANDSHAKES))
def test_every_handshake_is_answered_before_the_sdk_has_loaded(
    sample: Path, tmp_path: Path, case: str
) -> None:
    """The SDK's import waits until the test has every opening answer: the front gave them
    all; then a tool call is the SDK's, and everything is as on the plain path."""
    recall = {**(MODERN_RECALL if case.startswith("server/") else RECALL), "id": 7}
    steps = [*HANDSHAKES[case], RELEASE, recall, 7]
    held = talk(sample, tmp_path / "home", steps, held=hold_sdk(tmp_path))
    plain = talk(sample, tmp_path / "home", steps, plain=True)
    assert held["code"] == plain["code"] == 0 and held["err"] == plain["err"] == ""
    assert held["answers"] == plain["answers"]
    call = next(m for m in held["answers"] if m.get("id") == 7)
    assert not call["result"].get("isError") and "brief" in call["result"]["structuredContent"]


FALLBACKS = {
    "unknown method first": [{"jsonrpc": "2.0", "id": 9, "method": "vendor/x"}, 9, *CODEX_LIKE],
    "a batch": [b"[" + json.dumps(INIT).encode() + b"]\n", {**INIT, "id": 3}, 3, LIST, 1],
    "a malformed line": [b"{not json\n", *CODEX_LIKE],
    "a member twice": [json.dumps(INIT)[:-1].encode() + b', "method": "tools/list"}\n', 0, LIST, 1],
    "another protocol version": [
        {**INIT, "params": {**INIT["params"], "protocolVersion": "2099-01-01"}}, 0, INITIALIZED,
        LIST, 1,
    ],
    "a request before initialize": [LIST, 1, *CODEX_LIKE],
    "requests before the answer to initialize": [INIT, INITIALIZED, LIST, RECALL, 0, 1, 2],
    "a cancellation": [
        INIT, 0, INITIALIZED, LIST,
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
        RECALL, 2,
    ],
    "initialize after discover": [PROBE, "probe", INIT, 0],
    "the end of stdin after initialize": [INIT],
    "the end of stdin after tools/list": [INIT, INITIALIZED, LIST],
    "the end of stdin after a listen": [PROBE, LISTEN],
}  # fmt: skip
# the plain path, at the end of stdin, drops a tools/list it had not answered; the front
# may have answered it already (a host that waits for its answers sees no difference)
ANSWERS_MORE = {"the end of stdin after tools/list", "the end of stdin after a listen"}


@pytest.mark.parametrize("case", sorted(FALLBACKS))
def test_what_the_front_does_not_know_gets_the_sdks_own_answers(
    sample: Path, tmp_path: Path, case: str
) -> None:
    _same(two_ways(sample, tmp_path, FALLBACKS[case]), more=case in ANSWERS_MORE)


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
    runs = [anyio.run(_client_session, sample, home, version, plain) for plain in (True, False)]
    assert runs[1] == runs[0]
    assert runs[0]["opened"]["instructions"].startswith("vaultkeeper keeps")
    assert len(runs[0]["tools"]["tools"]) == 13 and not runs[0]["recall"]["is_error"]
    assert not (home / "cache").exists()  # nothing saved


def test_the_answers_the_front_gives_are_the_same_for_every_vault(
    sample: Path, make_vault: Any, tmp_path: Path
) -> None:
    """The shipped answers are the same for every vault: so the requests the front answers
    must not depend on it. Claude Code's and Codex's openings ask for all of them."""
    empty = make_vault({}, init=True)
    for opening in (CLAUDE_LIKE, CODEX_LIKE):
        runs = [talk(vault, tmp_path / "home", opening, plain=True) for vault in (sample, empty)]
        assert runs[0]["answers"] == runs[1]["answers"]
        # every request answered (a listen: its acknowledgement, and its end at EOF)
        assert len(runs[0]["answers"]) == (7 if opening is CLAUDE_LIKE else 2)
