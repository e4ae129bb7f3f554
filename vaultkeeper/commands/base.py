"""What every command module shares: the vault it works on, now, and the common options."""

from __future__ import annotations

import os
from pathlib import Path

import click

from vaultkeeper import clock, config
from vaultkeeper.output import print_json as print_json

now_utc = clock.now  # now, or the day $VAULTKEEPER_TODAY names


def vault_path(ctx: click.Context, require: bool = True) -> Path:
    """The vault for this invocation (``--vault``, ``$VAULTKEEPER_VAULT``, or discovery).

    ``require``: refuse a folder that is not a vault (exit 2) before anything is read or
    written; False for the commands that take any Obsidian vault (index, status, ...).
    """
    from vaultkeeper.store.vault import find_vault, require_vault

    root = ctx.find_root()
    vault = find_vault(root.params.get("vault"), os.environ, Path.cwd(), obsidian=not require)
    if require:
        require_vault(vault)
    return vault


def nonempty_path(ctx: click.Context, param: click.Parameter, value: str | None) -> Path | None:
    # Path("") is Path("."): `--vault "$UNSET"` must not quietly mean the current folder
    if value == "":
        raise click.BadParameter("must not be empty (is the variable you meant to pass set?)")
    return None if value is None else Path(value)


def note(message: str) -> None:
    from vaultkeeper.store.textsafe import inert

    click.echo(inert(f"vaultkeeper: note: {message}"), err=True)


def waiting_to_count() -> None:
    """What a count says when the writer lock is busy: it waits, it is not lost."""
    note(
        "another vaultkeeper command is writing (compacting the usage log, say); "
        "waiting for it: the count is not lost (Ctrl-C gives up)"
    )


DRY_RUN = click.option("--dry-run", is_flag=True, help="Print the unified diff; write nothing.")
AS_JSON = click.option("--json", "as_json", is_flag=True, help="Print the outcome as JSON.")
# -- `hooks install|uninstall|status`: which host file ------------------------------------
SETTINGS = click.option(
    "--settings",
    "settings_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help=f"claude-code: the settings file (default {config.CLAUDE_SETTINGS}).",
)
HOOKS = click.option(
    "--hooks",
    "hooks_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help=f"codex: the hooks file (default {config.CODEX_HOOKS}).",
)


def usage_error(message: str) -> click.UsageError:
    """A command line wrong in any vault: named with its command and --help, exit 2."""
    return click.UsageError(message, click.get_current_context(silent=True))


def host_file(target: str, settings_file: Path | None, hooks_file: Path | None) -> Path:
    from vaultkeeper.hosts.hooks import default_path

    if settings_file is not None and target != "claude-code":
        raise usage_error(f"--settings is for claude-code; {target} takes --hooks or nothing")
    if hooks_file is not None and target != "codex":
        raise usage_error(f"--hooks is for codex; {target} takes --settings or nothing")
    given = settings_file if target == "claude-code" else hooks_file
    return (given or default_path(target, os.environ)).expanduser().absolute()


# `hooks install|uninstall claude-code|codex --mcp`: the MCP server's entry too
MCP = click.option(
    "--mcp",
    "with_mcp",
    is_flag=True,
    help="claude-code, codex: also the MCP server (`vaultkeeper mcp`): its entry in "
    "~/.claude.json or ~/.codex/config.toml.",
)
MCP_PROJECT = click.option(
    "--project", is_flag=True, help="claude-code --mcp: the .mcp.json here, not user scope."
)
