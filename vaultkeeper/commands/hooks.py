"""`hooks install|uninstall|status`: wire the scan into agents' session hooks or cron.

``hooks status`` reads, for Claude Code, the project's own ``.claude/settings.json`` and
``.claude/settings.local.json`` in the folder it runs in beside the user's file (without
``--settings``), as its ``.mcp.json`` is.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from vaultkeeper import config
from vaultkeeper.commands.base import (
    HOOKS,
    MCP,
    MCP_PROJECT,
    SETTINGS,
    host_file,
    now_utc,
    usage_error,
    vault_path,
)
from vaultkeeper.output import Shown, show
from vaultkeeper.store.textsafe import inert_line

if TYPE_CHECKING:
    from vaultkeeper.hosts.hooks import Installed
    from vaultkeeper.hosts.plugins import Plugin

# After `install codex`: Codex runs hooks unless [features] hooks = false (its deprecated
# alias: codex_hooks), and a new or changed command hook only once the person trusts it.
CODEX_NOTE = "note: ~/.codex/config.toml [features] `hooks = false` turns Codex's hooks off"

TARGETS = ("claude-code", "codex", "cron", "git")


def _change(change: Any, mcp: Any = None, warn: str | None = None, more: Any = ()) -> Shown:
    """What an install or uninstall did (and ``more`` lines for a person), to show."""
    lines: list[str] = []
    for done in (change, mcp) if mcp else (change,):
        lines.append(f"{done.target}: {done.path}" + ("" if done.changed else " (unchanged)"))
        lines += [f"  {action}" for action in done.actions]
        lines += [f"  previous file kept as {done.backup}"] if done.backup else []
    data = {"hooks": change.__dict__, "mcp": mcp.__dict__} if mcp else change.__dict__
    # a warning: the install is done; what it wrote may not last (hosts/hooks.py)
    return Shown(data, (*lines, *more), (f"vaultkeeper: warning: {warn}",) if warn else ())


@click.group()
def hooks() -> None:
    """Run the scan from a coding agent's session hooks, or from cron.

    `install claude-code|codex` merges two hooks into the host's settings: at
    session end the throttled scan (started in the background, so it never
    holds the host), at session start the last report as a short brief for the
    next session. `install cron` adds one crontab line. `install git` (in a
    vault that is a git work tree) makes pulls merge the registry's counters
    exactly: .gitattributes and .gitignore lines plus `merge-driver` in the
    repository's config. `uninstall` removes exactly what install added;
    `status` says what is installed where.

    \b
    Example:
      vaultkeeper --vault ~/memory hooks install claude-code
      vaultkeeper --vault ~/memory hooks install cron --schedule "17 8 * * *"
      vaultkeeper --vault ~/memory hooks install git
      vaultkeeper hooks status
    """


@hooks.command("install")
@click.argument("target", type=click.Choice(TARGETS), metavar="TARGET")
@SETTINGS
@HOOKS
@click.option(
    "--schedule",
    help=f'cron: when to scan (default: the installed line\'s, else "{config.CRON_SCHEDULE}").',
)
@click.option("--print", "print_only", is_flag=True, help="cron: print the line, change nothing.")
@MCP
@MCP_PROJECT
@click.option("--recall", is_flag=True, help="Also serve lessons on prompts and file tools.")
@click.option(
    "--dialog",
    is_flag=True,
    help="claude-code --mcp: a deletion through MCP asks in Claude Code's dialog (refused "
    "while an Elicitation hook is configured) instead of waiting for `vaultkeeper review`.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def hooks_install(
    ctx: click.Context,
    target: str,
    settings_file: Path | None,
    hooks_file: Path | None,
    schedule: str | None,
    print_only: bool,
    with_mcp: bool,
    project: bool,
    recall: bool,
    dialog: bool,
    as_json: bool,
) -> int:
    """Register vaultkeeper with TARGET (claude-code, codex, cron or git) for the vault.

    What it writes names the program and the vault by absolute path.
    A second install changes nothing; an install for another vault or a moved
    vaultkeeper updates our entry in place. Every other setting and every
    other tool's hook is kept; the previous settings file is kept as a backup.
    --mcp registers `vaultkeeper mcp` with the host too. For git, run it once
    in every clone: the driver lives in the clone's own git config; commit the
    .gitattributes and .gitignore it writes once. --recall adds the point-of-use
    recall (docs/recall.md): a prompt hook and a file-tool hook. A deletion
    through MCP waits for `vaultkeeper review`; with claude-code --mcp --dialog
    it is asked in Claude Code's dialog instead, while no Elicitation hook is
    configured (docs/mcp.md; Codex shows no dialog: refused there).

    \b
    Example:
      vaultkeeper --vault ~/memory hooks install claude-code --mcp --recall
      vaultkeeper --vault ~/memory hooks install codex --mcp
      vaultkeeper --vault ~/memory hooks install cron --print
    """
    from vaultkeeper.hosts import codex_trust, cron
    from vaultkeeper.hosts import git as git_install
    from vaultkeeper.hosts import hooks as hostfiles
    from vaultkeeper.hosts import mcp as mcp_install
    from vaultkeeper.hosts.elicitation import answering, check_dialog
    from vaultkeeper.hosts.plugins import refuse_second_copy

    vault = vault_path(ctx)  # a folder that is not a vault (`--vault ~`): its scan would refuse it
    program = hostfiles.find_program(os.environ)
    warn = (
        None if print_only else hostfiles.install_warning(target, program, os.environ, Path.cwd())
    )
    mcp_file = mcp_install.registration_file(target, with_mcp, project, os.environ, Path.cwd())
    check_dialog(target, with_mcp, dialog)
    if target == "cron":
        host_file(target, settings_file, hooks_file)  # refuses --settings / --hooks
        if recall:
            raise usage_error("--recall is for claude-code and codex, not cron")
        if print_only:
            line = cron.cron_line(vault, program, cron.schedule_for(vault, schedule, os.environ))
            return show(Shown({"line": line}, (line,)), as_json)
        return show(_change(cron.install(vault, program, schedule, os.environ), warn=warn), as_json)
    if print_only or schedule is not None or (recall and target == "git"):
        raise usage_error(f"--schedule and --print are for cron, --recall for hosts: {target}")
    path = host_file(target, settings_file, hooks_file)
    if target == "git":
        return show(_change(git_install.install(vault, program), warn=warn), as_json)
    refuse_second_copy(target, recall, os.environ)  # a plugin of ours runs these hooks already
    if mcp_file is not None:  # its file read and its edit planned before any write
        mcp_install.install(target, mcp_file, vault, program, write=False, dialog=dialog)
    done = hostfiles.install(target, path, vault, program, recall)
    if recall:  # the table the recall hooks read: every scan keeps it true from now on
        _recall_table(vault)
    served = None
    if mcp_file is not None:
        served = mcp_install.install(target, mcp_file, vault, program, dialog=dialog)
    more: list[str] = []
    if dialog and not as_json:  # on, but refused while these hooks are configured
        found = answering(os.environ, Path.cwd())
        more += [f"  note: the dialog stays off while {a.line()}" for a in found]
    if target == "codex" and not as_json:
        trust = [h.trust or "" for h in hostfiles.installed(target, path).handlers]
        more += [f"  {line}" for line in [CODEX_NOTE, *codex_trust.install_lines(trust)]]
    return show(_change(done, served, warn, more), as_json)


def _recall_table(vault: Path) -> None:
    """The recall on: the full-text index asked for (each scan keeps it from then on),
    then built now."""

    from vaultkeeper.errors import VaultkeeperError
    from vaultkeeper.search.index import refresh, want
    from vaultkeeper.store import db

    try:
        want(vault)
        with db.connect(vault) as conn:
            refresh(conn, vault)
    except (VaultkeeperError, OSError, sqlite3.Error) as exc:
        click.echo(f"vaultkeeper: note: search index not built ({exc}); a scan builds it", err=True)


@hooks.command("uninstall")
@click.argument("target", type=click.Choice(TARGETS), metavar="TARGET")
@SETTINGS
@HOOKS
@MCP
@MCP_PROJECT
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def hooks_uninstall(
    ctx: click.Context,
    target: str,
    settings_file: Path | None,
    hooks_file: Path | None,
    with_mcp: bool,
    project: bool,
    as_json: bool,
) -> int:
    """Remove vaultkeeper's hooks from TARGET (claude-code, codex, cron or git), nothing else.

    With nothing installed there is nothing to do (exit 0).

    \b
    Example:
      vaultkeeper hooks uninstall claude-code
      vaultkeeper hooks uninstall codex --mcp
      vaultkeeper --vault ~/memory hooks uninstall cron
      vaultkeeper --vault ~/memory hooks uninstall git
    """
    from vaultkeeper.errors import VaultkeeperError
    from vaultkeeper.hosts import cron
    from vaultkeeper.hosts import git as git_install
    from vaultkeeper.hosts import hooks as hostfiles
    from vaultkeeper.hosts import mcp as mcp_install

    path = host_file(target, settings_file, hooks_file)
    mcp_file = mcp_install.registration_file(target, with_mcp, project, os.environ, Path.cwd())
    if target == "git":
        return show(_change(git_install.uninstall(vault_path(ctx, require=False))), as_json)
    if target == "cron":
        return show(_change(cron.uninstall(vault_path(ctx, require=False), os.environ)), as_json)
    if mcp_file is not None and (unreadable := hostfiles.installed(target, path).note):
        raise VaultkeeperError(f"{unreadable}; nothing written")  # before the MCP file's edit
    # the MCP file first: install made ~/.codex/ for hooks.json, and only once both
    # files are gone can the hooks' uninstall take that folder away again
    served = None if mcp_file is None else mcp_install.uninstall(target, mcp_file)
    done = hostfiles.uninstall(target, path)
    return show(_change(done, served), as_json)


CRON_OLD = (
    "an older version's line (its output goes to state/cron.log): "
    "`vaultkeeper hooks install cron` rewrites it"
)


def project_settings(user: Path, cwd: Path) -> list[tuple[str, Path]]:
    """The project's Claude Code settings files here that exist (not the user's file)."""
    from vaultkeeper.hosts import elicitation

    found = [(cwd / ".claude" / name).absolute() for name in elicitation.SETTINGS]
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


@hooks.command("status")
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
) -> int:
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
    from vaultkeeper.hosts.git import status_lines, status_or_note
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
    git = status_or_note(vault, strict=target == "git") if "git" in targets and vault else None
    also = (
        project_settings(files["claude-code"], Path.cwd())
        if "claude-code" in files and settings_file is None
        else []
    )
    where = where_installed(files, "cron" in targets, os.environ, vault, also)
    served = registrations(targets, os.environ, Path.cwd())  # `vaultkeeper mcp`'s entries
    plugged = installed_plugins(targets, os.environ)  # the hosts' own plugin installs
    found = asdict(where)
    data = {
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
    rows = [("git", line) for line in ([] if git is None else status_lines(git))]
    for host in where.hosts:
        if host.note:
            rows.append((host.target, host.note))
        elif not host.handlers and not any(p.target == host.target for p in plugged):
            rows.append((host.target, f"not installed in {host.path}"))
        for h in host.handlers:
            line = f"{h.event} (timeout {h.timeout} s) in {host.path}: {h.command}"
            rows.append((host.target, line + (f" [{h.trust}]" if h.trust else "")))
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
        said = f"{when:%Y-%m-%d %H:%M} UTC{ago}" if when else "never"
        rows.append(("last scan", f"{v}: {said}"))
    rows += [("hook log", f"{log}: {last}") for log, last in where.hook_logs]
    # a hook log's line and a settings file's command are anyone's text: one inert row each
    return show(Shown(data, tuple(inert_line(f"{c:<12} {text}") for c, text in rows)), as_json)
