"""What other programs run or read: Claude Code and Codex settings and hooks, the cron
line, git attributes and merge drivers, MCP registration, and ``hooks status``.

Imports scan (the state file) and store.
"""
