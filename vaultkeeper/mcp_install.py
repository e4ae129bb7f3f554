"""Register ``vaultkeeper mcp`` with Claude Code (JSON) and Codex (TOML), and remove it.

Claude Code reads ``mcpServers`` from ``~/.claude.json`` (user scope) or a project's
``.mcp.json``; Codex reads ``[mcp_servers.NAME]`` tables from ``~/.codex/config.toml``.
Each install sets exactly one entry, ``vaultkeeper``, by editing the file's text in
place: every other server, key, comment and byte stays as it was; the write is atomic,
the file as it was is kept beside it (``.vaultkeeper.bak``), a second install changes
nothing, and uninstall removes exactly that entry. No TOML writer is a dependency: the
table is written as text, and on Python 3.11+ ``tomllib`` checks the result.
"""

from __future__ import annotations

import importlib
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vaultkeeper import config, jsonedit
from vaultkeeper.errors import UsageError, VaultkeeperError
from vaultkeeper.hooks import Change, read_settings, replace_keeping_backup

HOSTS = ("claude-code", "codex")
NAME = config.MCP_SERVER_NAME
_SERVERS_JSON = "mcpServers"
_TABLE = "mcp_servers"


def argv(vault: Path, program: str | None) -> list[str]:
    """The server's command line: this installation's program, the vault, ``mcp``."""
    if program is None:
        raise VaultkeeperError("cannot find the vaultkeeper program to register; is it on PATH?")
    return [program, "--vault", str(vault), "mcp"]


def default_path(target: str, env: Mapping[str, str], project: Path | None = None) -> Path:
    if target not in HOSTS:
        raise UsageError(f"unknown host {target!r}; one of {', '.join(HOSTS)}")
    if target == "claude-code" and project is not None:
        return project / config.CLAUDE_PROJECT_MCP
    home = env.get("HOME") or str(Path.home())
    raw = config.CLAUDE_USER_CONFIG if target == "claude-code" else config.CODEX_CONFIG
    return Path(home) / raw.removeprefix("~/")


def install(target: str, path: Path, vault: Path, program: str | None) -> Change:
    command = argv(vault, program)
    real = Path(os.path.realpath(path))  # a symlinked dotfile keeps its link
    if target == "codex":
        return _codex(real, command)
    return _claude(real, {"type": "stdio", "command": command[0], "args": command[1:], "env": {}})


def uninstall(target: str, path: Path) -> Change:
    real = Path(os.path.realpath(path))
    return _codex(real, None) if target == "codex" else _claude(real, None)


def registered(target: str, path: Path) -> list[str] | None:
    """Our server's command line as registered in ``path``, or None."""
    if not path.is_file():
        return None
    if target == "codex":
        text = _read_text(path)
        spans = _our_spans(text.splitlines(keepends=True))
        if not spans:
            return None
        found = re.findall(r"^\s*(command|args)\s*=\s*(.+?)\s*$", _join(text, spans), re.M)
        values = {k: json.loads(v) for k, v in found if _json_ok(v)}
        command, args = values.get("command"), values.get("args")
        return [command, *args] if isinstance(command, str) and isinstance(args, list) else None
    data, _ = read_settings(path)
    entry = (data.get(_SERVERS_JSON) or {}).get(NAME)
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return None
    return [entry["command"], *[str(a) for a in entry.get("args") or []]]


def registrations(
    targets: list[str], env: Mapping[str, str], cwd: Path
) -> list[tuple[str, str, list[str] | None]]:
    """(host, file, our command line or None) for ``hooks status``; a project's .mcp.json
    only when there is one. A file that cannot be read reads as not registered."""
    out: list[tuple[str, str, list[str] | None]] = []
    for target in targets:
        paths = [default_path(target, env)]
        project = default_path(target, env, cwd)
        if target == "claude-code" and project.is_file():
            paths.append(project)
        for path in paths:
            try:
                found = registered(target, path)
            except (VaultkeeperError, OSError):
                found = None
            out.append((target, str(path), found))
    return out


# -- Claude Code: JSON ----------------------------------------------------------------
def _claude(path: Path, want: dict[str, Any] | None) -> Change:
    data, raw = read_settings(path)
    text = raw if raw is not None and raw.strip() else "{}\n"
    servers = data.get(_SERVERS_JSON)
    if servers is not None and not isinstance(servers, dict):
        raise VaultkeeperError(f'{path}: "{_SERVERS_JSON}" is not an object; nothing written')
    have = (servers or {}).get(NAME)
    if want is None and have is None:
        return Change("claude-code", str(path), False, None, (f"absent  mcp server {NAME}",))
    if want is not None and have == want:
        return Change("claude-code", str(path), False, None, (f"kept    mcp server {NAME}",))
    unit = jsonedit.indent_unit(text)
    top = jsonedit.parse_object(text, 0)
    member = top.find(_SERVERS_JSON)
    expected = dict(data)
    if want is not None:
        expected[_SERVERS_JSON] = {**(servers or {}), NAME: want}
        if member is None:
            new = jsonedit.set_member(text, top, _SERVERS_JSON, {NAME: want}, unit)
        else:
            inner = jsonedit.parse_object(text, member.value_start)
            new = jsonedit.set_member(text, inner, NAME, want, unit)
        action = f"{'updated' if have is not None else 'added  '} mcp server {NAME}: "
        action += " ".join([want["command"], *want["args"]])
    else:
        rest = {k: v for k, v in (servers or {}).items() if k != NAME}
        assert member is not None
        if rest:
            expected[_SERVERS_JSON] = rest
            inner = jsonedit.parse_object(text, member.value_start)
            new = jsonedit.remove_member(text, inner, NAME)
        else:  # the list was only ours: it goes, as an emptied hooks list does
            del expected[_SERVERS_JSON]
            new = jsonedit.remove_member(text, top, _SERVERS_JSON)
        action = f"removed mcp server {NAME}"
    return _write("claude-code", path, raw, jsonedit.checked(new, expected, str(path)), action)


# -- Codex: TOML ----------------------------------------------------------------------
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


def _our_spans(lines: list[str]) -> list[tuple[int, int]]:
    """(first, end) line ranges of our table and its sub-tables, trailing blanks left out."""
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
                name = _table_name(m.group("name"))
                if name is not None and name[:2] == [_TABLE, NAME]:
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


def _join(text: str, spans: list[tuple[int, int]]) -> str:
    lines = text.splitlines(keepends=True)
    return "".join("".join(lines[a:b]) for a, b in spans)


def _json_ok(value: str) -> bool:
    try:
        json.loads(value)
    except ValueError:
        return False
    return True


def _toml_string(value: str) -> str:
    # a JSON string is a TOML basic string, once DEL (raw in JSON, not in TOML) is escaped
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def _table(command: list[str], nl: str) -> str:
    args = ", ".join(_toml_string(a) for a in command[1:])
    return nl.join(
        [f"[{_TABLE}.{NAME}]", f"command = {_toml_string(command[0])}", f"args = [{args}]", ""]
    )


def _codex(path: Path, command: list[str] | None) -> Change:
    raw = _read_text(path) if path.exists() else None
    text = raw or ""
    before = _toml_load(text, path)
    nl = "\r\n" if "\r\n" in text else "\n"
    lines = text.splitlines(keepends=True)
    spans = _our_spans(lines)
    ours = (before or {}).get(_TABLE, {}).get(NAME) if isinstance(before, dict) else None
    if ours is not None and not spans:
        raise VaultkeeperError(
            f"{path}: {_TABLE}.{NAME} is set in a form vaultkeeper does not edit "
            "(an inline table or dotted keys); change it by hand. Nothing written"
        )
    if command is None:
        if not spans:
            return Change("codex", str(path), False, None, (f"absent  mcp server {NAME}",))
        drop = {i for a, b in spans for i in range(a, b)}
        first = spans[0][0]
        if first > 0 and not lines[first - 1].strip():
            drop.add(first - 1)  # the blank line install put before the table
        new = "".join(x for i, x in enumerate(lines) if i not in drop)
        action = f"removed mcp server {NAME}"
    else:
        table = _table(command, nl)
        if len(spans) == 1 and _join(text, spans) == table:
            return Change("codex", str(path), False, None, (f"kept    mcp server {NAME}",))
        if spans:  # the first copy is replaced where it stands, any other goes
            a, b = spans[0]
            drop = {i for x, y in spans[1:] for i in range(x, y)}
            rest = "".join(x for i, x in enumerate(lines) if i >= b and i not in drop)
            new = "".join(lines[:a]) + table + rest
            action = f"updated mcp server {NAME}: {' '.join(command)}"
        else:
            # one blank line between the file's last table and ours
            gap = 0 if not text or text.endswith(nl + nl) else 1 if text.endswith(nl) else 2
            sep = nl * gap
            new = text + sep + table
            action = f"added   mcp server {NAME}: {' '.join(command)}"
    _toml_check(before, new, command, path)
    return _write("codex", path, raw, new, action)


def _read_text(path: Path) -> str:
    if not path.is_file():
        raise VaultkeeperError(f"{path}: not a regular file; nothing written")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise VaultkeeperError(f"{path}: not UTF-8 text; nothing written") from None


def _toml_load(text: str, path: Path) -> dict[str, Any] | None:
    """The parsed file on Python 3.11+ (tomllib), else None: no check is possible."""
    try:  # imported by name: mypy checks this module as Python 3.10, which has no tomllib
        tomllib: Any = importlib.import_module("tomllib")
    except ImportError:
        return None
    try:
        return dict(tomllib.loads(text))
    except tomllib.TOMLDecodeError as exc:
        raise VaultkeeperError(f"{path}: not valid TOML ({exc}); nothing written") from None


def _toml_check(
    before: dict[str, Any] | None, new: str, command: list[str] | None, path: Path
) -> None:
    if before is None:
        return
    expected = json.loads(json.dumps(before, default=str))
    servers = dict(expected.get(_TABLE, {}))
    servers.pop(NAME, None)
    if command is not None:
        servers[NAME] = {"command": command[0], "args": command[1:]}
    expected[_TABLE] = servers
    after = json.loads(json.dumps(_toml_load(new, path), default=str))
    for data in (expected, after):
        if not data.get(_TABLE):  # an emptied [mcp_servers] is the same as none
            data.pop(_TABLE, None)
    if after != expected:
        raise VaultkeeperError(f"{path}: could not edit it in place safely; nothing written")


def _write(target: str, path: Path, raw: str | None, text: str, action: str) -> Change:
    if raw is not None and text == raw:
        return Change(target, str(path), False, None, (action,))
    backup = replace_keeping_backup(path, raw is not None, text)
    return Change(target, str(path), True, backup, (action,))
