"""``vaultkeeper mcp``'s start: the SDK loads in a thread while the front answers.

The SDK's import is most of a second, and a host waits for the first answer. So the
server (server.py, which imports the SDK) is built in a thread, and meanwhile the front
(front.py) answers the host's opening requests from the saved answers (answers.py);
when the server is built, the connection is handed to it (relay.py). Without saved
answers for this install (the first start after an install or an upgrade) the front
answers nothing and only keeps the lines: the SDK answers all, and its answers to the
opening requests are saved for the next start. With an SDK version the hand-over is not
checked with (answers.SDK_HANDED_OVER), or no stdin to take over, it serves as
``MCPServer.run("stdio")`` alone does, the SDK imported in the main thread.

VAULTKEEPER_MCP_PLAIN=1 serves so too (the tests compare the two ways).
"""

from __future__ import annotations

import os
import queue
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vaultkeeper import config
from vaultkeeper.errors import UsageError
from vaultkeeper.mcp import answers, front
from vaultkeeper.mcp.front import Item, Loaded

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
    source: queue.Queue[Item] = queue.Queue()
    key = None if os.environ.get(PLAIN_ENV) == "1" else answers.fingerprint()
    if key is not None:
        try:
            front.claim_stdin(source)
        except (OSError, ImportError):  # no stdin to move here: the plain path
            key = None
    if key is None:  # as MCPServer.run alone: the SDK imported here, and it reads stdin
        _load(vault, now, session, source)
        item = source.get()
        assert isinstance(item, Loaded)
        _app(item).run("stdio")
        return
    threading.Thread(
        target=_load, args=(vault, now, session, source), name="vaultkeeper-sdk", daemon=True
    ).start()
    file = answers.path(os.environ)
    opening = front.Front(answers.load(file, key))
    loaded, stdin = front.run(opening, source)
    app = _app(loaded)
    from vaultkeeper.mcp import relay

    def learned(found: answers.Saved) -> None:
        answers.save(file, key, found)

    def stale() -> None:
        answers.save(file, key, {}, forget=True)
        sys.stderr.write("vaultkeeper: the saved MCP answers were out of date; forgotten\n")
        sys.stderr.flush()

    relay.serve(
        app,
        stdin,
        lambda write: relay.Relay(write, opening.stand_in, opening.learn, learned, stale),
    )
