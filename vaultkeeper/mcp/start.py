"""``vaultkeeper mcp``'s start: the SDK loads in a thread while the front answers.

The SDK's import is most of a second (``import mcp`` loads its client, the generated
models of every protocol version, pydantic and asyncio; docs/benchmarks.md), and a host
waits for the first answer: Codex starts the turn without the tools of a server that
answers late. So the server (server.py, which imports the SDK) is built in a thread, and
meanwhile the front (front.py) answers the host's opening requests from the SDK's own
answers shipped with vaultkeeper (front.py); when the server is built, the connection
is handed to it (below), which serves it through ``MCPServer.run("stdio")``.

With an SDK of a minor version opening.json was not made with, or no stdin and stdout to
take over, it serves as ``MCPServer.run("stdio")`` alone does, the SDK imported in the
main thread. VAULTKEEPER_MCP_PLAIN=1 serves so too (the tests compare the two ways).

The hand-over: the SDK serves the connection through its public entry,
``MCPServer.run("stdio")``, on the process's own stdin and stdout -- by then two pipes
of ours. Its stdin: the lines the front kept for it (the stand-in of the opening
request, the notifications, everything the front did not answer), then the rest of the
host's stdin as it comes; its end, the host's end. Its stdout: each line goes to the
host, except its answer to a stand-in and its acknowledgement of a listen the front
acknowledged (``front.Drop``): the host has those already. Each dropped one is compared
with what the front sent; a difference (an SDK patch release answering otherwise than
the one opening.json was made with) is one line on stderr.
"""

from __future__ import annotations

import json
import os
import queue
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vaultkeeper import config
from vaultkeeper.errors import UsageError
from vaultkeeper.mcp import front
from vaultkeeper.mcp.front import Drop, Item, Loaded

if TYPE_CHECKING:  # tools.py loads with the server, in the loader's thread
    from vaultkeeper.mcp.tools import Now

PLAIN_ENV = "VAULTKEEPER_MCP_PLAIN"


def _load(vault: Path, now: Now, session: str, into: queue.Queue[Item]) -> None:
    try:
        from vaultkeeper.mcp.server import build

        into.put(Loaded(app=build(vault, now, session)))
    except BaseException as exc:  # the main thread raises it
        into.put(Loaded(error=exc))


def _app(loaded: Loaded) -> Any:
    exc = loaded.error
    if exc is None:
        return loaded.app
    if isinstance(exc, ImportError) and not (exc.name or "").startswith("vaultkeeper"):
        missing = (exc.name or "mcp").split(".")[0]
        raise UsageError(
            f"`vaultkeeper mcp` needs the optional MCP SDK ({missing} is not installed): "
            f"{config.MCP_INSTALL_HINT}"
        ) from None
    raise exc


def serve(vault: Path, now: Now, session: str) -> None:
    """Serve over stdin/stdout until the host closes them (Ctrl-C: stop.py)."""
    if os.environ.get(config.ENV_MCP_DIALOG):  # the hooks the session started with, first
        from vaultkeeper.hosts import elicitation

        elicitation.remember(os.environ, Path.cwd())
    source: queue.Queue[Item] = queue.Queue()
    answers = None if os.environ.get(PLAIN_ENV) == "1" else front.load()
    wire = -1
    if answers is not None:
        try:
            wire = front.claim_stdio(source)
        except (OSError, ImportError):  # no stdin or stdout to move here: the plain path
            answers = None
    if answers is None:  # as MCPServer.run alone: the SDK imported here, and it reads stdin
        _load(vault, now, session, source)
        item = source.get()
        assert isinstance(item, Loaded)
        _app(item).run("stdio")
        return
    threading.Thread(
        target=_load, args=(vault, now, session, source), name="vaultkeeper-sdk", daemon=True
    ).start()
    opened = front.Front(answers, wire)
    loaded, ended = front.run(opened, source)
    app = _app(loaded)
    hand_over(app, opened.kept, opened.drops, source, ended, wire)


def _feed(fd: int, kept: list[str], source: queue.Queue[Item], ended: bool) -> None:
    try:
        for line in kept:
            _write(fd, line.encode())
        while not ended:
            item = source.get()
            if isinstance(item, str):
                _write(fd, item.encode())
            elif not isinstance(item, Loaded):
                ended = True
    except OSError:
        pass  # the SDK has stopped reading
    finally:
        os.close(fd)


def _write(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]


def _dropped(line: bytes, drops: list[Drop]) -> Drop | None:
    """The drop this line of the SDK is, if any (parsed only when it may be one)."""
    if not any(str(d.ident).encode() in line for d in drops):
        return None
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if not isinstance(message, dict):
        return None
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    for drop in drops:
        if drop.kind == "response" and message.get("id") == drop.ident and "method" not in message:
            return drop
        if (
            drop.kind == "ack"
            and message.get("method") == "notifications/subscriptions/acknowledged"
            and isinstance(meta, dict)
            and meta.get("io.modelcontextprotocol/subscriptionId") == drop.ident
        ):
            return drop
    return None


def _sent_again(line: bytes, drop: Drop) -> bool:
    message = json.loads(line)
    got = message.get("result") if drop.kind == "response" else message.get("params")
    return bool(got == drop.sent)


def _copy(fd: int, wire: int, drops: list[Drop], end: bytes) -> None:
    """The SDK's lines to the host, less the drops, until the ``end`` line."""
    pending = list(drops)
    told = gone = False
    with open(fd, "rb", closefd=True) as lines:
        for line in lines:
            if line == end:
                return
            drop = _dropped(line, pending) if pending else None
            if drop is not None:
                pending.remove(drop)
                if not _sent_again(line, drop) and not told:
                    told = True
                    sys.stderr.write(
                        "vaultkeeper: the SDK answered the opening otherwise than the answers "
                        "shipped with vaultkeeper (mcp/opening.json); it answers from now on\n"
                    )
                    sys.stderr.flush()
                continue
            if gone:
                continue
            try:
                _write(wire, line)
            except OSError:
                gone = True  # the host has gone: read on, so the SDK's writes never block


def hand_over(app: Any, kept: list[str], drops: list[Drop], source: queue.Queue[Item],
          ended: bool, wire: int) -> None:  # fmt: skip
    """Serve the rest of the connection with the SDK; return when it has ended."""
    read_in, write_in = os.pipe()
    os.dup2(read_in, 0)
    os.close(read_in)
    read_out, write_out = os.pipe()
    os.dup2(write_out, 1)
    os.close(write_out)
    feeder = threading.Thread(
        target=_feed, args=(write_in, kept, source, ended), name="vaultkeeper-feed", daemon=True
    )
    end = f"vaultkeeper-end-{os.urandom(8).hex()}\n".encode()  # no JSON-RPC line is this
    copier = threading.Thread(
        target=_copy, args=(read_out, wire, drops, end), name="vaultkeeper-copy", daemon=True
    )
    feeder.start()
    copier.start()
    try:
        app.run("stdio")
    finally:
        try:
            sys.stdout.flush()
            _write(1, end)  # fd 1 is the pipe again: every line of the SDK's is before this
        except OSError:
            return
        copier.join()
