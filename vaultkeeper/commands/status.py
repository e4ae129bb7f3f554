"""`status`: the vault's health signals, each with its figure, bound and verdict."""

from __future__ import annotations

import sys

import click

from vaultkeeper.commands.base import now_utc, print_json, vault_path


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the signals as one JSON object.")
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """Show the vault's health signals: each figure, its healthy bound, a verdict.

    Candidates waiting (from the last report), held-out entries overdue by
    more than a week, decisions waiting for a person, lint errors, broken
    links and orphans (as the last `vaultkeeper lint` of the whole vault
    found them, with its age; a vault without state/ is linted here), the
    age of the last completed scan (older than two
    days: the session-end hook probably never fires), the journal's size
    and _index.md against its load budget. Exit 1 when a signal fails; what
    has not happened yet (a vault fresh from init) is `not yet`, exit 0.

    \b
    Example:
      vaultkeeper status
      vaultkeeper status --json
    """
    from vaultkeeper.status.health import FAIL, STEPS, vault_status

    vault = vault_path(ctx, require=False)  # read-only; works on any Obsidian vault
    if as_json or not sys.stderr.isatty():
        result = vault_status(vault, now_utc())
    else:
        with click.progressbar(
            length=len(STEPS), label="checking", file=sys.stderr, item_show_func=lambda s: s
        ) as bar:

            def step(name: str) -> None:  # the bar counts the steps already done
                bar.update(STEPS.index(name) - bar.pos, name)

            result = vault_status(vault, now_utc(), step)
    if as_json:
        print_json(result.to_dict())
    else:
        click.echo(f"vault {result.vault} at {result.generated_at}")
        rows = [("", "signal", "figure", "healthy", "")]
        rows += [(s.verdict, s.label, s.shown, s.bound, s.detail) for s in result.signals]
        widths = [max(4, *(len(r[i]) for r in rows)) for i in range(4)]  # ok ... not yet
        for row in rows:
            cells = [cell.ljust(w) for cell, w in zip(row[:4], widths, strict=True)]
            click.echo("  ".join([*cells, row[4]]).rstrip())
        click.echo(f"overall: {result.verdict}")
    sys.exit(1 if result.verdict == FAIL else 0)
