"""Read agent session transcripts (Claude Code and Codex JSONL) as a stream of signals.

A transcript is read line by line with a cap on each line, so memory stays bounded
whatever the file's size, and a single huge line is skipped without being held whole.
A line that is not JSON, half written, or of a type not known here is skipped. Only
the agent's own words and tool calls are looked at: the person's text and tool output
never yield a signal, but for whether a vault MCP ``read`` call came back.
How each host marks its lines, reports a tool call's result and files a sub-agent's
rollout (recorded behaviour) is at the end. This module knows nothing of the vault;
ingest.py maps the signals onto it.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.learn.shellwords import said
from vaultkeeper.store.model import parse_date
from vaultkeeper.store.uses import capped_lines

CLAUDE = "claude-code"
CODEX = "codex"
_CODEX_TYPES = frozenset({"session_meta", "response_item", "turn_context", "event_msg"})
_CLAUDE_TYPES = frozenset({"user", "assistant", "system", "summary", "attachment"})
# [[target#heading|alias]] (and ![[...]] embeds): the target, then the heading part.
LINK = re.compile(r"\[\[([^\[\]|#\n]*)(#[^\[\]|\n]*)?(?:\|[^\[\]\n]*)?\]\]")
# Claude Code's model wraps a sentence of its reply that uses an auto memory in this tag.
CC_MEMORY = re.compile(r'<cc-memory\s+filenames="([^"<>]*)"')
# Per host, the bytes of a line worth parsing (the agent's), and of one that may hold a
# pending call's result.
_CODEX_WORTH = (b"assistant", b"function_call", b"session_meta", b"custom_tool_call")
_WORTH = {CLAUDE: ((b"assistant",), b"tool_result"), CODEX: (_CODEX_WORTH, b"function_call")}


@dataclass(frozen=True)
class Signal:
    """One thing the agent did: ``link`` (target, heading), ``skill`` (name), ``file``
    (a path it read; ``cwd`` resolves a relative one), ``mcp-cite`` (a call of the
    vault's MCP ``cite`` tool: the name it cited, and the ``evidence`` it gave),
    ``mcp-read`` (a call of its ``read`` tool: the vault-relative path), ``cli-use``
    (a shell's ``vaultkeeper use NAME``: the name, and as ``evidence`` the vault its
    ``--vault`` names, if it names one), ``native`` (a file name in a
    ``<cc-memory filenames=...>`` tag of the reply: an auto memory it used); ``edit`` (a
    file a tool edited) and ``new`` (the entry a ``new`` call wrote: the lesson ties below)."""

    kind: str
    value: str
    heading: str | None
    line: int
    session: str
    date: dt.date | None
    cwd: str | None
    evidence: str | None = None
    call: str | None = None  # the host's id of an MCP call (Claude Code's the server logs)


def _lines(path: Path) -> Iterator[tuple[int, bytes | None]]:
    with path.open("rb") as fh:
        yield from capped_lines(fh, config.TRANSCRIPT_MAX_LINE_BYTES)


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
    """Iterate one transcript's signals; ``bad`` and ``long`` count the lines skipped
    (not JSON, over the length cap). What differs between the hosts is how a line says
    what the agent did; each host's lines become the same items here: the agent's text,
    its tool calls (name, arguments, call id) and the results of its MCP reads."""

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
        self.pending: dict[str, Signal] = {}  # MCP reads waiting for their result, by call id
        self._at: tuple[int, dt.date | None] = (0, None)  # the line read: number, day

    def __iter__(self) -> Iterator[Signal]:
        claude = self.format == CLAUDE
        agents, result = _WORTH[self.format]
        for number, raw in _lines(self.path):
            if raw is None:
                self.long += 1
                continue
            if not any(w in raw for w in agents) and not (self.pending and result in raw):
                continue  # not the agent's line: parsing every tool result would be slow
            obj = _load(raw)
            if obj is None:
                self.bad += int(bool(raw.strip()))
                continue
            day = utc_date(obj.get("timestamp")) or self.first_date
            self.first_date, self._at = self.first_date or day, (number, day)
            yield from (self._claude(obj) if claude else self._codex(obj))

    def _signal(self, kind: str, value: str, cwd: str | None, **more: Any) -> Signal:
        number, day = self._at
        return Signal(
            kind, value, more.pop("heading", None), number, self.session, day, cwd, **more
        )

    def _claude(self, obj: dict[str, Any]) -> Iterator[Signal]:
        message = obj.get("message")
        if not isinstance(message, dict):
            return
        content = message.get("content")
        if obj.get("type") != "assistant":  # a user line: a pending read's tool result?
            for block in content if isinstance(content, list) and self.pending else ():
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    read = self.pending.pop(str(block.get("tool_use_id")), None)
                    if read is not None and block.get("is_error") is not True:
                        yield read
            return
        if message.get("role", "assistant") != "assistant":
            return
        if obj.get("madeBy") not in (None, "model"):  # "input": history a caller passed in
            return
        if isinstance(obj.get("sessionId"), str) and obj["sessionId"]:
            self.session = obj["sessionId"]
            self.claimed = self.claimed or self.session
        owner = made_in(obj, self.session, self.made)
        if owner is None:  # a line this batch read already, in another session
            return
        cwd = obj.get("cwd") if isinstance(obj.get("cwd"), str) else None
        self.cwd = self.cwd or cwd  # the session's folder: its repository (anchors/vault.py)
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks if isinstance(blocks, list) else ():
            if not isinstance(block, dict):
                continue
            found: Iterator[Signal] = iter(())
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                found = self._links(block["text"], cwd)
            elif block.get("type") == "tool_use" and isinstance(block.get("input"), dict):
                found = self._call(str(block.get("name")), block["input"], cwd, block.get("id"))
            for signal in found:  # a fork's copy: its source's use, counted there once
                yield signal if owner == self.session else replace(signal, session=owner)

    def _codex(self, obj: dict[str, Any]) -> Iterator[Signal]:
        payload = obj.get("payload")
        if not isinstance(payload, dict):
            return
        if obj.get("type") == "session_meta":  # a sub-agent's uses are its parent's
            self.session = session_of(payload) or self.session
            self.claimed = self.claimed or self.session
            if isinstance(payload.get("cwd"), str):
                self.cwd = payload["cwd"]
            return
        if obj.get("type") != "response_item":
            return
        cwd, kind = self.cwd, payload.get("type")
        if kind == "message" and payload.get("role") == "assistant":
            for block in payload.get("content") or ():
                text = block.get("text") if isinstance(block, dict) else None
                if isinstance(text, str) and block.get("type") == "output_text":
                    yield from self._links(text, cwd)
        elif kind == "function_call_output":  # a pending read's result, if any
            read = self.pending.pop(str(payload.get("call_id")), None)
            if read is not None and not codex_failed(payload.get("output")):
                yield read
        elif kind == "custom_tool_call":  # apply_patch: its input is the patch
            if payload.get("name") == "apply_patch":
                yield from (self._signal("edit", p, cwd) for p in patched(payload.get("input")))
        elif kind == "function_call":
            given = payload.get("arguments") or "{}"
            try:  # a JSON string as Codex writes it; an object taken as it is
                args = given if isinstance(given, dict) else json.loads(given)
            except (ValueError, TypeError, RecursionError):
                return
            name = full_name(payload.get("name"), payload.get("namespace"))
            yield from self._call(name, args, cwd, payload.get("call_id"))

    def _links(self, text: str, cwd: str | None) -> Iterator[Signal]:
        for m in itertools.islice(LINK.finditer(text), config.TRANSCRIPT_MAX_LINKS):
            heading = m.group(2)[1:] if m.group(2) else None
            yield self._signal("link", m.group(1).strip(), cwd, heading=heading)
        if "<cc-memory" in text:
            for m in CC_MEMORY.finditer(text):
                for name in filter(None, (n.strip() for n in m.group(1).split(","))):
                    yield self._signal("native", name, cwd)

    def _call(self, name: object, args: object, cwd: str | None, call: object) -> Iterator[Signal]:
        """One tool call: a call of the vault's own MCP tools (``cite``, ``read``, a new
        lesson or decision); else the files it edits (the host's edit tools, Codex's
        apply_patch), a Claude Code Skill or Read, and a shell command's file reads,
        ``vaultkeeper use`` and ``vaultkeeper new`` (Claude Code's Bash; any Codex call)."""
        if not isinstance(args, dict):
            return
        tool, codex = vault_tool(name), self.format == CODEX
        workdir = args.get("workdir") if codex else None
        here = workdir if isinstance(workdir, str) else cwd
        if tool in ("new_lesson", "new_decision"):
            kind = "memory" if tool == "new_lesson" else "decision"
            rel = entry_of(kind, args.get("name"), args.get("project"))
            yield from [self._signal("new", rel, here)] if rel else []
        elif tool == "cite" and isinstance(args.get("name"), str):
            if isinstance(args.get("evidence"), str):
                used = call if isinstance(call, str) and call else None
                evidence = args["evidence"]
                yield self._signal("mcp-cite", args["name"], cwd, evidence=evidence, call=used)
        elif tool == "read" and isinstance(args.get("path"), str):
            read = self._signal("mcp-read", args["path"], cwd)
            if isinstance(call, str) and call:  # held until its result comes back
                self.pending[call] = read
            else:  # an older host's line, without an id to find its result by
                yield read
        if tool is not None:
            return  # the vault's other tools say nothing
        command = args.get("command", args.get("cmd")) if codex else None
        if codex:  # apply_patch: an argument or the shell command carries the patch
            words = command if isinstance(command, list) else []
            for value in [*args.values(), *words]:
                yield from (self._signal("edit", p, here) for p in patched(value))
        elif name in EDIT_TOOLS:
            path = args.get(EDIT_TOOLS[str(name)])
            yield from [self._signal("edit", path, here)] if isinstance(path, str) and path else []
        elif name == "Skill" and isinstance(args.get("skill"), str):
            yield self._signal("skill", args["skill"], cwd)
        elif name == "Read" and isinstance(args.get("file_path"), str):
            yield self._signal("file", args["file_path"], cwd)
        command = args.get("command") if name == "Bash" else command
        if name != "Bash" and not codex:
            return
        shell = said(command)
        for kind, entry, project, vault in shell.news:
            rel = entry_of(kind, entry, project)
            yield from [self._signal("new", rel, here, evidence=vault)] if rel else []
        yield from (self._signal("file", path, here) for path in shell.reads)
        for used_name, vault in shell.uses:  # the vault it names, as evidence
            yield self._signal("cli-use", used_name, here, evidence=vault)


# -- host lines: how the hosts mark their lines and name the vault's MCP tools: Claude
# Code's ``mcp__SERVER__TOOL``; Codex's ``SERVER__TOOL``, ``SERVER.TOOL``, and since 0.169
# the bare ``TOOL`` with ``"namespace": "mcp__SERVER"`` beside it (``full_name``).
_MCP_TOOL = re.compile(r"^(?:mcp__)?(?P<server>[\w-]+?)(?:__|\.)(?P<tool>[\w-]+)$")
# Claude Code names a plugin's server ``plugin_<plugin>_<server>``: our plugin's
# (plugins/vaultkeeper in the repository) is ``mcp__plugin_vaultkeeper_vaultkeeper__cite``.
_SERVERS = frozenset(
    {config.MCP_SERVER_NAME, f"plugin_{config.MCP_SERVER_NAME}_{config.MCP_SERVER_NAME}"}
)


def made_in(obj: dict[str, Any], session: str, made: dict[str, str]) -> str | None:
    """The session a Claude Code line belongs to: ``--fork-session`` copies the source's
    lines under the new sessionId with their ``uuid`` and ``requestSessionId`` naming
    the source, so a copy is the source's use (a pattern counts once per session,
    whichever file is ingested first). None: this uuid was read in another session."""
    source = obj.get("requestSessionId")
    owner = source if isinstance(source, str) and source else session
    uuid = obj.get("uuid")
    if not isinstance(uuid, str) or not uuid:
        return owner
    first = made.setdefault(uuid, owner)
    return owner if first == owner else None


def full_name(name: object, namespace: object) -> object:
    """Codex's namespaced call (``namespace: "mcp__SERVER"``, ``name: "TOOL"``) as one name."""
    if isinstance(name, str) and isinstance(namespace, str) and namespace:
        return f"{namespace.rstrip('_')}__{name}"
    return name


def vault_tool(name: object) -> str | None:
    """The tool's name when ``name`` is a tool of the vaultkeeper MCP server, else None."""
    match = _MCP_TOOL.match(name) if isinstance(name, str) else None
    if match is None or match["server"].casefold() not in _SERVERS:
        return None
    return match["tool"]


def utc_date(stamp: object) -> dt.date | None:
    """The UTC day of a line's ISO timestamp, or None when it has none."""
    if not isinstance(stamp, str) or len(stamp) < 10:
        return None
    try:
        return parse_date(dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")))
    except ValueError:
        return None


# -- MCP results: a vault ``read`` through MCP is a read only when the server answered it;
# a host can reject the call first (Codex: "unsupported call", "approval policy is
# never"; Claude Code: a tool_result with ``is_error``) and the server can refuse it. As
# recorded (tests/fixtures/hosts/, tools/hosts/NOTES.md): Claude Code's ``user`` line
# holds ``{"type": "tool_result", "tool_use_id": ID, "is_error": true}`` for a failed
# call; Codex's ``function_call_output`` (by ``call_id``) has an ``output`` text (or
# ``input_text`` items, or ``{"content": ..., "success": false}``), "Wall time: N
# seconds\\nOutput:", then the server's JSON object, or else an error text.

_CODEX_HEADER = re.compile(r"\AWall time: [^\n]*\n(?:Output:[ \t]*\n?)?")


def codex_failed(output: Any) -> bool:
    """A Codex function_call_output's ``output`` that is not the vault tool's answer
    (the tools answer a JSON object): the call was rejected or failed."""
    if isinstance(output, dict):
        if output.get("success") is False:
            return True
        output = output.get("content")
    if isinstance(output, list):
        parts = [item.get("text") for item in output if isinstance(item, dict)]
        output = "\n".join(p for p in parts if isinstance(p, str))
    if not isinstance(output, str):
        return True
    body = _CODEX_HEADER.sub("", output.lstrip(), count=1)
    return not body.lstrip().startswith("{")


# -- Codex sub-agents: a child thread writes its own rollout in its parent's date folder,
# and no hook runs for it; its ``session_meta`` names the parent in
# ``payload.source.subagent.thread_spawn.parent_thread_id`` (recorded in
# tests/fixtures/hosts/codex-0.169.0/subagent/). A parent's ingest reads its children too,
# and a child counts into its parent's session (``session_of``).

ROLLOUT_GLOB = "rollout-*.jsonl"
MAX_DEPTH = 4  # a child's child's ...: Codex's own spawn depth is small


def meta(path: Path) -> dict[str, Any] | None:
    """The rollout's ``session_meta`` payload (its first line), or None; None for what is
    not a regular file (a FIFO named as a rollout would be waited on for ever)."""
    try:
        with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC), "rb") as fh:
            regular = stat.S_ISREG(os.fstat(fh.fileno()).st_mode)
            obj = _load(fh.readline(config.TRANSCRIPT_MAX_LINE_BYTES + 1)) if regular else None
    except OSError:
        return None
    if obj is None or obj.get("type") != "session_meta":
        return None
    payload = obj.get("payload")
    return payload if isinstance(payload, dict) else None


def parent_thread(payload: dict[str, Any]) -> str | None:
    """The parent thread a sub-agent's session_meta names, or None for a root thread."""
    source = payload.get("source")
    spawn = source.get("subagent", {}) if isinstance(source, dict) else {}
    spawn = spawn.get("thread_spawn", {}) if isinstance(spawn, dict) else {}
    parent = spawn.get("parent_thread_id") if isinstance(spawn, dict) else None
    return parent if isinstance(parent, str) and parent else None


def session_of(payload: dict[str, Any]) -> str | None:
    """The session a rollout's uses count into: its own id, or for a sub-agent its
    root's (``session_id``, which Codex sets to the root thread), else its parent's."""
    own = payload.get("id")
    parent = parent_thread(payload)
    if parent is None:
        return own if isinstance(own, str) and own else None
    root = payload.get("session_id")
    return root if isinstance(root, str) and root and root != own else parent


def children(path: Path) -> list[Path]:
    """The rollouts of the sub-agents ``path``'s thread spawned (and theirs), oldest first."""
    found_meta = meta(path) if path.name.startswith("rollout-") else None
    own = found_meta.get("id") if found_meta else None
    if not isinstance(own, str) or not own:
        return []
    try:
        siblings = sorted(p for p in path.parent.glob(ROLLOUT_GLOB) if p.name > path.name)
    except OSError:
        return []
    parents, found = {own}, []
    for _ in range(MAX_DEPTH):
        more = []
        for sibling in siblings:
            if sibling in found:
                continue
            payload = meta(sibling)
            if payload is not None and parent_thread(payload) in parents:
                more.append(sibling)
                parents.add(str(payload.get("id")))
        if not more:
            break
        found += more
    return sorted(found)


# -- lesson ties (learn/ingest.py makes them suggested anchors): the lesson a session
# wrote (``vaultkeeper new memory|decision NAME -p P`` in its shell, MCP ``new_lesson`` /
# ``new_decision``: ``projects/P/memory/NAME.md``) and the files it edited (Claude Code's
# edit tools; Codex's ``apply_patch``, whose ``*** Update File:`` / ``*** Add File:``
# lines name them).

EDIT_TOOLS = {"Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path",
              "NotebookEdit": "notebook_path"}  # fmt: skip
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add) File: (.+?)\s*$", re.M)
_NAME = re.compile(r"[\w.-]+\Z")
MAX_PATCH_CHARS = 2_000_000  # a larger patch is not looked into


def entry_of(kind: object, name: object, project: object) -> str | None:
    """``projects/P/memory/NAME.md`` of a new memory or decision; None for anything else."""
    if kind not in ("memory", "decision") or not isinstance(name, str):
        return None
    if not isinstance(project, str) or not _NAME.match(name) or not _NAME.match(project):
        return None
    if name.startswith(".") or project.startswith("."):
        return None
    return f"projects/{project}/memory/{name}.md"


def patched(text: object) -> list[str]:
    """The files an apply_patch text updates or adds."""
    if not isinstance(text, str) or "*** " not in text or len(text) > MAX_PATCH_CHARS:
        return []
    return _PATCH_FILE.findall(text)
