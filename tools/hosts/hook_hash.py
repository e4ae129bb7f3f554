#!/usr/bin/env python3
"""Codex's hook trust hash (`[hooks.state."KEY"] trusted_hash = "sha256:..."`), in Python.

A reference implementation of codex-rs/hooks/src/engine/discovery.rs `command_hook_hash`
plus codex-rs/config/src/fingerprint.rs `version_for_toml`, checked against what Codex
0.169.0 itself wrote (tests/fixtures/hosts/codex-0.169.0/hook-trust/). See NOTES.md.

    python hook_hash.py ~/.codex/hooks.json     # prints KEY and hash of every handler
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# HookEventName -> the snake_case label used in keys and in the hashed identity
EVENT_LABELS = {
    "PreToolUse": "pre_tool_use",
    "PermissionRequest": "permission_request",
    "PostToolUse": "post_tool_use",
    "PreCompact": "pre_compact",
    "PostCompact": "post_compact",
    "SessionStart": "session_start",
    "UserPromptSubmit": "user_prompt_submit",
    "SubagentStart": "subagent_start",
    "SubagentStop": "subagent_stop",
    "Stop": "stop",
    "SessionEnd": "session_end",
}
# events whose matcher Codex ignores (matcher_pattern_for_event gives None for them)
NO_MATCHER = {"UserPromptSubmit", "Stop", "SessionEnd"}


def codex_hook_hash(event: str, group: dict[str, Any], handler: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of {event_name, matcher?, hooks: [normalized handler]}."""
    # an unset timeout is hashed as its default: 600 s, but 1 s for SessionEnd (observed in
    # 0.169.0: the hash Codex wrote for an untimed SessionEnd handler matches only timeout 1)
    default = 1 if event == "SessionEnd" else 600
    norm: dict[str, Any] = {
        "type": "command",
        "command": handler["command"],
        "timeout": max(int(handler.get("timeout", handler.get("timeoutSec")) or default), 1),
        "async": bool(handler.get("async", False)),
    }
    if handler.get("statusMessage") is not None:
        norm["statusMessage"] = handler["statusMessage"]
    if handler.get("additionalContextLimit") is not None:
        norm["additionalContextLimit"] = handler["additionalContextLimit"]
    identity: dict[str, Any] = {"event_name": EVENT_LABELS[event], "hooks": [norm]}
    matcher = group.get("matcher")
    if matcher is not None and event not in NO_MATCHER:
        identity["matcher"] = matcher
    # TOML drops None; JSON with every object's keys sorted, no whitespace, UTF-8
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def hook_keys(
    source: Path, hooks_file: dict[str, Any]
) -> Iterator[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    """(key, event, group, handler) for every command handler of a hooks.json."""
    for event, groups in hooks_file.get("hooks", {}).items():
        for gi, group in enumerate(groups):
            for hi, handler in enumerate(group.get("hooks", [])):
                if handler.get("type", "command") != "command":
                    continue
                yield f"{source}:{EVENT_LABELS[event]}:{gi}:{hi}", event, group, handler


def main() -> int:
    path = Path(sys.argv[1]).expanduser().resolve()
    for key, event, group, handler in hook_keys(path, json.loads(path.read_text())):
        print(f'[hooks.state."{key}"]\ntrusted_hash = "{codex_hook_hash(event, group, handler)}"')
    return 0


if __name__ == "__main__":
    sys.exit(main())
