"""`hooks status`: what is installed where (hooks, MCP entries, plugins, cron, git), and
each vault's last scan; cli.py adds it to the hooks group.

For Claude Code the project's own ``.claude/settings.json`` and
``.claude/settings.local.json`` in the folder it runs in are read beside the user's file
(without ``--settings``), as its ``.mcp.json`` is.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

import click

from vaultkeeper.commands.base import HOOKS, SETTINGS, host_file, now_utc, print_json, vault_path
from vaultkeeper.commands.hooks import TARGETS

if TYPE_CHECKING:
    from vaultkeeper.hosts.hooks import Installed
    from vaultkeeper.hosts.plugins import Plugin

CRON_OLD = (
    "an older version's line (its output goes to state/cron.log): "
    "`vaultkeeper hooks install cron` rewrites it"
)

PROJECT_SETTINGS = (".claude/settings.json", ".claude/settings.local.json")


def project_settings(user: Path, cwd: Path) -> list[tuple[str, Path]]:
    """The project's Claude Code settings files here that exist (not the user's file)."""
    found = [(cwd / name).absolute() for name in PROJECT_SETTINGS]
    return [("claude-code", p) for p in found if p.is_file() and p.resolve() != user.resolve()]


def plugin_lines(target: str, plugged: Sequence[Plugin], hosts: Sequence[Installed]) -> list[str]:
    """Our plugins in ``target``, and each hook event that would run twice: from an
    enabled plugin and from a settings file ``hooks install`` wrote."""
    mine = [p for p in plugged if p.target == target]
    lines = [p.line() for p in mine]
    for p in (p for p in mine if p.enabled):
        for h in (h for i in hosts if i.target == target for h in i.handlers):
            if h.event in p.events:
                lines.append(
                    f"{h.event} runs twice: from the plugin {p.plugin_id} and from "
                    f"`hooks install` ({h.command}); remove one: `vaultkeeper hooks uninstall "
                    f"{target}`"
                )
    return lines


@click.command("status")
@click.argument("target", type=click.Choice(TARGETS), required=False, metavar="[TARGET]")
@SETTINGS
@HOOKS
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def hooks_status(
    ctx: click.Context,
    target: str | None,
    settings_file: Path | None,
    hooks_file: Path | None,
    as_json: bool,
) -> None:
    """Say what is installed where, and when each vault's last scan completed.

    Every target, or only TARGET (claude-code, codex, cron or git); no vault
    is needed (git needs one). For claude-code, the project's own
    .claude/settings.json and .claude/settings.local.json in the current
    folder are read too, as its .mcp.json is.

    \b
    Example:
      vaultkeeper hooks status
      vaultkeeper --vault ~/memory hooks status git
    """
    from vaultkeeper.errors import NoVaultError
    from vaultkeeper.hosts.mcp import registrations
    from vaultkeeper.hosts.plugins import installed as installed_plugins
    from vaultkeeper.status.health import age_text, where_installed

    targets = [target] if target else list(TARGETS)
    files = {
        t: host_file(t, *(settings_file, None) if t == "claude-code" else (None, hooks_file))
        for t in targets
        if t not in ("cron", "git")
    }
    try:
        vault: Path | None = vault_path(ctx, require=False)  # reports on any folder
    except NoVaultError:
        if target == "git":
            raise
        vault = None
    git = None
    if "git" in targets and vault:
        from vaultkeeper.hosts.git import status_lines, status_or_note

        git = status_or_note(vault, strict=target == "git")
    also = (
        project_settings(files["claude-code"], Path.cwd())
        if "claude-code" in files and settings_file is None
        else []
    )
    where = where_installed(files, "cron" in targets, os.environ, vault, also)
    served = registrations(targets, os.environ, Path.cwd())  # `vaultkeeper mcp`'s entries
    plugged = installed_plugins(targets, os.environ)  # the hosts' own plugin installs
    if as_json:
        found = asdict(where)
        print_json(
            {
                "hosts": found["hosts"],
                "mcp": [asdict(r) for r in served],
                "plugins": [asdict(p) for p in plugged],
                "cron": found["cron"] if "cron" in targets else None,
                "cron_note": where.cron_note,
                "last_scans": [
                    {"vault": v, "last_completed": w.isoformat() if w else None}
                    for v, w in where.last_scans
                ],
                "hook_logs": [{"path": p, "last": last} for p, last in where.hook_logs],
                "git": git if git is None or isinstance(git, str) else asdict(git),
            }
        )
        return
    rows = [("git", line) for line in ([] if git is None else status_lines(git))]
    for host in where.hosts:
        if host.note:
            rows.append((host.target, host.note))
        elif not host.handlers and not any(p.target == host.target for p in plugged):
            rows.append((host.target, f"not installed in {host.path}"))
        for h in host.handlers:
            trust = f" [{h.trust}]" if h.trust else ""
            rows.append(
                (
                    host.target,
                    f"{h.event} (timeout {h.timeout} s) in {host.path}: {h.command}{trust}",
                )
            )
            if h.problem:  # the hook cannot work: the host runs it and nothing happens
                rows.append((host.target, f"{h.event} will do nothing: {h.problem}"))
        if host is next(h for h in reversed(where.hosts) if h.target == host.target):
            rows += [(host.target, reg.line()) for reg in served if reg.target == host.target]
            rows += [
                (host.target, line) for line in plugin_lines(host.target, plugged, where.hosts)
            ]
    if "cron" in targets:
        if where.cron_note or not where.cron:
            rows.append(("cron", where.cron_note or "no vaultkeeper line in the crontab"))
        for entry in where.cron:
            rows.append(("cron", entry.line))
            if entry.outdated:
                rows.append(("cron", CRON_OLD))
    now = now_utc()
    for v, when in where.last_scans:
        ago = f" ({age_text((now - when).total_seconds())} ago)" if when else ""
        rows.append(
            ("last scan", f"{v}: {when:%Y-%m-%d %H:%M} UTC{ago}" if when else f"{v}: never")
        )
    rows += [("hook log", f"{log}: {last}") for log, last in where.hook_logs]
    for column, text in rows:
        click.echo(f"{column:<12} {text}")
