"""The front (vaultkeeper/mcp/front.py): which opening requests it answers from the saved
answers, and what it keeps, in order, for the SDK."""

from __future__ import annotations

import json
import os
import queue
from pathlib import Path
from typing import Any

import pytest

from vaultkeeper.mcp.answers import canonical, prefix_key
from vaultkeeper.mcp.front import STAND_IN_PREFIX, Front, Item, Lines, Loaded, kind, parse, run

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "x"}}
READY = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
CALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "recall"}}
SAVED = {
    prefix_key([canonical(INIT)]): {"opened": True},
    prefix_key([canonical(INIT), canonical(READY), canonical(LIST)]): {"tools": []},
}


def line(message: Any) -> str:
    return json.dumps(message) + "\n"


def _front(tmp_path: Path, saved: dict[str, Any] = SAVED) -> tuple[Front, Path]:
    out = tmp_path / "out"
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    return Front(saved, out=fd), out


def _answers(out: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in out.read_text().splitlines()]


def test_the_saved_opening_is_answered_and_the_sdk_gets_a_stand_in(tmp_path: Path) -> None:
    front, out = _front(tmp_path)
    for message in (INIT, READY, LIST, CALL, LIST):
        front.take(line(message))
    assert _answers(out) == [
        {"jsonrpc": "2.0", "id": 0, "result": {"opened": True}},
        {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}},
    ]
    stand_in = json.loads(front.kept[0])
    assert stand_in["id"].startswith(STAND_IN_PREFIX) and {**stand_in, "id": 0} == INIT
    assert front.stand_in == (stand_in["id"], {"opened": True})
    # the notification, then everything from the first request it has no answer for
    assert front.kept[1:] == [line(READY), line(CALL), line(LIST)]
    assert front.learn == {}  # tools/call ends the opening: nothing of it is saved


def test_without_saved_answers_everything_is_kept_and_the_opening_learned(tmp_path: Path) -> None:
    front, out = _front(tmp_path, {})
    for message in (INIT, READY, LIST, CALL):
        front.take(line(message))
    assert out.read_text() == "" and front.stand_in is None
    assert front.kept == [line(m) for m in (INIT, READY, LIST, CALL)]
    assert front.learn == {0: prefix_key([canonical(INIT)]), 1: list(SAVED)[1]}


def test_after_a_request_it_cannot_answer_it_answers_none(tmp_path: Path) -> None:
    front, out = _front(tmp_path)
    front.take(line(INIT))
    front.take(line({**LIST, "id": 5, "params": {"cursor": "x"}}))  # not saved
    front.take(line(READY))
    front.take(line(LIST))
    assert [a["id"] for a in _answers(out)] == [0]


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
    front, out = _front(tmp_path)
    front.take(first)
    front.take(line(INIT))
    assert out.read_text() == "" and front.kept == [first, line(INIT)]


def test_the_kinds() -> None:
    assert kind(parse(line(INIT))) == "request" and kind(parse(line(READY))) == "notification"
    assert kind(parse(line({**INIT, "id": "a"}))) == "request"
    assert parse("NaN") is None and parse('{"a": 1, "a": 2}') is None


def test_an_id_given_twice_in_the_opening_is_not_learned(tmp_path: Path) -> None:
    front, _ = _front(tmp_path, {})
    for message in (INIT, {**LIST, "id": 0}, {**LIST, "id": 0, "method": "prompts/list"}):
        front.take(line(message))
    assert front.learn == {}


def test_the_sdk_reads_the_kept_lines_then_the_rest_of_stdin() -> None:
    source: queue.Queue[Item] = queue.Queue()
    for item in ("a\n", Loaded(app="app"), "b\n", None):
        source.put(item)
    front = Front({})
    loaded, lines = run(front, source)
    assert loaded.app == "app"
    assert [lines.readline() for _ in range(4)] == ["a\n", "b\n", "", ""]
    assert not front.opening  # "b" is no message: the opening ended there


def test_the_end_of_stdin_before_the_sdk_loaded_is_kept() -> None:
    source: queue.Queue[Item] = queue.Queue()
    for item in ("a\n", None, Loaded(error=ImportError("x"))):
        source.put(item)
    loaded, lines = run(Front({}), source)
    assert isinstance(loaded.error, ImportError)
    assert [lines.readline(), lines.readline()] == ["a\n", ""]
    assert Lines(["kept\n"], source, True, print).readline() == "kept\n"


def test_the_opening_read_by_the_sdk_after_the_hand_over_is_learned_too() -> None:
    """The SDK may load before the host's tools/list comes: its answer is saved all the same."""
    source: queue.Queue[Item] = queue.Queue()
    for item in (line(INIT), Loaded(app="app"), line(READY), line(LIST), line(CALL), line(LIST)):
        source.put(item)
    front = Front({})
    _, lines = run(front, source)
    assert [lines.readline() for _ in range(5)] == [
        line(m) for m in (INIT, READY, LIST, CALL, LIST)
    ]
    assert front.learn == {0: list(SAVED)[0], 1: list(SAVED)[1]}  # not the LIST after CALL
