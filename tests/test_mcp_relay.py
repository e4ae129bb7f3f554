"""The relay (vaultkeeper/mcp/relay.py): the SDK's answer to the stand-in is dropped (and
checked), its answers to the opening requests left to it are saved, the rest goes out."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp.shared.message import SessionMessage  # noqa: E402
from mcp.types import (  # noqa: E402
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCResponse,
)

from vaultkeeper.mcp.relay import Relay  # noqa: E402


class Sink:
    def __init__(self) -> None:
        self.sent: list[Any] = []
        self.closed = False

    async def send(self, item: SessionMessage) -> None:
        self.sent.append(item.message)

    async def aclose(self) -> None:
        self.closed = True


def _response(ident: int | str, result: dict[str, Any]) -> SessionMessage:
    return SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=ident, result=result))


def test_the_relay() -> None:
    sink = Sink()
    learned: list[dict[str, Any]] = []
    stale: list[bool] = []
    relay = Relay(
        sink, ("front-1", {"a": 1}), {2: "key2", 3: "key3"}, learned.append,
        lambda: stale.append(True),
    )  # fmt: skip
    note = SessionMessage(JSONRPCNotification(jsonrpc="2.0", method="notifications/x"))
    error = JSONRPCError(jsonrpc="2.0", id=3, error=ErrorData(code=-1, message="no"))

    async def main() -> None:
        async with relay:
            await relay.send(_response("front-1", {"a": 1}))  # the stand-in's: dropped
            await relay.send(note)
            await relay.send(_response(2, {"tools": []}))
            await relay.send(_response(2, {"tools": ["again"]}))  # learned once
            await relay.send(SessionMessage(error))  # an error is not saved
            await relay.send(_response("front-1", {"a": 2}))  # only the first is the stand-in's

    anyio.run(main)
    assert [m.id if hasattr(m, "id") else m.method for m in sink.sent] == [
        "notifications/x", 2, 2, 3, "front-1",
    ]  # fmt: skip
    assert learned == [{"key2": {"tools": []}}] and stale == [] and sink.closed


def test_a_stand_in_answered_otherwise_is_stale() -> None:
    sink, stale = Sink(), []
    relay = Relay(sink, ("front-1", {"a": 1}), {}, lambda _: None, lambda: stale.append(1))

    anyio.run(relay.send, _response("front-1", {"a": 2}))
    assert stale == [1] and sink.sent == []
