"""``vaultkeeper mcp``'s start: the SDK loads in a thread while the front answers.

The SDK's import is most of a second (``import mcp`` loads its client, the generated
models of every protocol version, pydantic and asyncio; docs/benchmarks.md), and a host
waits for the first answer: Codex starts the turn without the tools of a server that
answers late. So the server (server.py, which imports the SDK) is built in a thread, and
meanwhile the front (front.py) answers the host's opening requests from the SDK's own
answers shipped with vaultkeeper (opening.py); when the server is built, the connection
is handed to it (handover.py), which serves it through ``MCPServer.run("stdio")``.

With an SDK of a minor version opening.json was not made with, or no stdin and stdout to
take over, it serves as ``MCPServer.run("stdio")`` alone does, the SDK imported in the
main thread. VAULTKEEPER_MCP_PLAIN=1 serves so too (the tests compare the two ways).
"""

from __future__ import annotations

import os
import queue
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vaultkeeper import config
from vaultkeeper.errors import UsageError
from vaultkeeper.mcp import front, opening
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
    if os.environ.get(config.ENV_MCP_DIALOG):  # the hooks the session started with, first
        from vaultkeeper.mcp import dialog

        dialog.remember(os.environ, Path.cwd())
    source: queue.Queue[Item] = queue.Queue()
    answers = None if os.environ.get(PLAIN_ENV) == "1" else opening.load()
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
    from vaultkeeper.mcp import handover

    handover.serve(app, opened.kept, opened.drops, source, ended, wire)
