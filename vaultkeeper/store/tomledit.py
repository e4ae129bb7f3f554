"""Minimal edits to a TOML file's text: find a table (with its sub-tables) by its lines.

No TOML writer is a dependency, and a host's config must keep every other byte, comment
included: so tables are located as text (headers outside multi-line strings), written
as text, and the result is checked with ``tomllib`` where Python has it (3.11+).
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path
from typing import Any

from vaultkeeper.errors import VaultkeeperError

_HEADER = re.compile(r"^[ \t]*\[(?!\[)\s*(?P<name>[^\[\]#\n]*?)\s*\][ \t]*(?:#.*)?\r?\n?$")
_KEY_PART = re.compile(r'\s*(?:"((?:[^"\\]|\\.)*)"|\'([^\']*)\'|([A-Za-z0-9_-]+))\s*(?:\.|$)')


def _table_name(raw: str) -> list[str] | None:
    parts: list[str] = []
    pos = 0
    while pos < len(raw):
        m = _KEY_PART.match(raw, pos)
        if m is None or m.end() == pos:
            return None
        parts.append(next(g for g in m.groups() if g is not None))
        pos = m.end()
    return parts


def table_spans(lines: list[str], name: list[str]) -> list[tuple[int, int]]:
    """(first, end) line ranges of table ``name`` and its sub-tables (trailing blank and
    comment lines left out: they belong to what follows)."""
    spans: list[tuple[int, int]] = []
    start: int | None = None
    quote: str | None = None  # inside a multi-line string: no headers there
    for i, line in enumerate(lines):
        if quote is None:
            m = _HEADER.match(line)
            if m:
                if start is not None:
                    spans.append((start, i))
                    start = None
                found = _table_name(m.group("name"))
                if found is not None and found[: len(name)] == name:
                    start = i
        for q in ('"""', "'''"):
            if line.count(q) % 2 and quote in (None, q):
                quote = None if quote == q else q
    if start is not None:
        spans.append((start, len(lines)))
    merged: list[tuple[int, int]] = []
    for first, end in spans:  # a sub-table right after ours is part of one span
        if merged and merged[-1][1] == first:
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((first, end))
    out = []
    for first, end in merged:
        while end - 1 > first and lines[end - 1].lstrip()[:1] in ("", "#"):
            end -= 1
        out.append((first, end))
    return out


def join_spans(text: str, spans: list[tuple[int, int]]) -> str:
    lines = text.splitlines(keepends=True)
    return "".join("".join(lines[a:b]) for a, b in spans)


def basic_string(value: str) -> str:
    # a JSON string is a TOML basic string, once DEL (raw in JSON, not in TOML) is escaped
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def load(text: str, path: Path) -> dict[str, Any] | None:
    """The parsed text on Python 3.11+ (tomllib), else None: no check is possible there."""
    try:  # imported by name: mypy checks this module as Python 3.10, which has no tomllib
        tomllib: Any = importlib.import_module("tomllib")
    except ImportError:
        return None
    try:
        return dict(tomllib.loads(text))
    except tomllib.TOMLDecodeError as exc:
        raise VaultkeeperError(f"{path}: not valid TOML ({exc}); nothing written") from None
