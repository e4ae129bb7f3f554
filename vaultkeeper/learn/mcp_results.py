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
from typing import Any

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
