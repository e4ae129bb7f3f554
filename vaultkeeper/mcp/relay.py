"""The connection handed to the SDK once it has loaded, after the front (front.py).

The SDK serves it as ``MCPServer.run("stdio")`` does -- its stdio transport and its
low-level server's loop -- with two differences: stdin comes from the front's reader
(the lines it kept for the SDK, then the rest: the transport takes an explicit stdin
stream for this), and the answers pass through ``Relay``. The relay drops the SDK's
answer to the stand-in of the opening request the front already answered, after
comparing it with the front's (out of date: the saved answers are forgotten), and
saves the SDK's answers to the opening requests the front left to it (answers.py), so
that the next start gives them. Every other message goes out as the SDK made it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from types import TracebackType
from typing import Any, TextIO, cast

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import JSONRPCError, JSONRPCResponse

from vaultkeeper.mcp.answers import Saved
from vaultkeeper.mcp.front import Lines, RequestId


def _result(message: JSONRPCResponse | JSONRPCError) -> Any:
    """The result as the transport writes it (stdio.py: ``model_dump_json`` so); an
    error's is None."""
    return json.loads(message.model_dump_json(by_alias=True, exclude_unset=True)).get("result")


class Relay:
    """The SDK's write stream, with the stand-in's answer dropped and answers learned."""

    def __init__(
        self,
        inner: Any,
        stand_in: tuple[str, Any] | None,
        learn: dict[RequestId, str],
        learned: Callable[[Saved], None],
        stale: Callable[[], None],
    ) -> None:
        self.inner = inner
        self.stand_in = stand_in
        self.learn = learn  # the front adds to it while the SDK reads the opening
        self.learned = learned
        self.stale = stale

    async def send(self, item: SessionMessage, /) -> None:
        message = item.message
        if not isinstance(message, (JSONRPCResponse, JSONRPCError)) or message.id is None:
            await self.inner.send(item)
            return
        if self.stand_in is not None and message.id == self.stand_in[0]:
            given, self.stand_in = self.stand_in[1], None
            if _result(message) != given:
                self.stale()
            return
        key = self.learn.pop(message.id, None)
        await self.inner.send(item)
        if key is not None and isinstance(message, JSONRPCResponse):
            self.learned({key: _result(message)})

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> Relay:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None


def serve(app: MCPServer, stdin: Lines, relay: Callable[[Any], Relay]) -> None:
    """Serve the connection until stdin ends (``MCPServer.run_stdio_async``, so)."""
    server = app._lowlevel_server  # what run_stdio_async serves; the SDK's own Client too

    async def main() -> None:
        async with stdio_server(stdin=anyio.wrap_file(cast(TextIO, stdin))) as (read, write):
            await server.run(read, relay(write), server.create_initialization_options())

    anyio.run(main)
