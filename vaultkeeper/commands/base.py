"""What every command module shares: the vault it works on, now, and the common options."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import click

from vaultkeeper.output import print_json

__all__ = ["AS_JSON", "DRY_RUN", "nonempty_path", "note", "now_utc", "print_json", "vault_path"]


def now_utc() -> dt.datetime:
    """Now, or the day $VAULTKEEPER_TODAY names (see clock.py)."""
    from vaultkeeper.clock import now

    return now()


def vault_path(ctx: click.Context) -> Path:
    """The vault for this invocation (``--vault``, ``$VAULTKEEPER_VAULT``, or discovery)."""
    from vaultkeeper.vault import find_vault

    root = ctx.find_root()
    return find_vault(root.params.get("vault"), os.environ, Path.cwd())


def nonempty_path(ctx: click.Context, param: click.Parameter, value: str | None) -> Path | None:
    # Path("") is Path("."): `--vault "$UNSET"` must not quietly mean the current folder
    if value == "":
        raise click.BadParameter("must not be empty (is the variable you meant to pass set?)")
    return None if value is None else Path(value)


def note(message: str) -> None:
    click.echo(f"vaultkeeper: note: {message}", err=True)


DRY_RUN = click.option("--dry-run", is_flag=True, help="Print the unified diff; write nothing.")
AS_JSON = click.option("--json", "as_json", is_flag=True, help="Print the outcome as JSON.")
