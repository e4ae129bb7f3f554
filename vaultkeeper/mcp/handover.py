"""The connection handed to the SDK once it has loaded, after the front (front.py).

The SDK serves it through its public entry, ``MCPServer.run("stdio")``, on the process's
own stdin and stdout -- which are, by then, two pipes of ours:

- stdin: the lines the front kept for the SDK (the stand-in of the opening request, the
  notifications, everything it did not answer), then the rest of the host's stdin as it
  comes, from the same reader; its end, the host's end;
- stdout: each line the SDK writes goes to the host, except its answer to a stand-in and
  its acknowledgement of a listen the front acknowledged (``front.Drop``): the host has
  those already. Each dropped one is compared with what the front sent; a difference
  (an SDK patch release answering otherwise than the one opening.json was made with) is
  one line on stderr. Every later answer is the SDK's own.
"""

from __future__ import annotations

import json
import os
import queue
import sys
import threading
from typing import Any

from vaultkeeper.mcp.front import Drop, Item, Loaded


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


def serve(app: Any, kept: list[str], drops: list[Drop], source: queue.Queue[Item],
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
