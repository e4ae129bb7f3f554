"""What other programs run or read: Claude Code and Codex settings and hooks, the cron
line, git attributes and merge drivers, MCP registration, and ``hooks status``.

Imports scan (the state file) and store.
"""

from collections.abc import Mapping
from pathlib import Path


def home_path(raw: str, env: Mapping[str, str]) -> Path:
    """``~/...`` under the environment's HOME (a host's files, read or written)."""
    return Path(env.get("HOME") or str(Path.home())) / raw.removeprefix("~/")
