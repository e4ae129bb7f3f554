"""The command line: parse options, call one core function, render its result.

Nothing here decides anything; errors become one line on stderr and an exit code here,
once (see errors.py for what each code means).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from vaultkeeper import __version__, config
from vaultkeeper.errors import EXIT_USAGE, VaultkeeperError


class _Group(click.Group):
    """Turns every VaultkeeperError (and OS error) into one line and its exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except VaultkeeperError as exc:
            _fail(str(exc), exc.exit_code)
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            _fail(f"{where}{exc.strerror or exc}", 1)


def _fail(message: str, code: int) -> NoReturn:
    click.echo(f"vaultkeeper: error: {message}", err=True)
    sys.exit(code)


def now_utc() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def vault_path(ctx: click.Context) -> Path:
    """The vault for this invocation (``--vault``, ``$VAULTKEEPER_VAULT``, or discovery)."""
    from vaultkeeper.vault import find_vault

    root = ctx.find_root()
    return find_vault(root.params.get("vault"), os.environ, Path.cwd())


def print_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, sort_keys=False, default=str))


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--vault",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help=f"The vault folder (default: ${config.ENV_VAULT}, else the nearest folder "
    f"upwards holding {config.INDEX_FILE}).",
)
@click.version_option(__version__, prog_name="vaultkeeper")
def cli(vault: Path | None) -> None:
    """Keep an agent's markdown memory vault healthy.

    The scanner (`scan`) classifies entries into promote / prune / held-out
    candidates and never changes the vault; the applier (`apply ...`) carries
    out decisions through gates, journals every one, and deletes nothing
    without a person's explicit yes.

    \b
    Exit codes: 0 ok or nothing to do; 1 refused, bad input or findings;
                2 usage error or no vault; 3 waiting for a person.

    \b
    Example:
      vaultkeeper init ~/memory
      vaultkeeper --vault ~/memory scan
    """


@cli.command()
@click.argument("path", type=click.Path(path_type=Path), default=".")
def init(path: Path) -> None:
    """Create a vault at PATH (default: here); never changes an existing file.

    Lays out _index.md, projects/, patterns/registry.md, references/ with the
    vault's spec, state/ and a .gitignore keeping state/ out of git.

    \b
    Example:
      vaultkeeper init ~/memory
    """
    from vaultkeeper.create import init_vault

    result = init_vault(path)
    for name in result.created:
        click.echo(f"created {name}")
    for name in result.kept:
        click.echo(f"kept    {name} (exists)")
    click.echo(f"vault ready at {result.vault}")


@cli.command()
@click.argument("kind", type=click.Choice(config.ENTRY_KINDS))
@click.argument("name")
@click.option("--description", "-d", required=True, help="One-line recall summary (indexed).")
@click.option("--project", "-p", help="Project folder for memory, decision and research.")
@click.option("--label", type=click.Choice(config.LABELS), help="Promotion weight label.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def new(
    ctx: click.Context,
    kind: str,
    name: str,
    description: str,
    project: str | None,
    label: str | None,
    as_json: bool,
) -> None:
    """Create an entry from its template and add it to _index.md.

    A memory (a new lesson) starts held_out with a quoted holdout_until a
    hold-out window ahead and label inferred; a pattern is a new ### block in
    the registry with success count 0.

    \b
    Example:
      vaultkeeper new memory retry-flaky-tests -p api -d "Retry flaky tests once, not forever"
      vaultkeeper new pattern bisect-first -d "Bisect before reading diffs"
    """
    from vaultkeeper.create import new_entry

    try:
        days = int(os.environ.get(config.ENV_HOLDOUT_DAYS, config.HOLDOUT_DAYS))
    except ValueError:
        raise VaultkeeperError(f"{config.ENV_HOLDOUT_DAYS} must be a whole number of days") from None
    result = new_entry(
        vault_path(ctx),
        kind,
        name,
        description,
        project=project,
        label=label,
        today=now_utc().date(),
        holdout_days=days,
    )
    if as_json:
        print_json(result.__dict__)
        return
    click.echo(f"created {result.path}:{result.line} ({kind} {name})")
    if result.index_line:
        click.echo(f"indexed {config.INDEX_FILE}: {result.index_line}")


@cli.command()
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def use(ctx: click.Context, name: str, as_json: bool) -> None:
    """Record one reuse of registry pattern NAME: success count + 1, last used today.

    Only those two lines of the registry change.

    \b
    Example:
      vaultkeeper use bisect-first
    """
    from vaultkeeper.use import record_use

    result = record_use(vault_path(ctx), name, now_utc().date())
    if as_json:
        print_json(result.__dict__)
        return
    click.echo(
        f"{result.name}: success count {result.count_before} -> {result.count_after}, "
        f"last used {result.last_used} ({result.path})"
    )


# Commands from the other modules register below (one import each).
# -- scan/report --
# -- apply --
# -- lint/index/verify --
# -- hooks/status --


def main() -> None:
    try:
        cli(prog_name="vaultkeeper")
    except KeyboardInterrupt:  # pragma: no cover - interactive only
        click.echo("vaultkeeper: interrupted", err=True)
        sys.exit(130)


if __name__ == "__main__":  # pragma: no cover
    main()

__all__ = ["cli", "main", "EXIT_USAGE"]
