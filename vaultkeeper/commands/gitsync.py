"""`merge-driver`: git's merge driver for registry files (see merge.py and git_install.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from vaultkeeper.commands.base import note


@click.command("merge-driver")
@click.argument("base", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("ours", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("theirs", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("path", required=False)
def merge_driver(base: Path, ours: Path, theirs: Path, path: str | None) -> None:
    """Merge a registry file three ways and write the result to OURS.

    Git runs this for files under patterns/ once `vaultkeeper hooks install
    git` has registered it (as `merge-driver %O %A %B %P`). Success counts add
    up (base plus both sides' uses), `last used` takes the later date, a
    `promoted` line is kept (the earlier date if both sides have one); a block
    one side deleted while the other only counted stays deleted, and the uses
    that drops are named on stderr. Every other line is merged as git merges
    text; where both sides changed the same line, OURS gets conflict markers
    and the exit code is 1, so git reports a conflict as usual. PATH (git's
    %P) names the file in messages. No vault is needed.

    \b
    Example:
      vaultkeeper merge-driver base.md ours.md theirs.md patterns/registry.md
    """
    from vaultkeeper.merge import merge_files

    result = merge_files(base, ours, theirs, path)
    for line in result.notes:
        note(line)
    sys.exit(1 if result.conflicts else 0)
