"""Has the person trusted our hooks in Codex? Read, never written: trusting is their review.

Codex (0.169+) runs a command hook only once the person trusted it (``/hooks``, then
``t``), which writes into the ``config.toml`` beside ``hooks.json``
``[hooks.state."<hooks.json path>:<event snake_case>:<group>:<handler>"] trusted_hash =
"sha256:<hex>"``: the sha256 of the handler's definition as Codex computes it (codex-rs
``command_hook_hash``: the JSON of ``{event_name, matcher?, hooks: [{type, command,
timeout, async, statusMessage?}]}``, keys sorted, no spaces; checked against the recorded
config.toml in tests/fixtures/hosts/codex-0.169.0/hook-trust/), so a changed command asks again.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.store import tomledit

_WORD = re.compile(r"(?<=[a-z])(?=[A-Z])")
NO_MATCHER = frozenset({"UserPromptSubmit", "Stop", "SessionEnd"})  # Codex ignores theirs
TRUSTED = "trusted in Codex"
NEW = "installed, not yet trusted in Codex (it skips the hook until you do)"
CHANGED = "changed since you trusted it: Codex will ask again"
STEP = "next, in Codex: open /hooks and press t to trust them (Codex never runs an untrusted hook)"
_HEAD = re.compile(r'^\s*\[\s*([A-Za-z0-9_.-]+)\."((?:[^"\\]|\\.)*)"\s*\]\s*$')
_PAIR = re.compile(r'^\s*([A-Za-z0-9_-]+)\s*=\s*(?:"([^"]*)"|(true|false))\s*(?:#.*)?$')


def label(event: str) -> str:
    """Codex's name of a hook event in its keys and hashes: ``PreToolUse`` is ``pre_tool_use``."""
    return _WORD.sub("_", event).lower()


def hook_hash(event: str, group: dict[str, Any], handler: dict[str, Any]) -> str:
    """Codex's trusted_hash of one handler (of ``group``, under ``event``)."""
    default = 1 if event == "SessionEnd" else 600  # an unset timeout, as Codex hashes it
    given = handler.get("timeout", handler.get("timeoutSec"))
    norm: dict[str, Any] = {
        "type": "command",
        "command": handler.get("command"),
        "timeout": max(int(given) if isinstance(given, int) and given else default, 1),
        "async": bool(handler.get("async", False)),
    }
    for key in ("statusMessage", "additionalContextLimit"):
        if handler.get(key) is not None:
            norm[key] = handler[key]
    identity: dict[str, Any] = {"event_name": label(event), "hooks": [norm]}
    if group.get("matcher") is not None and event not in NO_MATCHER:
        identity["matcher"] = group["matcher"]
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def key(hooks_file: Path | str, event: str, group: int, handler: int) -> str:
    return f"{hooks_file}:{label(event)}:{group}:{handler}"


def trusted_hashes(config_toml: Path) -> dict[str, str]:
    """Every ``[hooks.state."KEY"] trusted_hash`` in Codex's config.toml ({} if none)."""
    state = tables(config_toml, "hooks", "state")
    return {
        k: v["trusted_hash"] for k, v in state.items() if isinstance(v.get("trusted_hash"), str)
    }


def tables(config_toml: Path, *prefix: str) -> dict[str, dict[str, Any]]:
    """The ``[PREFIX."KEY"]`` tables of Codex's config.toml by KEY ({} when none, or when
    the file cannot be read or is not TOML: Codex would not read it either)."""
    try:
        text = config_toml.read_bytes().decode("utf-8")
        data: Any = tomledit.load(text, config_toml)
    except (OSError, UnicodeDecodeError, VaultkeeperError):
        return {}
    if data is None:  # Python 3.10: no TOML reader; the tables as Codex writes them
        data = _quoted_tables(text)
    for part in prefix:
        data = data.get(part) if isinstance(data, dict) else None
    return {k: v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}


def _quoted_tables(text: str) -> dict[str, Any]:
    """``[a.b."KEY"]`` tables and their ``name = "text"`` / ``name = true|false`` lines."""
    data: dict[str, Any] = {}
    table: dict[str, Any] | None = None
    for line in text.splitlines():
        head = _HEAD.match(line)
        if head:
            node = data
            for part in head.group(1).split("."):
                node = node.setdefault(part, {})
            table = node.setdefault(head.group(2).encode().decode("unicode_escape"), {})
            continue
        if line.lstrip().startswith("["):
            table = None
        pair = _PAIR.match(line)
        if pair and table is not None:
            text_value, flag = pair.group(2), pair.group(3)
            table[pair.group(1)] = text_value if text_value is not None else flag == "true"
    return data


def state(
    hooks_file: Path, event: str, spot: tuple[int, int], group: dict[str, Any], handler: Any
) -> str:
    """TRUSTED, NEW or CHANGED for the handler at ``spot`` (group, index) of ``event``."""
    known = trusted_hashes(hooks_file.parent / "config.toml")
    keys = {key(hooks_file, event, *spot), key(Path(os.path.realpath(hooks_file)), event, *spot)}
    return verdict([known[k] for k in keys if k in known], event, group, handler)


def verdict(have: list[str], event: str, group: dict[str, Any], handler: Any) -> str:
    """TRUSTED, NEW or CHANGED for a handler whose trusted hashes (if any) are ``have``."""
    if not have:
        return NEW
    return TRUSTED if hook_hash(event, group, handler) in have else CHANGED


def summary(states: tuple[str, ...]) -> str:
    """One word on several handlers' states (a plugin's, in ``hooks status``)."""
    if all(s == TRUSTED for s in states):
        return TRUSTED
    if CHANGED in states:
        return CHANGED
    return "hooks not yet trusted in Codex (it skips them until you do: /hooks, then t)"


def install_lines(states: list[str]) -> list[str]:
    """What ``hooks install codex`` ends with: the one step the person takes in Codex."""
    if states and all(s == TRUSTED for s in states):
        return ["Codex: you have trusted these hooks; nothing to do"]
    lines = []
    if CHANGED in states:
        lines.append("Codex: a hook's command changed since you trusted it: Codex will ask again")
    return [*lines, STEP]
