"""How the hosts mark their lines and name the vault's MCP tools (recorded behaviour).

Claude Code ``--fork-session`` copies lines with their ``uuid`` (``made_in``); Codex
0.169 writes a namespaced MCP call as ``name`` + ``namespace`` (``full_name``); both
stamp lines with ISO times (``utc_date``).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from vaultkeeper import config

# A host's name for an MCP server's tool: Claude Code's ``mcp__SERVER__TOOL``; Codex
# has written ``SERVER__TOOL`` and ``SERVER.TOOL``, and 0.169 writes the bare ``TOOL``
# with ``"namespace": "mcp__SERVER"`` beside it. Only the server's own name is taken.
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
        when = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is not None:
        try:
            when = when.astimezone(dt.timezone.utc)
        except OverflowError:  # 9999-12-31T23:59:59-23:59 is past the last UTC day
            return None
    return when.date()
