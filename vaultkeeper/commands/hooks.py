"""`hooks install|uninstall|status`: wire the scan into agents' session hooks or cron."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from vaultkeeper import config
from vaultkeeper.commands.base import now_utc, print_json, vault_path

# After `install codex`: what Codex's own docs (developers.openai.com/codex/hooks) say a
# user must know. Hooks are on by default; `[features] hooks = false` turns them off and
# `codex_hooks` is the deprecated alias of that key; a new command hook runs only once
# it has been reviewed and trusted.
CODEX_NOTE = (
    "note: Codex runs hooks by default (unless ~/.codex/config.toml sets `hooks = false`, "
    "or its deprecated alias `codex_hooks = false`, under [features]); it runs a new hook "
    "only once you have reviewed and trusted it: open /hooks in Codex"
)

_TARGETS = ("claude-code", "codex", "cron", "git")
_settings_option = click.option(
    "--settings",
    "settings_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help=f"claude-code: the settings file (default {config.CLAUDE_SETTINGS}).",
)
_hooks_option = click.option(
    "--hooks",
    "hooks_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help=f"codex: the hooks file (default {config.CODEX_HOOKS}).",
)


def _host_file(target: str, settings_file: Path | None, hooks_file: Path | None) -> Path:
    from vaultkeeper.errors import UsageError
    from vaultkeeper.hooks import default_path

    if settings_file is not None and target != "claude-code":
        raise UsageError(f"--settings is for claude-code; {target} takes --hooks or nothing")
    if hooks_file is not None and target != "codex":
        raise UsageError(f"--hooks is for codex; {target} takes --settings or nothing")
    given = settings_file if target == "claude-code" else hooks_file
    return (given or default_path(target, os.environ)).expanduser().absolute()


def _echo_change(change: Any, as_json: bool) -> None:
    if as_json:
        print_json(change.__dict__)
        return
    click.echo(f"{change.target}: {change.path}" + ("" if change.changed else " (unchanged)"))
    for action in change.actions:
        click.echo(f"  {action}")
    if change.backup:
        click.echo(f"  previous file kept as {change.backup}")


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
@click.argument("target", type=click.Choice(_TARGETS))
@_settings_option
@_hooks_option
@click.option(
    "--schedule", default=config.CRON_SCHEDULE, show_default=True, help="cron: when to scan."
)
@click.option("--print", "print_only", is_flag=True, help="cron: print the line, change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def hooks_install(
    ctx: click.Context,
    target: str,
    settings_file: Path | None,
    hooks_file: Path | None,
    schedule: str,
    print_only: bool,
    as_json: bool,
) -> None:
    """Register vaultkeeper with TARGET for the vault (absolute paths).

    A second install changes nothing; an install for another vault or a moved
    vaultkeeper updates our entry in place. Every other setting and every
    other tool's hook is kept; the previous settings file is kept as a backup.
    For git, run it once in every clone: the driver lives in the clone's own
    git config; commit the .gitattributes and .gitignore it writes once.

    \b
    Example:
      vaultkeeper --vault ~/memory hooks install claude-code
      vaultkeeper --vault ~/memory hooks install codex
      vaultkeeper --vault ~/memory hooks install cron --print
      vaultkeeper --vault ~/memory hooks install git
    """
    from vaultkeeper import cron, git_install
    from vaultkeeper import hooks as hostfiles
    from vaultkeeper.errors import NoVaultError, UsageError

    vault = vault_path(ctx)
    marks = (config.INDEX_FILE, config.PROJECTS_DIR, config.PATTERNS_DIR)
    if not any((vault / name).exists() for name in marks):  # e.g. `--vault ~` by mistake
        raise NoVaultError(
            f"{vault}: not a vault (no {', '.join(marks)}): its scan would refuse it every "
            "time; pass the vault's folder, or create one with `vaultkeeper init`"
        )
    program = hostfiles.find_program(os.environ)
    if target != "cron":
        if print_only or schedule != config.CRON_SCHEDULE:
            raise UsageError(f"--schedule and --print are for cron, not {target}")
        path = _host_file(target, settings_file, hooks_file)
        if target == "git":
            _echo_change(git_install.install(vault, program), as_json)
            return
        _echo_change(hostfiles.install(target, path, vault, program), as_json)
        if target == "codex" and not as_json:
            click.echo(f"  {CODEX_NOTE}")
        return
    _host_file(target, settings_file, hooks_file)  # refuses --settings / --hooks
    if print_only:
        line = cron.cron_line(vault, program, schedule)
        print_json({"line": line}) if as_json else click.echo(line)
        return
    _echo_change(cron.install(vault, program, schedule, os.environ), as_json)


@hooks.command("uninstall")
@click.argument("target", type=click.Choice(_TARGETS))
@_settings_option
@_hooks_option
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def hooks_uninstall(
    ctx: click.Context,
    target: str,
    settings_file: Path | None,
    hooks_file: Path | None,
    as_json: bool,
) -> None:
    """Remove vaultkeeper's hooks (or this vault's crontab line), nothing else.

    \b
    Example:
      vaultkeeper hooks uninstall claude-code
      vaultkeeper --vault ~/memory hooks uninstall cron
      vaultkeeper --vault ~/memory hooks uninstall git
    """
    from vaultkeeper import cron, git_install
    from vaultkeeper import hooks as hostfiles

    path = _host_file(target, settings_file, hooks_file)
    if target == "git":
        _echo_change(git_install.uninstall(vault_path(ctx)), as_json)
    elif target == "cron":
        _echo_change(cron.uninstall(vault_path(ctx), os.environ), as_json)
    else:
        _echo_change(hostfiles.uninstall(target, path), as_json)


@hooks.command("status")
@click.argument("target", type=click.Choice(_TARGETS), required=False)
@_settings_option
@_hooks_option
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

    Every target, or only TARGET; no vault is needed (git needs one).

    \b
    Example:
      vaultkeeper hooks status
      vaultkeeper hooks status claude-code --settings .claude/settings.json
      vaultkeeper --vault ~/memory hooks status git
    """
    from vaultkeeper.errors import NoVaultError
    from vaultkeeper.status import age_text, where_installed

    targets = [target] if target else list(_TARGETS)
    files = {
        t: _host_file(
            t, settings_file if t == "claude-code" else None, hooks_file if t == "codex" else None
        )
        for t in targets
        if t not in ("cron", "git")
    }
    try:
        vault: Path | None = vault_path(ctx)
    except NoVaultError:
        if target == "git":
            raise
        vault = None
    git = _git_status(vault, strict=target == "git") if "git" in targets and vault else None
    where = where_installed(files, "cron" in targets, os.environ, vault)
    now = now_utc()
    if as_json:
        print_json(
            {
                "hosts": [
                    {**h.__dict__, "handlers": [x.__dict__ for x in h.handlers]}
                    for h in where.hosts
                ],
                "cron": [e.__dict__ for e in where.cron] if "cron" in targets else None,
                "cron_note": where.cron_note,
                "last_scans": [
                    {"vault": v, "last_completed": w.isoformat() if w else None}
                    for v, w in where.last_scans
                ],
                "hook_logs": [{"path": p, "last": last} for p, last in where.hook_logs],
                "git": git if git is None or isinstance(git, str) else git.__dict__,
            }
        )
        return
    _echo_git(git)
    for host in where.hosts:
        if host.note:
            click.echo(f"{host.target:<12} {host.note}")
        elif not host.handlers:
            click.echo(f"{host.target:<12} not installed in {host.path}")
        for h in host.handlers:
            click.echo(
                f"{host.target:<12} {h.event} (timeout {h.timeout} s) in {host.path}: {h.command}"
            )
    if "cron" in targets:
        if where.cron_note:
            click.echo(f"{'cron':<12} {where.cron_note}")
        elif not where.cron:
            click.echo(f"{'cron':<12} no vaultkeeper line in the crontab")
        for entry in where.cron:
            click.echo(f"{'cron':<12} {entry.line}")
    for v, when in where.last_scans:
        done = (
            f"{when:%Y-%m-%d %H:%M} UTC ({age_text((now - when).total_seconds())} ago)"
            if when
            else "never"
        )
        click.echo(f"{'last scan':<12} {v}: {done}")
    for log, last in where.hook_logs:
        click.echo(f"{'hook log':<12} {log}: {last}")


def _git_status(vault: Path, strict: bool) -> Any:
    """git_install.status; for a vault outside git, a short line (``strict``: the refusal)."""
    from vaultkeeper import git_install

    if not strict and not git_install.is_work_tree(vault):
        return f"{vault}: not a git work tree"
    return git_install.status(vault)


def _echo_git(found: Any) -> None:
    if found is None:
        return
    if isinstance(found, str):
        click.echo(f"{'git':<12} {found}")
        return
    for name, state in found.files:
        click.echo(f"{'git':<12} {Path(found.vault) / name}: {state}")
    driver = found.driver or "not set in this clone (run `hooks install git` here)"
    click.echo(f"{'git':<12} merge.vaultkeeper.driver: {driver}")
    for path in found.tracked:
        click.echo(f"{'git':<12} {path}: per machine but tracked; `git rm --cached {path}`")
