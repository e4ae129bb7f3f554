"""`apply merge KEEP DROP`: fold a duplicate into the entry that stays.

Its own module so commands/apply.py stays small; cli.py adds it to the apply group.
"""

from __future__ import annotations

from typing import NoReturn

import click

from vaultkeeper.commands.apply import _EVIDENCE
from vaultkeeper.commands.base import AS_JSON, DRY_RUN
from vaultkeeper.commands.decide import decide


@click.command("merge")
@click.argument("keep", metavar="KEEP")
@click.argument("drop", metavar="DROP")
@_EVIDENCE
@DRY_RUN
@AS_JSON
@click.pass_context
def apply_merge(
    ctx: click.Context, keep: str, drop: str, evidence: str, dry_run: bool, as_json: bool
) -> NoReturn:
    """Fold duplicate DROP into KEEP: two registry blocks, or two memory files of a project.

    Counts add up, the later last used stays, DROP's text goes under KEEP, links to
    DROP are rewritten to KEEP, and DROP moves to .trash/: `vaultkeeper restore ID`
    undoes all of it. The report lists possible duplicates.

    \b
    Example:
      vaultkeeper apply merge pin-test-clock pin-the-clock-in-tests \\
          --evidence https://github.com/acme/api/pull/90 --dry-run
      vaultkeeper apply merge projects/api/memory/a.md projects/api/memory/b.md \\
          --evidence projects/api/research/ci-failure-survey.md:9
    """
    from vaultkeeper.apply.decision import Decision

    decide(ctx, Decision("merge", keep, evidence, drop=drop), dry_run, as_json)
