"""Counted reuse: session transcripts (Claude Code, Codex) read as signals, ``ingest``,
shell commands in transcripts, the counting door shared with MCP ``cite``, and ``use``.

Imports apply (its journal and decisions) and everything below it.
"""
