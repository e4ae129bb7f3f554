"""Which host session a ``tools/call`` belongs to, from the ids the hosts send in ``_meta``.

Recorded (tests/fixtures/hosts/*/mcp/mcp-traffic.jsonl): Codex 0.169 sends
``sessionId`` and ``threadId`` (its rollout's session); Claude Code 2.1.332 sends
``claudecode/toolUseId``, the ``tool_use`` id of the call in its transcript, and no
session id. For Claude Code the session is the transcript that holds that id: the
newest few under ``~/.claude/projects/<the server's cwd, sanitized>/`` are searched
(their tails only). None when no id says: the server's own session counts then.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

CODEX_KEYS = ("sessionId", "threadId")
CLAUDE_TOOL_USE = "claudecode/toolUseId"
_LOOK_IN = 8  # transcripts, newest first
_TAIL_BYTES = 4 << 20  # the call was just made: it is near the end of its transcript
_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,200}$")


def tool_use(meta: Mapping[str, Any] | None) -> str | None:
    found = (meta or {}).get(CLAUDE_TOOL_USE)
    return found if isinstance(found, str) and _ID.match(found) else None


def host_session(meta: Mapping[str, Any] | None, home: Path, cwd: Path) -> str | None:
    """The host's session id of this call, or None when the host said nothing of it."""
    for key in CODEX_KEYS:
        found = (meta or {}).get(key)
        if isinstance(found, str) and _ID.match(found):
            return found
    call = tool_use(meta)
    return None if call is None else claude_session(call, home, cwd)


def claude_session(call: str, home: Path, cwd: Path) -> str | None:
    """The Claude Code transcript (its file's stem) whose tail holds tool_use ``call``."""
    folder = home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(cwd))
    try:
        files = sorted(folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return None
    needle = f'"id":"{call}"'.encode()
    for path in files[:_LOOK_IN]:
        try:
            with path.open("rb") as fh:
                size = fh.seek(0, 2)
                fh.seek(max(0, size - _TAIL_BYTES))
                if needle in fh.read():
                    return path.stem
        except OSError:
            continue
    return None
