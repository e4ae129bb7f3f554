"""``hooks status``: is ``vaultkeeper mcp`` registered with each host, and for which vault?

Reads, never writes, the files ``hooks install --mcp`` edits (hosts/mcp.py): Claude
Code's user-scope ``~/.claude.json`` and, when the folder ``hooks status`` runs in has
one, its project-scope ``.mcp.json``; Codex's ``~/.codex/config.toml``. The vault is the
one the entry's command names after ``--vault``; ``dialog`` says whether a deletion is
asked in the host's dialog (``hooks install claude-code --mcp --dialog``: the entry's env)
and, when it is, ``refused`` names a settings file whose Elicitation hook keeps it off
now (hosts/elicitation.py). A file that cannot be read is a note, as an unreadable hooks
file is: status reports, it does not refuse.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.hosts.elicitation import DIALOG_ENV, answering
from vaultkeeper.hosts.hooks import read_settings
from vaultkeeper.hosts.mcp import HOSTS, default_path
from vaultkeeper.store import tomledit

NAME = config.MCP_SERVER_NAME


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
        found = answering(env, cwd)
        why = (
            None
            if not found
            else found[0].line() + (f" (and {len(found) - 1} more)" if len(found) > 1 else "")
        )
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
        data, _ = read_settings(path)
        servers = data.get("mcpServers")
    else:
        if not path.is_file():
            raise VaultkeeperError(f"{path}: not a regular file")
        try:
            text = path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise VaultkeeperError(f"{path}: cannot be read ({exc})") from None
        data_or_none = tomledit.load(text, path)
        if data_or_none is None:  # Python 3.10: no TOML reader; the table's header will do
            found = tomledit.table_spans(text.splitlines(keepends=True), ["mcp_servers", NAME])
            return {} if found else None
        servers = data_or_none.get("mcp_servers")
    entry = servers.get(NAME) if isinstance(servers, dict) else None
    return entry if isinstance(entry, dict) else None
