"""`apply anchor ENTRY --add PATH[::NAME]`; cli.py adds it to the apply group."""

from __future__ import annotations

from typing import NoReturn

import click

from vaultkeeper.commands.apply import _EXPECT, decide
from vaultkeeper.commands.base import AS_JSON, DRY_RUN


@click.command("anchor")
@click.argument("path", metavar="NAME|PATH")
@click.option(
    "--add",
    "anchors",
    multiple=True,
    required=True,
    metavar="PATH[::NAME]",
    help="A file, PATH::NAME or 'PATH: TEXT' in the project's repository (repeatable).",
)
@_EXPECT
@DRY_RUN
@AS_JSON
@click.pass_context
def apply_anchor(
    ctx: click.Context,
    path: str,
    anchors: tuple[str, ...],
    expect_hash: str | None,
    dry_run: bool,
    as_json: bool,
) -> NoReturn:
    """Anchor memory or decision entry NAME (or PATH) to the code it is about.

    Each --add records the digest of the file, definition or text and the commit
    checked out in the project's repository; the scan then checks it (ok, changed,
    moved, gone). Only the added lines change; journaled.

    \b
    Example:
      vaultkeeper apply anchor rounding --add src/billing/cart.py::round_cart
    """
    from vaultkeeper.apply.decision import Decision

    decide(
        ctx, Decision("anchor", path, None, None, expect_hash, anchors=anchors), dry_run, as_json
    )
