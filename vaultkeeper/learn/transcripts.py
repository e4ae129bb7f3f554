"""Read agent session transcripts (Claude Code and Codex JSONL) as a stream of signals.

A transcript is read line by line with a cap on each line, so memory stays bounded
whatever the file's size, and a single huge line is skipped without being held whole.
A line that is not JSON, half written, or of a type not known here is skipped. Only
the agent's own words and tool calls are looked at: the person's text and tool output
never yield a signal, but for whether a vault MCP ``read`` call came back (mcp_results.py).
This module knows nothing of the vault; ingest.py maps the signals onto it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.learn import lessonsigs
from vaultkeeper.learn.codex_family import session_of
from vaultkeeper.learn.hostlines import full_name, made_in, vault_tool
from vaultkeeper.learn.hostlines import utc_date as _date
from vaultkeeper.learn.mcp_results import Pending
from vaultkeeper.learn.shellwords import shell_reads, shell_uses

CLAUDE = "claude-code"
CODEX = "codex"
_CODEX_TYPES = frozenset({"session_meta", "response_item", "turn_context", "event_msg"})
_CLAUDE_TYPES = frozenset({"user", "assistant", "system", "summary", "attachment"})
# [[target#heading|alias]] (and ![[...]] embeds): the target, then the heading part.
LINK = re.compile(r"\[\[([^\[\]|#\n]*)(#[^\[\]|\n]*)?(?:\|[^\[\]\n]*)?\]\]")
# Claude Code asks its model to wrap a sentence that uses an auto memory in this tag,
# in its reply only (never in tool inputs): the host's own reuse signal.
CC_MEMORY = re.compile(r'<cc-memory\s+filenames="([^"<>]*)"')
# Bytes a line must hold to be worth parsing: "assistant", or in Codex's rollouts one
# of these (its tool calls and its session header).
_CODEX_MORE = (b"function_call", b"session_meta", b"custom_tool_call")


@dataclass(frozen=True)
class Signal:
    """One thing the agent did: ``link`` (target, heading), ``skill`` (name), ``file``
    (a path it read; ``cwd`` resolves a relative one), ``mcp-cite`` (a call of the
    vault's MCP ``cite`` tool: the name it cited, and the ``evidence`` it gave),
    ``mcp-read`` (a call of its ``read`` tool: the vault-relative path), ``cli-use``
    (a shell's ``vaultkeeper use NAME``: the name, and as ``evidence`` the vault its
    ``--vault`` names, if it names one), ``native`` (a file name in a
    ``<cc-memory filenames=...>`` tag of the reply: an auto memory it used); ``edit`` (a
    file a tool edited) and ``new`` (the entry a ``new`` call wrote: learn/lessonsigs.py)."""

    kind: str
    value: str
    heading: str | None
    line: int
    session: str
    date: dt.date | None
    cwd: str | None
    evidence: str | None = None
    call: str | None = None  # the host's id of an MCP call (Claude Code's the server logs)


@dataclass(frozen=True)
class Skipped:
    """Lines that yielded nothing because they could not be read (not JSON, too long)."""

    bad: int
    long: int


def _lines(path: Path) -> Iterator[tuple[int, bytes | None]]:
    """(line number, bytes) per line; ``None`` for a line over the cap (never held whole)."""
    cap = config.TRANSCRIPT_MAX_LINE_BYTES
    with path.open("rb") as fh:
        number = 0
        while True:
            raw = fh.readline(cap + 1)
            if not raw:
                return
            number += 1
            if len(raw) > cap and not raw.endswith(b"\n"):
                while raw and not raw.endswith(b"\n"):
                    raw = fh.readline(1 << 20)
                yield number, None
                continue
            yield number, raw


def detect(path: Path) -> str | None:
    """``claude-code``, ``codex``, or None when no line of the file's head says which."""
    for number, raw in _lines(path):
        if number > config.TRANSCRIPT_DETECT_LINES:
            return None
        obj = _load(raw)
        if obj is None:
            continue
        kind = obj.get("type")
        if kind in _CODEX_TYPES and "payload" in obj:
            return CODEX
        if kind in _CLAUDE_TYPES or "sessionId" in obj:
            return CLAUDE
    return None


def _load(raw: bytes | None) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        obj = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


class Reader:
    """Iterate one transcript's signals; ``skipped`` counts the unreadable lines after."""

    def __init__(self, path: Path, fmt: str, made: dict[str, str] | None = None) -> None:
        self.path, self.format = path, fmt
        # line uuid -> the session that made it (Claude Code), shared by one ingest's
        # readers: a fork copies its source's lines with their uuid
        self.made: dict[str, str] = {} if made is None else made
        self.session = path.stem
        self.claimed: str | None = None  # the first session id a line of the file gave
        self.first_date: dt.date | None = None
        self.cwd: str | None = None  # Codex's session_meta cwd; Claude Code's first line's
        self.bad = self.long = 0
        self.pending: Pending[Signal] = Pending()  # MCP reads waiting for their result

    @property
    def skipped(self) -> Skipped:
        return Skipped(self.bad, self.long)

    def __iter__(self) -> Iterator[Signal]:
        claude = self.format == CLAUDE
        for number, raw in _lines(self.path):
            if raw is None:
                self.long += 1
                continue
            agents = b"assistant" in raw or (not claude and any(w in raw for w in _CODEX_MORE))
            if not agents and not (claude and self.pending and b"tool_result" in raw):
                continue  # not the agent's line: parsing every tool result would be slow
            obj = _load(raw)
            if obj is None:
                self.bad += int(bool(raw.strip()))
                continue
            yield from (self._claude(obj, number) if claude else self._codex(obj, number))

    def _claude(self, obj: dict[str, Any], number: int) -> Iterator[Signal]:
        if obj.get("type") != "assistant":  # a user line's tool result: a pending read's?
            yield from self.pending.claude(obj)
            return
        message = obj.get("message")
        if not isinstance(message, dict) or message.get("role", "assistant") != "assistant":
            return
        if obj.get("madeBy") not in (None, "model"):  # "input": history a caller passed in
            return
        if isinstance(obj.get("sessionId"), str) and obj["sessionId"]:
            self.session = obj["sessionId"]
            self.claimed = self.claimed or self.session
        owner = made_in(obj, self.session, self.made)
        if owner is None:  # a line this batch read already, in another session
            return
        if owner != self.session:  # a fork's copy: its source's use, counted there once
            for signal in self._claude_line(obj, message, number):
                yield dataclasses.replace(signal, session=owner)
            return
        yield from self._claude_line(obj, message, number)

    def _claude_line(
        self, obj: dict[str, Any], message: dict[str, Any], number: int
    ) -> Iterator[Signal]:
        day = _date(obj.get("timestamp")) or self.first_date
        self.first_date = self.first_date or day
        cwd = obj.get("cwd") if isinstance(obj.get("cwd"), str) else None
        self.cwd = self.cwd or cwd  # the session's folder: its repository (suggest.py)
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            return
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                yield from self._links(block["text"], number, day, cwd)
            elif block.get("type") == "tool_use" and isinstance(block.get("input"), dict):
                name, call = str(block.get("name")), block.get("id")
                yield from self._tool(name, block["input"], number, day, cwd, call)

    def _codex(self, obj: dict[str, Any], number: int) -> Iterator[Signal]:
        payload = obj.get("payload")
        if not isinstance(payload, dict):
            return
        day = _date(obj.get("timestamp")) or self.first_date
        self.first_date = self.first_date or day
        if obj.get("type") == "session_meta":  # a sub-agent's uses are its parent's
            self.session = session_of(payload) or self.session
            self.claimed = self.claimed or self.session
            if isinstance(payload.get("cwd"), str):
                self.cwd = payload["cwd"]
            return
        if obj.get("type") != "response_item":
            return
        cwd = self.cwd
        kind = payload.get("type")
        if kind == "message" and payload.get("role") == "assistant":
            for block in payload.get("content") or ():
                text = block.get("text") if isinstance(block, dict) else None
                if isinstance(text, str) and block.get("type") == "output_text":
                    yield from self._links(text, number, day, cwd)
        elif kind == "function_call_output":  # a pending read's result, if any
            yield from self.pending.codex(payload)
        elif kind == "custom_tool_call":  # apply_patch: its input is the patch
            found = lessonsigs.codex(payload.get("name"), payload.get("input"))
            yield from self._found(found, number, day, cwd)
        elif kind == "function_call":
            given = payload.get("arguments") or "{}"
            try:  # a JSON string as Codex writes it; an object taken as it is
                args = given if isinstance(given, dict) else json.loads(given)
            except (ValueError, TypeError, RecursionError):
                return
            name = full_name(payload.get("name"), payload.get("namespace"))
            workdir = args.get("workdir") if isinstance(args, dict) else None
            here = workdir if isinstance(workdir, str) else cwd
            yield from self._found(lessonsigs.codex(name, args), number, day, here)
            if isinstance(args, dict) and vault_tool(name) is not None:
                yield from self._mcp(str(name), args, number, day, cwd, payload.get("call_id"))
            elif isinstance(args, dict):
                yield from self._shell(args.get("command", args.get("cmd")), number, day, here)

    def _links(
        self, text: str, number: int, day: dt.date | None, cwd: str | None
    ) -> Iterator[Signal]:
        for m in itertools.islice(LINK.finditer(text), config.TRANSCRIPT_MAX_LINKS):
            heading = m.group(2)[1:] if m.group(2) else None
            yield Signal("link", m.group(1).strip(), heading, number, self.session, day, cwd)
        if "<cc-memory" in text:
            for m in CC_MEMORY.finditer(text):
                for name in filter(None, (n.strip() for n in m.group(1).split(","))):
                    yield Signal("native", name, None, number, self.session, day, cwd)

    def _tool(
        self,
        name: str,
        args: dict[str, Any],
        number: int,
        day: dt.date | None,
        cwd: str | None,
        call: object = None,
    ) -> Iterator[Signal]:
        yield from self._found(lessonsigs.claude(name, args), number, day, cwd)
        if name == "Skill" and isinstance(args.get("skill"), str):
            yield Signal("skill", args["skill"], None, number, self.session, day, cwd)
        elif name == "Read" and isinstance(args.get("file_path"), str):
            yield Signal("file", args["file_path"], None, number, self.session, day, cwd)
        elif name == "Bash":
            yield from self._shell(args.get("command"), number, day, cwd)
        else:
            yield from self._mcp(name, args, number, day, cwd, call)

    def _found(
        self, found: list[lessonsigs.Found], number: int, day: dt.date | None, cwd: str | None
    ) -> Iterator[Signal]:
        for kind, value, vault in found:
            yield Signal(kind, value, None, number, self.session, day, cwd, vault)

    def _mcp(
        self,
        name: str,
        args: dict[str, Any],
        number: int,
        day: dt.date | None,
        cwd: str | None,
        call: object = None,
    ) -> Iterator[Signal]:
        """A call of the vault's own MCP ``cite`` or ``read`` tool (others say nothing)."""
        tool = vault_tool(name)
        if tool == "cite" and isinstance(args.get("name"), str):
            if isinstance(args.get("evidence"), str):
                value, evidence = args["name"], args["evidence"]
                used = call if isinstance(call, str) and call else None
                session = self.session
                yield Signal("mcp-cite", value, None, number, session, day, cwd, evidence, used)
        elif tool == "read" and isinstance(args.get("path"), str):
            read = Signal("mcp-read", args["path"], None, number, self.session, day, cwd)
            yield from self.pending.wait(call, read)  # a read once its result came back

    def _shell(
        self, command: object, number: int, day: dt.date | None, cwd: str | None
    ) -> Iterator[Signal]:
        for path in shell_reads(command):
            yield Signal("file", path, None, number, self.session, day, cwd)
        for name, vault in shell_uses(command):  # the vault it names, if any, as evidence
            yield Signal("cli-use", name, None, number, self.session, day, cwd, vault)
