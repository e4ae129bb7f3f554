"""The host's opening requests, answered from the saved answers while the SDK loads.

A host starts the server and waits for its first answer; importing the SDK alone takes
most of a second. So, with the SDK loading in a thread (start.py), the front reads
stdin and answers each opening request that the saved answers (answers.py) hold for
exactly the messages seen so far -- the SDK's own answer to them, made by an earlier
start. Everything else is kept, in order, for the SDK: the notifications, the first
request without a saved answer and every line after it (the front answers only a
prefix of the conversation), anything malformed or unusual. Once the SDK has loaded
it reads the kept lines first, then the rest of stdin (``Lines``), and the front answers
no more; it only notes, while the opening lasts, which requests' answers to save.

The SDK's connection state is made by the opening request (``initialize``, or the
first request of a 2026-07-28 connection), so when the front answered that one the SDK
is given it too, under an id of the front's own, and relay.py drops its answer to it
(and compares it with the one the front gave). The other requests answered here
change no state. Lines are split and decoded exactly as the SDK's reader does
(``TextIOWrapper``, UTF-8 with replacement), so both see the same messages.
"""

from __future__ import annotations

import io
import json
import os
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from vaultkeeper.mcp.answers import ANSWERED, PREFIX_LIMIT, Saved, canonical, prefix_key

RequestId = int | str
STAND_IN_PREFIX = "vaultkeeper-front-"


@dataclass
class Loaded:
    """The loader thread's result: the server built, or why not."""

    app: Any = None
    error: BaseException | None = None


Item = str | Loaded | None  # a line, the loader's result, or None: the end of stdin


def claim_stdin(into: queue.Queue[Item]) -> None:
    """Read stdin in a thread for the whole process, each line into ``into``, then None.

    As the SDK's transport does with it: the wire moves to a private descriptor and
    fd 0 reads the null device, so no child of a tool call reads the host's bytes.
    """
    import fcntl  # POSIX: elsewhere (ImportError) the server starts without the front

    wire = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)

    def read() -> None:
        with open(wire, "rb", closefd=False) as raw:
            stream = io.TextIOWrapper(raw, encoding="utf-8", errors="replace")
            try:
                for line in iter(stream.readline, ""):
                    into.put(line)
            except (OSError, ValueError):
                pass  # a broken stdin ends the input, as its end does
        into.put(None)

    threading.Thread(target=read, name="vaultkeeper-stdin", daemon=True).start()


class Lines:
    """The SDK's stdin: the lines kept for it, then the rest, from the same reader; each
    line read from there is shown to ``seen`` first (the opening's answers are learned)."""

    def __init__(
        self, kept: list[str], source: queue.Queue[Item], ended: bool, seen: Callable[[str], None]
    ) -> None:
        self.kept = kept
        self.source = source
        self.ended = ended
        self.seen = seen

    def readline(self) -> str:
        if self.kept:
            return self.kept.pop(0)
        if self.ended:
            return ""
        item = self.source.get()
        if isinstance(item, str):
            self.seen(item)
            return item
        self.ended = True
        return ""


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
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return "other"
    if not isinstance(message.get("method"), str):
        return "other"
    if not set(message) <= {"jsonrpc", "id", "method", "params"}:
        return "other"
    if "params" in message and not isinstance(message["params"], dict):
        return "other"
    if "id" not in message:
        return "notification"
    ident = message["id"]
    return "request" if isinstance(ident, (int, str)) and not isinstance(ident, bool) else "other"


class Front:
    """The opening conversation: what was answered here, what is kept for the SDK."""

    def __init__(self, saved: Saved, out: int = 1) -> None:
        self.saved = saved
        self.out = out
        self.kept: list[str] = []
        self.seen: list[str] = []  # the opening messages, as answers.canonical keys them
        self.opening = True  # still within those
        self.answering = True
        self.requested = False  # the first request came (it set the SDK's state)
        self.stand_in: tuple[str, Any] | None = None  # (its id, the result given)
        self.learn: dict[RequestId, str] = {}  # the SDK's answer to these is saved
        self.answered = 0
        self._twice: set[RequestId] = set()

    def take(self, line: str) -> None:
        message = parse(line)
        sort = kind(message)
        key = self._key(message, sort)
        if sort == "request":
            first, self.requested = not self.requested, True
            if self.answering and key in self.saved and self._answer(message, key, first):
                return
            if key is not None:
                self._learn(message["id"], key)
        if sort != "notification":
            self.answering = False
        self.kept.append(line)

    def seen_by_sdk(self, line: str) -> None:
        """A line read by the SDK after the hand-over: its answer is learned, if opening."""
        if self.opening:
            message = parse(line)
            sort = kind(message)
            key = self._key(message, sort)
            if sort == "request" and key is not None:
                self._learn(message["id"], key)

    def _key(self, message: Any, sort: str) -> str | None:
        """The key of this message's answer while the opening lasts, else None."""
        if not self.opening:
            return None
        if len(self.seen) < PREFIX_LIMIT and (
            sort == "notification" or (sort == "request" and message["method"] in ANSWERED)
        ):
            self.seen.append(canonical(message))
            return prefix_key(self.seen) if sort == "request" else None
        self.opening = False
        return None

    def _answer(self, message: dict[str, Any], key: str, first: bool) -> bool:
        result = self.saved[key]
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        try:
            data = (json.dumps(reply, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
            while data:
                data = data[os.write(self.out, data) :]
        except (OSError, UnicodeError, ValueError):
            return False  # the SDK answers it, or meets the same broken pipe
        if first:
            ident = STAND_IN_PREFIX + os.urandom(8).hex()
            self.kept.append(json.dumps({**message, "id": ident}, ensure_ascii=False) + "\n")
            self.stand_in = (ident, result)
        self.answered += 1
        return True

    def _learn(self, ident: RequestId, key: str) -> None:
        if ident in self.learn or ident in self._twice:  # an id used twice: whose answer?
            self.learn.pop(ident, None)
            self._twice.add(ident)
        else:
            self.learn[ident] = key


def run(front: Front, source: queue.Queue[Item]) -> tuple[Loaded, Lines]:
    """Take stdin's lines until the loader is done; then the SDK's stdin."""
    ended = False
    while True:
        item = source.get()
        if isinstance(item, str):
            front.take(item)
        elif item is None:
            ended = True
        else:
            return item, Lines(front.kept, source, ended, front.seen_by_sdk)
