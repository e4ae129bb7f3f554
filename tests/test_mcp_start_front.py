"""The front (vaultkeeper/mcp/start.py): which opening requests it answers from the SDK's
shipped answers, and what it keeps, in order, for the SDK."""

from __future__ import annotations

import json
import os
import queue
from pathlib import Path
from typing import Any

import pytest

from vaultkeeper.mcp.start import (
    STAND_IN_PREFIX,
    Drop,
    Front,
    Item,
    Loaded,
    Opening,
    canonical,
    kind,
    parse,
    run,
)

OLD, NEW = "2025-06-18", "2026-07-28"
CLIENT = {"name": "t", "version": "1"}
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": OLD, "capabilities": {}, "clientInfo": CLIENT}}  # fmt: skip
READY = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
CALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "recall"}}
META = {"_meta": {"io.modelcontextprotocol/protocolVersion": NEW,
                  "io.modelcontextprotocol/clientCapabilities": {}}}  # fmt: skip
PROBE = {"jsonrpc": "2.0", "id": "probe", "method": "server/discover", "params": META}
FLAGS = {"toolsListChanged": True}
LISTEN = {"jsonrpc": "2.0", "id": "listen:0", "method": "subscriptions/listen",
          "params": {**META, "notifications": FLAGS}}  # fmt: skip
MODERN_LIST = {**LIST, "params": META}
OPENING = Opening(
    {
        f"initialize {OLD}": {"opened": OLD},
        f"tools/list {OLD}": {"tools": []},
        f"server/discover {NEW}": {"discovered": True},
        f"tools/list {NEW}": {"tools": [], "resultType": "complete"},
        f"subscriptions/listen {NEW} {canonical(FLAGS)}": {"notifications": FLAGS},
    }
)


def line(message: Any) -> str:
    return json.dumps(message) + "\n"


def _front(tmp_path: Path) -> tuple[Front, Path]:
    out = tmp_path / "out"
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    return Front(OPENING, out=fd), out


def _answers(out: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in out.read_text().splitlines()]


def _take(tmp_path: Path, *messages: Any) -> tuple[Front, list[dict[str, Any]]]:
    front, out = _front(tmp_path)
    for message in messages:
        front.take(message if isinstance(message, str) else line(message))
    return front, _answers(out)


def test_a_2025_opening_is_answered_and_the_sdk_gets_a_stand_in(tmp_path: Path) -> None:
    front, answers = _take(tmp_path, INIT, READY, LIST, CALL, LIST)
    assert answers == [
        {"jsonrpc": "2.0", "id": 0, "result": {"opened": OLD}},
        {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}},
    ]
    stand_in = json.loads(front.kept[0])
    assert stand_in["id"].startswith(STAND_IN_PREFIX) and {**stand_in, "id": 0} == INIT
    assert front.drops == [Drop("response", stand_in["id"], {"opened": OLD})]
    # the notification, then everything from the first request it has no answer for
    assert front.kept[1:] == [line(READY), line(CALL), line(LIST)]


def test_a_2026_opening_with_a_listen_is_answered_and_the_listen_kept(tmp_path: Path) -> None:
    """Claude Code's: a discover probe, a listen (it sends its lists once that is
    acknowledged), a second discover, the lists."""
    front, answers = _take(tmp_path, PROBE, LISTEN, {**PROBE, "id": 0}, MODERN_LIST)
    ack_params = {"notifications": FLAGS,
                  "_meta": {"io.modelcontextprotocol/subscriptionId": "listen:0"}}  # fmt: skip
    assert answers == [
        {"jsonrpc": "2.0", "id": "probe", "result": {"discovered": True}},
        {"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
         "params": ack_params},
        {"jsonrpc": "2.0", "id": 0, "result": {"discovered": True}},
        {"jsonrpc": "2.0", "id": 1, "result": {"tools": [], "resultType": "complete"}},
    ]  # fmt: skip
    stand_in = json.loads(front.kept[0])
    assert {**stand_in, "id": "probe"} == PROBE
    assert front.kept[1:] == [line(LISTEN)]  # the SDK owns the subscription
    assert front.drops == [
        Drop("response", stand_in["id"], {"discovered": True}),
        Drop("ack", "listen:0", ack_params),
    ]


@pytest.mark.parametrize(
    "messages",
    [
        [INIT, LIST],  # no notifications/initialized yet
        [INIT, READY, {**LIST, "params": {"cursor": "x"}}],  # a page
        [INIT, READY, MODERN_LIST],  # another era on a 2025 connection
        [PROBE, INIT],  # initialize on a 2026 connection (the SDK refuses it)
        [
            PROBE,
            {
                **LIST,
                "params": {
                    "_meta": {
                        **META["_meta"],
                        "io.modelcontextprotocol/protocolVersion": "2099-01-01",
                    }
                },
            },
        ],
        [PROBE, {**LISTEN, "params": {**META, "notifications": {"resourceSubscriptions": ["x"]}}}],
        [
            PROBE,
            {**MODERN_LIST, "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": NEW}}},
        ],  # no caps
        [{**INIT, "params": {**INIT["params"], "protocolVersion": "2099-01-01"}}],
        [{**INIT, "params": {**INIT["params"], "clientInfo": {"name": "t"}}}],
        [{**INIT, "params": {**INIT["params"], "capabilities": {"roots": True}}}],
        [{**INIT, "params": {**INIT["params"], "extra": 1}}],
        [CALL, INIT],
    ],
)
def test_what_the_sdk_would_answer_otherwise_is_left_to_it(
    tmp_path: Path, messages: list[Any]
) -> None:
    front, answers = _take(tmp_path, *messages)
    kept_from = len(answers)  # what it answered came first; from there on, all kept
    assert front.kept[-(len(messages) - kept_from) :] == [line(m) for m in messages[kept_from:]]
    assert kept_from < len(messages)


def test_after_a_request_it_cannot_answer_it_answers_none(tmp_path: Path) -> None:
    front, answers = _take(tmp_path, INIT, READY, {**LIST, "id": 5, "params": {"cursor": "x"}},
                           LIST)  # fmt: skip
    assert [a["id"] for a in answers] == [0]


@pytest.mark.parametrize(
    "first",
    [
        "{not json\n",
        "[" + json.dumps(INIT) + "]\n",  # a batch
        json.dumps(INIT)[:-1] + ', "method": "initialize"}\n',  # a member twice
        json.dumps({**INIT, "params": {"x": float("nan")}}) + "\n",
        line({**INIT, "id": True}),
        line({**INIT, "id": 1.0}),
        line({**INIT, "id": None}),
        line({**INIT, "extra": 1}),
        line({**INIT, "params": [1]}),
        line({**INIT, "jsonrpc": "1.0"}),
        line({"jsonrpc": "2.0", "id": 0, "result": {}}),  # a reply
        "\n",
    ],
)
def test_anything_unusual_first_leaves_all_to_the_sdk(tmp_path: Path, first: str) -> None:
    front, answers = _take(tmp_path, first, INIT)
    assert answers == [] and front.kept == [first, line(INIT)]


def test_the_kinds() -> None:
    assert kind(parse(line(INIT))) == "request" and kind(parse(line(READY))) == "notification"
    assert kind(parse(line({**INIT, "id": "a"}))) == "request"
    assert parse("NaN") is None and parse('{"a": 1, "a": 2}') is None


def test_a_closed_stdout_leaves_the_answer_to_the_sdk(tmp_path: Path) -> None:
    read, write = os.pipe()
    os.close(read)
    front = Front(OPENING, out=write)
    front.take(line(INIT))
    os.close(write)
    assert front.kept == [line(INIT)] and front.drops == []


def test_the_lines_until_the_sdk_has_loaded_and_the_end_of_stdin() -> None:
    source: queue.Queue[Item] = queue.Queue()
    for item in ("a\n", None, Loaded(app="app"), "b\n"):
        source.put(item)
    front = Front(OPENING, out=-1)
    loaded, ended = run(front, source)
    assert loaded.app == "app" and ended and front.kept == ["a\n"]
    assert source.get() == "b\n"  # left for the hand-over
