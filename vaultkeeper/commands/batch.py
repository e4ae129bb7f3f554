"""`apply batch FILE|-`: many decisions from a JSON list, each gated on its own.

Its own module so commands/apply.py stays small; cli.py adds it to the apply group.
"""

from __future__ import annotations

from typing import Any, NoReturn

import click

from vaultkeeper.commands.ask import prune_confirm
from vaultkeeper.commands.base import DRY_RUN, now_utc, print_json, vault_path


@click.command("batch")
@click.argument("source", metavar="FILE|-", type=click.File("r", encoding="utf-8"))
@DRY_RUN
@click.pass_context
def apply_batch(ctx: click.Context, source: Any, dry_run: bool) -> NoReturn:
    """Apply a JSON list of decisions, each gated on its own; print a JSON list of outcomes.

    Each decision: action (promote | prune | revalidate | reactivate | supersede |
    skip | merge), target, and as needed evidence, result (pass | fail),
    expect_hash, reason, skills_dir (relative to the vault), by (supersede's NEW),
    drop (merge's DROP). Paths in the list are relative to the vault's root
    (the file means the same wherever it is run). Re-applying a batch changes
    nothing and says so
    (silence: already applied). Exit 3 if any decision waits for a person, else
    1 if refused, else 0.

    \b
    Example:
      echo '[{"action": "skip", "target": "pin-test-clock", "reason": "next week"}]' \\
          | vaultkeeper apply batch -
    """
    from vaultkeeper.apply.batch import run_batch
    from vaultkeeper.errors import VaultkeeperError

    # batch always prints JSON: its errors too, as --json makes every command's
    ctx.find_root().command.json_errors = True  # type: ignore[attr-defined]
    name = "<stdin>" if source.name == "<stdin>" else source.name
    try:
        text = source.read()
    except UnicodeDecodeError as exc:
        raise VaultkeeperError(
            f"{name}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x}); nothing applied"
        ) from None
    result = run_batch(
        vault_path(ctx),
        text,
        name,
        now_utc(),
        dry_run=dry_run,
        confirm=prune_confirm(dry_run),
    )
    print_json([o.to_dict() for o in result.outcomes])
    ctx.exit(result.exit_code)
