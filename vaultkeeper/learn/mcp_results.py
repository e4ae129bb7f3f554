"""Did a host's call of an MCP tool come back with the tool's answer, or fail?

A ``read`` of the vault through its MCP server is a read only when the server answered
it. A host can reject the call before it reaches the server (Codex: "unsupported call:
mcp__vaultkeeper__read" when the tools had not arrived yet, "MCP tool call requires
approval, but approval policy is never" in ``codex exec``; Claude Code: a tool_result
with ``is_error``), and the server itself can refuse it (a path outside the vault).
How each host records the result (tests/fixtures/hosts/, tools/hosts/NOTES.md):

- Claude Code: a ``user`` line holding ``{"type": "tool_result", "tool_use_id": ID,
  "is_error": true, ...}`` for a failed call; a successful one has no ``is_error`` or
  ``false``.
- Codex: a ``function_call_output`` response item with the call's ``call_id``; its
  ``output`` is text (or a list of ``input_text`` items), "Wall time: N seconds\\nOutput:"
  and then the tool's answer: the server's JSON object for a call that reached it, the
  host's or the server's error text otherwise. Some versions wrap it as ``{"content":
  ..., "success": false}``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Generic, TypeVar

T = TypeVar("T")

_CODEX_HEADER = re.compile(r"\AWall time: [^\n]*\n(?:Output:[ \t]*\n?)?")


def claude_failed(block: dict[str, Any]) -> bool:
    """A Claude Code tool_result block of a call that failed or was rejected."""
    return block.get("is_error") is True


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


class Pending(Generic[T]):
    """One transcript's MCP read calls waiting for their result (call id -> the read):
    each is handed out when its result came back as the tool's answer, dropped when it
    failed; one whose result never comes (a cut transcript) is no read known."""

    def __init__(self) -> None:
        self.calls: dict[str, T] = {}

    def __bool__(self) -> bool:
        return bool(self.calls)

    def wait(self, call: object, read: T) -> Iterator[T]:
        """Hold ``read`` until the result of ``call``; without an id to find its result
        by (an older host's line) it is taken as it was called."""
        if isinstance(call, str) and call:
            self.calls[call] = read
        else:
            yield read

    def claude(self, line: dict[str, Any]) -> Iterator[T]:
        """The reads whose tool_result is in this Claude Code ``user`` line and succeeded."""
        message = line.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) and self.calls else ():
            if isinstance(block, dict) and block.get("type") == "tool_result":
                read = self.calls.pop(str(block.get("tool_use_id")), None)
                if read is not None and not claude_failed(block):
                    yield read

    def codex(self, payload: dict[str, Any]) -> Iterator[T]:
        """The read whose Codex function_call_output this is, if it came back."""
        read = self.calls.pop(str(payload.get("call_id")), None)
        if read is not None and not codex_failed(payload.get("output")):
            yield read
