"""Register ``vaultkeeper mcp`` with Claude Code (JSON) and Codex (TOML), and remove it.

Claude Code reads ``mcpServers`` from ``~/.claude.json`` (user scope) or a project's
``.mcp.json``; Codex reads ``[mcp_servers.NAME]`` tables from ``~/.codex/config.toml``.
Install sets exactly one entry, ``vaultkeeper``, editing the file's text in place (every
other byte stays; atomic; the file as it was kept as ``.vaultkeeper.bak``; a second
install changes nothing); uninstall removes exactly that entry (and a file install
created, while it held nothing else). No TOML writer is a dependency: the table is
written as text, checked with ``tomllib`` on 3.11+. ``registrations`` reads the same
files for ``hooks status``, with who says yes to a deletion (hosts/elicitation.py).
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.errors import UsageError, VaultkeeperError
from vaultkeeper.hosts import home_path
from vaultkeeper.hosts.elicitation import (
    DIALOG_ENV,
    DIALOG_OFF,
    DIALOG_ON,
    answering,
    check_dialog,
    first_of,
)
from vaultkeeper.hosts.hooks import (
    HOSTS,
    Change,
    host,
    missing_folders,
    read_settings,
    read_text,
    remember_created,
    replace_keeping_backup,
    settle_uninstall,
)
from vaultkeeper.store import jsonedit, tomledit

NAME = config.MCP_SERVER_NAME
_SERVERS_JSON = "mcpServers"
_TABLE = "mcp_servers"


def argv(vault: Path, program: str | None) -> list[str]:
    """The server's command line: this installation's program, the vault, ``mcp``."""
    if program is None:
        raise VaultkeeperError("cannot find the vaultkeeper program to register; is it on PATH?")
    return [program, "--vault", str(vault), "mcp"]


def default_path(target: str, env: Mapping[str, str], project: Path | None = None) -> Path:
    if target == "claude-code" and project is not None:
        return project / config.CLAUDE_PROJECT_MCP
    return home_path(host(target).mcp_file, env)


def registration_file(
    target: str, with_mcp: bool, project: bool, env: Mapping[str, str], cwd: Path
) -> Path | None:
    """The file ``hooks install|uninstall TARGET --mcp [--project]`` edits, or None
    without --mcp; options that do not fit the target are a usage error."""
    if project and not (with_mcp and target == "claude-code"):
        raise UsageError(
            f"--project is for claude-code --mcp (the {config.CLAUDE_PROJECT_MCP} here)"
        )
    if not with_mcp:
        return None
    if target not in HOSTS:
        raise UsageError(f"--mcp is for {' and '.join(HOSTS)}, not {target}")
    return default_path(target, env, cwd if project else None).absolute()


def install(
    target: str,
    path: Path,
    vault: Path,
    program: str | None,
    *,
    write: bool = True,
    dialog: bool = False,
) -> Change:
    """Set our entry; ``write=False`` reads the file and plans the edit, writing nothing,
    so a command editing several files refuses before it has written any of them.
    ``dialog`` (claude-code): the entry's env turns the host's dialog for a deletion on
    (hosts/elicitation.py); an install without it turns it off again."""
    try:  # a server that could not start is not registered: the MCP extra is missing
        sdk = importlib.util.find_spec("mcp")
    except (ImportError, ValueError):
        sdk = None
    if sdk is None:
        raise UsageError(
            "--mcp registers `vaultkeeper mcp`, which needs the optional MCP SDK (mcp is not "
            f"installed): {config.MCP_INSTALL_HINT}; nothing written"
        )
    check_dialog(target, True, dialog)  # --dialog: claude-code only
    command = argv(vault, program)
    real = Path(os.path.realpath(path))  # a symlinked dotfile keeps its link
    made = None if real.exists() else missing_folders(real.parent)
    if target == "codex":
        change = _codex(real, command, write)
    else:
        env = {DIALOG_ENV: "1"} if dialog else {}
        want = {"type": "stdio", "command": command[0], "args": command[1:], "env": env}
        change = _claude(real, want, write)
        said = DIALOG_ON if dialog else DIALOG_OFF
        change = replace(change, actions=(*change.actions, said))
    if write and made is not None and change.changed:  # ours: uninstall may take it away
        remember_created(real, made)
    return change


def uninstall(target: str, path: Path, *, write: bool = True) -> Change:
    """Remove our entry; a file install created goes (with our backup and the folders
    made for it) when nothing but our entry was ever in it, as the hooks' file does.
    ``write=False``: only read and plan (see install)."""
    real = Path(os.path.realpath(path))
    change = _codex(real, None, write) if target == "codex" else _claude(real, None, write)
    if not write:
        return change
    try:  # the file holds nothing now: {}, or (TOML) blank lines only
        text = real.read_bytes().decode("utf-8")
        empty = not text.strip() if target == "codex" else json.loads(text) == {}
    except (OSError, ValueError):
        empty = False
    return settle_uninstall(real, empty, change)


# -- Claude Code: JSON ----------------------------------------------------------------
def _claude(path: Path, want: dict[str, Any] | None, write: bool) -> Change:
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
    new = jsonedit.checked(new, expected, str(path))
    return _write("claude-code", path, raw, new, action, write)


# -- Codex: TOML ----------------------------------------------------------------------
def _table(command: list[str], nl: str) -> str:
    """Our server's table, then one approval table per tool an agent may run alone:
    Codex refuses an unapproved MCP call in `codex exec` ("requires approval")."""
    args = ", ".join(tomledit.basic_string(a) for a in command[1:])
    lines = [
        f"[{_TABLE}.{NAME}]",
        f"command = {tomledit.basic_string(command[0])}",
        f"args = [{args}]",
    ]
    for tool in config.MCP_AGENT_TOOLS:
        approve = tomledit.basic_string(config.CODEX_TOOL_APPROVAL)
        lines += ["", f"[{_TABLE}.{NAME}.tools.{tool}]", f"approval_mode = {approve}"]
    return nl.join([*lines, ""])


def _codex(path: Path, command: list[str] | None, write: bool) -> Change:
    raw = read_text(path) if path.exists() else None
    text = raw or ""
    before = tomledit.load(text, path)
    nl = "\r\n" if "\r\n" in text else "\n"
    lines = text.splitlines(keepends=True)
    spans = tomledit.table_spans(lines, [_TABLE, NAME])
    ours = (before or {}).get(_TABLE, {}).get(NAME) if isinstance(before, dict) else None
    if ours is not None and not spans:
        raise VaultkeeperError(
            f"{path}: {_TABLE}.{NAME} is set in a form vaultkeeper does not edit "
            "(an inline table or dotted keys); change it by hand. Nothing written"
        )
    table = "" if command is None else _table(command, nl)
    if command is not None and len(spans) == 1 and tomledit.join_spans(text, spans) == table:
        return Change("codex", str(path), False, None, (f"kept    mcp server {NAME}",))
    if spans:  # every copy goes; ours takes the first one's place
        at = spans[0][0]
        drop = {i for x, y in spans for i in range(x, y)}
        if command is None and at > 0 and not lines[at - 1].strip():
            at -= 1  # the blank line install put before the table goes too
            drop.add(at)
        rest = "".join(x for i, x in enumerate(lines) if i >= at and i not in drop)
        new = "".join(lines[:at]) + table + rest
    elif command is None:
        return Change("codex", str(path), False, None, (f"absent  mcp server {NAME}",))
    else:  # one blank line between the file's last table and ours
        gap = 0 if not text or text.endswith(nl + nl) else 1 if text.endswith(nl) else 2
        new = text + nl * gap + table
    said = "removed" if command is None else "updated" if spans else "added  "
    action = f"{said} mcp server {NAME}" + (f": {' '.join(command)}" if command else "")
    _toml_check(before, new, command, path)
    change = _write("codex", path, raw, new, action, write)
    if command is None:
        return change
    approved = (
        f"approved in Codex (an agent may run them alone): {', '.join(config.MCP_AGENT_TOOLS)}; "
        f"{', '.join(config.MCP_PERSON_TOOLS)} keeps Codex's approval and asks the person"
    )
    return replace(change, actions=(*change.actions, approved))


def _toml_check(
    before: dict[str, Any] | None, new: str, command: list[str] | None, path: Path
) -> None:
    if before is None:
        return
    expected = json.loads(json.dumps(before, default=str))
    servers = dict(expected.get(_TABLE, {}))
    servers.pop(NAME, None)
    if command is not None:
        approvals = {"approval_mode": config.CODEX_TOOL_APPROVAL}
        tools = dict.fromkeys(config.MCP_AGENT_TOOLS, approvals)
        servers[NAME] = {"command": command[0], "args": command[1:], "tools": tools}
    expected[_TABLE] = servers
    after = json.loads(json.dumps(tomledit.load(new, path), default=str))
    for data in (expected, after):
        if not data.get(_TABLE):  # an emptied [mcp_servers] is the same as none
            data.pop(_TABLE, None)
    if after != expected:
        raise VaultkeeperError(f"{path}: could not edit it in place safely; nothing written")


def _write(target: str, path: Path, raw: str | None, text: str, action: str, write: bool) -> Change:
    if raw is not None and text == raw:
        return Change(target, str(path), False, None, (action,))
    if not write:
        return Change(target, str(path), True, None, (action,))
    backup = replace_keeping_backup(path, raw is not None, text)
    return Change(target, str(path), True, backup, (action,))


@dataclass(frozen=True)
class Registration:
    """Our server's entry (or its absence) in one host file."""

    target: str
    scope: str  # "user" | "project"
    path: str
    registered: bool
    vault: str | None  # what the entry's command names after --vault
    command: str | None  # the entry's command line, as the host will run it
    note: str | None = None  # why the file could not be read
    dialog: bool = False  # a deletion is asked in the host's dialog (--dialog), not queued
    refused: str | None = None  # with dialog: a file whose Elicitation hook keeps it off now

    def line(self) -> str:
        """The status line after the target's column."""
        where = f"{self.path} ({self.scope} scope)"
        if self.note:
            return f"mcp server {NAME}: {where}: {self.note}"
        if not self.registered:
            return f"mcp server {NAME} not registered in {where}"
        said = f"mcp server {NAME} in {where}: vault {self.vault or '(none named)'}: {self.command}"
        return f"{said}; deletions: {self.deletions()}"

    def deletions(self) -> str:
        """Who says yes to a deletion through this server."""
        if not self.dialog:
            return "queued for `vaultkeeper review`"
        if self.refused:
            off = "the dialog (--dialog) is refused while"
            return f"queued for `vaultkeeper review`: {off} {self.refused}"
        return "asked in the host's dialog (--dialog)"


def registrations(
    targets: Iterable[str], env: Mapping[str, str], cwd: Path
) -> tuple[Registration, ...]:
    """One Registration per file of each host in ``targets`` (others are skipped); the
    project's ``.mcp.json`` only when there is one."""
    out: list[Registration] = []
    for target in (t for t in targets if t in HOSTS):
        out.append(_read(target, "user", default_path(target, env)))
        project = default_path(target, env, cwd) if target == "claude-code" else None
        if project is not None and project.exists():
            out.append(_read(target, "project", project.absolute()))
    if any(r.dialog for r in out):  # why the dialog is off now, said once per entry
        why = first_of(answering(env, cwd))
        out = [replace(r, refused=why) if r.dialog else r for r in out]
    return tuple(out)


def _read(target: str, scope: str, path: Path) -> Registration:
    try:
        entry = _entry(target, path) if path.exists() else None
    except (VaultkeeperError, OSError) as exc:
        note = str(exc).removesuffix("; nothing written")
        return Registration(target, scope, str(path), False, None, None, note)
    if entry is None:
        return Registration(target, scope, str(path), False, None, None)
    command = entry.get("command")
    args = entry.get("args")
    argv = [str(command)] if isinstance(command, str) else []
    if isinstance(args, list):
        argv += [str(a) for a in args]
    vault = argv[argv.index("--vault") + 1] if "--vault" in argv[:-1] else None
    env = entry.get("env")
    dialog = isinstance(env, dict) and env.get(DIALOG_ENV) == "1" and target == "claude-code"
    return Registration(target, scope, str(path), True, vault, " ".join(argv) or None, None, dialog)


def _entry(target: str, path: Path) -> dict[str, Any] | None:
    """Our server's table or object in the file; None when it holds none."""
    if target == "claude-code":
        servers = read_settings(path)[0].get(_SERVERS_JSON)
    else:
        text = read_text(path)
        data_or_none = tomledit.load(text, path)
        if data_or_none is None:  # Python 3.10: no TOML reader; the table's header will do
            found = tomledit.table_spans(text.splitlines(keepends=True), [_TABLE, NAME])
            return {} if found else None
        servers = data_or_none.get(_TABLE)
    entry = servers.get(NAME) if isinstance(servers, dict) else None
    return entry if isinstance(entry, dict) else None
