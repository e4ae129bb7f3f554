"""Codex sub-agents: a child thread writes its own rollout, and no hook runs for it.

Codex 0.169 writes a sub-agent's rollout in the same date folder as its parent's; its
first line, ``session_meta``, names the parent in
``payload.source.subagent.thread_spawn.parent_thread_id`` (recorded in
tests/fixtures/hosts/codex-0.169.0/subagent/). Ingesting a parent therefore also reads
its children (and theirs), and a child counts into its parent's session
(``session_of``), whether it came along with the parent or was ingested by hand.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vaultkeeper import config

ROLLOUT_GLOB = "rollout-*.jsonl"
MAX_DEPTH = 4  # a child's child's ...: Codex's own spawn depth is small


def meta(path: Path) -> dict[str, Any] | None:
    """The rollout's ``session_meta`` payload (its first line), or None."""
    try:
        with path.open("rb") as fh:
            raw = fh.readline(config.TRANSCRIPT_MAX_LINE_BYTES + 1)
        obj = json.loads(raw)
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(obj, dict) or obj.get("type") != "session_meta":
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
