"""Carry out one decision and render its outcome: what `apply ...`, `review` and
`apply merge` share.
"""

from __future__ import annotations

from typing import Any, NoReturn

import click

from vaultkeeper.commands.ask import prune_confirm
from vaultkeeper.commands.base import now_utc, print_json, vault_path
from vaultkeeper.store.textsafe import inert


def _render_outcome(ctx: click.Context, outcome: Any, as_json: bool) -> NoReturn:
    """Print one outcome (text or JSON) and exit with its code: 0 / 1 / 3."""
    from vaultkeeper.apply.decision import DEFER
    from vaultkeeper.errors import GateRefused

    if as_json:
        print_json(outcome.to_dict())
        ctx.exit(outcome.exit_code)
    if outcome.dry_run and outcome.diff:
        click.echo(inert(outcome.diff), nl=False)
    head = inert(f"{outcome.action} {outcome.target}: {outcome.reason}")
    if outcome.outcome == DEFER:
        stopped = outcome.extra.get("stopped")  # an OS error part-way: something may be written
        raise GateRefused(f"{head} ({'stopped' if stopped else 'deferred; nothing changed'})")
    click.echo(f"{'dry run: would ' if outcome.dry_run else ''}{outcome.outcome}: {head}")
    ctx.exit(outcome.exit_code)


def decide(ctx: click.Context, decision: Any, dry_run: bool, as_json: bool) -> NoReturn:
    from vaultkeeper.apply.batch import apply_decision
    from vaultkeeper.commands import typed

    # a deletion (prune, and merge: DROP leaves the vault) asks a person at a terminal
    confirm = prune_confirm(dry_run) if decision.action in ("prune", "merge") else None
    vault = vault_path(ctx)
    decision = typed.decision(vault, decision)  # paths as typed: from the current folder
    outcome = apply_decision(vault, decision, now_utc(), dry_run=dry_run, confirm=confirm)
    _render_outcome(ctx, outcome, as_json)
