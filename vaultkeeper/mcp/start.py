"""``vaultkeeper mcp``'s start: a front answers the host's opening while the SDK loads.

Importing the SDK takes most of a second (docs/benchmarks.md), and a host waits for the
first answer: Codex starts a turn without the tools of a server that answers late. The
answers to the opening requests depend only on the method and the protocol version, so
the SDK itself makes them once and they ship as ``opening.json`` (tools/mcp_opening.py
writes it; tests/test_mcp_opening.py fails when it differs from what the installed SDK
answers; with an SDK of another minor version the SDK answers everything). Stdlib only.

While the server (server.py) is built in a thread, the ``Front`` reads stdin and answers
``initialize`` (2024-11-05 .. 2025-11-25) as the first request, then, after
``notifications/initialized``, the lists; at 2026-07-28 (version and capabilities in each
request's ``_meta``) ``server/discover``, the lists, and ``subscriptions/listen`` (it
sends the acknowledgement and keeps the request: the subscription is the SDK's).
Everything else is kept, in order, for the SDK, and from the first request it cannot
answer (another method or version, anything malformed or unusual) it answers no more.
The SDK's connection state is made by the first request, so when the front answered it
the SDK is given it too under an id of the front's own (a "stand-in").

The hand-over: the SDK serves the rest through its public ``MCPServer.run("stdio")`` on
stdin and stdout, by then two pipes of ours: in, the kept lines, then the host's stdin;
out, every line to the host except its answers the front gave already (``Drop``), each
compared with the front's (a difference is one line on stderr). With no answers for this
SDK, no stdin and stdout to take over, or VAULTKEEPER_MCP_PLAIN=1, it serves as
``MCPServer.run("stdio")`` alone does (the tests compare the two ways).
"""

from __future__ import annotations

import io
import json
import os
import queue
import sys
import threading
from dataclasses import dataclass
from importlib.machinery import PathFinder
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vaultkeeper import config
from vaultkeeper.errors import UsageError

if TYPE_CHECKING:  # tools.py loads with the server, in the loader's thread
    from vaultkeeper.mcp.tools import Now

FILE = Path(__file__).with_name("opening.json")
FORMAT = 1
LISTS = frozenset({"tools/list", "prompts/list", "resources/list", "resources/templates/list"})
PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
INFO = "io.modelcontextprotocol/clientInfo"
SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"
LISTEN = "subscriptions/listen"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class Opening:
    """The answers, by ``"METHOD VERSION"`` (a listen's also by its filter)."""

    answers: dict[str, Any]

    def result(self, method: str, version: str) -> Any:
        return self.answers.get(f"{method} {version}")

    def ack(self, version: str, notifications: Any) -> dict[str, Any] | None:
        """A listen's acknowledgement (its ``params``) without the subscription's id."""
        found = self.answers.get(f"{LISTEN} {version} {canonical(notifications)}")
        return found if isinstance(found, dict) else None


def installed_sdk() -> str | None:
    """``mcp-X.Y.Z`` of the importable SDK, from its ``.dist-info`` name, not imported."""
    try:
        spec = PathFinder.find_spec("mcp")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or sys.modules.get("mcp", spec) is None:
        return None
    site = Path(spec.origin).parent.parent
    try:
        found = [n for n in os.listdir(site) if n.startswith("mcp-") and n.endswith(".dist-info")]
    except OSError:
        return None
    return found[0][: -len(".dist-info")] if len(found) == 1 else None


def load(file: Path = FILE, sdk: str | None = None) -> Opening | None:
    """The shipped answers, when they were made with the installed SDK's minor version."""
    try:
        data = json.loads(file.read_bytes())
        made_with, keys, values = data["sdk"], data["answers"], data["values"]
        if data["format"] != FORMAT:
            return None
        installed = sdk if sdk is not None else installed_sdk()
        if installed is None or not installed.startswith(made_with):
            return None
        return Opening({key: values[at] for key, at in keys.items()})
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None


STAND_IN_PREFIX = "vaultkeeper-front-"


@dataclass
class Loaded:
    """The loader thread's result: the server built, or why not."""

    app: Any = None
    error: BaseException | None = None


Item = str | Loaded | None  # a line of stdin, the loader's result, or None: stdin's end


@dataclass(frozen=True)
class Drop:
    """An SDK message the host already has from the front: a response (``kind``
    "response") or a listen's acknowledgement ("ack"), by its id; ``sent`` is what the
    front sent in its place (the result, or the acknowledgement's params)."""

    kind: str
    ident: Any
    sent: Any


def claim_stdio(into: queue.Queue[Item]) -> int:
    """Read stdin in a thread for the whole process, each line into ``into``, then None;
    return a descriptor of the host's stdout.

    As the SDK's transport does while it serves: the wire moves to private descriptors,
    fd 0 reads the null device and fd 1 writes to stderr, so nothing the SDK's import or
    a child prints reaches the host, and no child reads the host's bytes.
    """
    import fcntl  # POSIX: elsewhere (ImportError) the server starts without the front

    wire_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    wire_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    try:  # stray output to stderr, or nowhere without one (as the SDK's transport does)
        err = os.dup(2)
    except OSError:
        err = os.open(os.devnull, os.O_WRONLY)
    try:  # both exist and are open: nothing below fails halfway
        os.dup2(null, 0)
        os.dup2(err, 1)
    finally:
        os.close(null)
        os.close(err)

    def read() -> None:
        with open(wire_in, "rb", closefd=False) as raw:
            stream = io.TextIOWrapper(raw, encoding="utf-8", errors="replace")
            try:
                for line in iter(stream.readline, ""):
                    into.put(line)
            except (OSError, ValueError):
                pass  # a broken stdin ends the input, as its end does
        into.put(None)

    threading.Thread(target=read, name="vaultkeeper-stdin", daemon=True).start()
    return wire_out


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):  # which one the SDK's parser keeps is not ours to guess
        raise ValueError("a member given twice")
    return found


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse(line: str) -> Any:
    try:
        return json.loads(line, object_pairs_hook=_unique, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return None


def kind(message: Any) -> str:
    """request, notification, or other (a reply, a batch, anything unusual)."""
    if not (
        isinstance(message, dict)
        and message.get("jsonrpc") == "2.0"
        and isinstance(message.get("method"), str)
        and set(message) <= {"jsonrpc", "id", "method", "params"}
        and isinstance(message.get("params", {}), dict)
    ):
        return "other"
    if "id" not in message:
        return "notification"
    ident = message["id"]
    return "request" if isinstance(ident, (int, str)) and not isinstance(ident, bool) else "other"


def _is_info(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("name"), str)
        and isinstance(value.get("version"), str)
    )


class Front:
    """The opening conversation: what was answered here, what is kept for the SDK."""

    def __init__(self, opening: Opening, out: int) -> None:
        self.opening = opening
        self.out = out
        self.kept: list[str] = []
        self.drops: list[Drop] = []
        self.answering = True
        self.first = True  # no request yet: the next one sets the SDK's connection state
        self.version: str | None = None  # the protocol version the front answered at
        self.modern = False
        self.ready = False  # 2025: notifications/initialized came after initialize

    def take(self, line: str) -> None:
        message = parse(line)
        sort = kind(message)
        if sort == "notification":
            if message["method"] == "notifications/initialized" and self.version is not None:
                self.ready = not self.modern
            self.kept.append(line)
            return
        first, self.first = self.first, False
        if sort == "request" and self.answering and self._answer(message, first, line):
            return
        self.answering = False
        self.kept.append(line)

    def _answer(self, message: dict[str, Any], first: bool, line: str) -> bool:
        method, params = message["method"], message.get("params") or {}
        meta = params.get("_meta")
        if method == "initialize":
            return first and self._initialize(message, params)
        if isinstance(meta, dict) and PV in meta:
            return self._modern(message, params, meta, first, line)
        if self.version is None or self.modern or not self.ready or method not in LISTS:
            return False
        if set(params) - {"_meta"} or (meta is not None and not isinstance(meta, dict)):
            return False  # a cursor: a page the SDK knows
        return self._reply(message, self.opening.result(method, self.version), first)

    def _initialize(self, message: dict[str, Any], params: dict[str, Any]) -> bool:
        version = params.get("protocolVersion")
        if not (
            set(params) <= {"protocolVersion", "capabilities", "clientInfo", "_meta"}
            and isinstance(version, str)
            and isinstance(params.get("capabilities"), dict)
            and all(isinstance(v, dict) for v in params["capabilities"].values())
            and _is_info(params.get("clientInfo"))
            and isinstance(params.get("_meta", {}), dict)
        ):
            return False
        if not self._reply(message, self.opening.result("initialize", version), True):
            return False
        self.version = version
        return True

    def _modern(
        self, message: dict[str, Any], params: dict[str, Any], meta: dict[str, Any], first: bool,
        line: str,
    ) -> bool:  # fmt: skip
        version = meta[PV]
        if not (
            (first or self.modern)
            and isinstance(version, str)
            and isinstance(meta.get(CAPS), dict)
            and (INFO not in meta or _is_info(meta[INFO]))
        ):
            return False
        method, rest = message["method"], {k: v for k, v in params.items() if k != "_meta"}
        if method == LISTEN:
            answered = set(rest) == {"notifications"} and self._listen(message, version, rest, line)
        else:
            result = None if rest else self.opening.result(method, version)
            answered = method in LISTS | {"server/discover"} and self._reply(message, result, first)
        if answered:
            self.version, self.modern = version, True
        return answered

    def _listen(
        self, message: dict[str, Any], version: str, rest: dict[str, Any], line: str
    ) -> bool:
        ack = self.opening.ack(version, rest["notifications"])
        if ack is None:
            return False
        ident = message["id"]
        params = {**ack, "_meta": {**ack.get("_meta", {}), SUBSCRIPTION: ident}}
        if not self._write({"jsonrpc": "2.0", "method": ACKNOWLEDGED, "params": params}):
            return False
        self.kept.append(line)  # the subscription is the SDK's: it gets the request itself
        self.drops.append(Drop("ack", ident, params))
        return True

    def _reply(self, message: dict[str, Any], result: Any, first: bool) -> bool:
        if result is None or not self._write(
            {"jsonrpc": "2.0", "id": message["id"], "result": result}
        ):
            return False
        if first:
            ident = STAND_IN_PREFIX + os.urandom(8).hex()
            self.kept.append(json.dumps({**message, "id": ident}, ensure_ascii=False) + "\n")
            self.drops.append(Drop("response", ident, result))
        return True

    def _write(self, reply: dict[str, Any]) -> bool:
        line = json.dumps(reply, ensure_ascii=False, separators=(",", ":")) + "\n"
        try:
            _write(self.out, line.encode())
        except (OSError, UnicodeError, ValueError):
            return False  # the SDK answers it, or meets the same broken pipe
        return True


def run(front: Front, source: queue.Queue[Item]) -> tuple[Loaded, bool]:
    """Take stdin's lines until the loader is done: (its result, whether stdin ended)."""
    ended = False
    while True:
        item = source.get()
        if isinstance(item, str):
            front.take(item)
        elif item is None:
            ended = True
        else:
            return item, ended


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
    answers = None if os.environ.get(PLAIN_ENV) == "1" else load()
    wire = -1
    if answers is not None:
        try:
            wire = claim_stdio(source)
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
    opened = Front(answers, wire)
    loaded, ended = run(opened, source)
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


def _dropped(line: bytes, drops: list[Drop]) -> tuple[Drop, Any] | None:
    """The drop this line of the SDK is, if any, and what the SDK sent in it (the line
    parsed only when it may be one)."""
    if not any(str(d.ident).encode() in line for d in drops):
        return None
    try:
        message = json.loads(line)
    except ValueError:
        return None
    params = message.get("params") if isinstance(message, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(meta, dict) and message.get("method") == ACKNOWLEDGED:
        key, got = ("ack", meta.get(SUBSCRIPTION)), params
    elif isinstance(message, dict) and "method" not in message:
        key, got = ("response", message.get("id")), message.get("result")
    else:
        return None
    drop = next((d for d in drops if (d.kind, d.ident) == key), None)
    return None if drop is None else (drop, got)


def _copy(fd: int, wire: int, drops: list[Drop], end: bytes) -> None:
    """The SDK's lines to the host, less the drops, until the ``end`` line."""
    pending = list(drops)
    told = gone = False
    with open(fd, "rb", closefd=True) as lines:
        for line in lines:
            if line == end:
                return
            found = _dropped(line, pending) if pending else None
            if found is not None:
                pending.remove(found[0])
                if found[1] != found[0].sent and not told:
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
