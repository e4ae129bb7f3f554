"""`merge-driver` and `post-merge`: what git runs for a vault (hooks install git)."""

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
    """Merge a registry or index file three ways and write the result to OURS.

    Git runs this for files under patterns/ once `vaultkeeper hooks install
    git` has registered it (as `merge-driver %O %A %B %P`). Success counts add
    up (base plus both sides' uses), `last used` takes the later date, a
    `promoted` line is kept (the earlier date if both sides have one); a block
    one side deleted while the other only counted stays deleted, and the uses
    that drops are named on stderr. Every other line is merged as git merges
    text; where both sides changed the same line, OURS gets conflict markers
    and the exit code is 1, so git reports a conflict as usual. PATH (git's
    %P) names the file in messages. No vault is needed.

    When PATH is an index file (`_index.md`, `_index/_index-<folder>.md`), the list
    between its markers is merged entry by entry instead (keyed by link: an
    entry added on a side is kept, one deleted on a side and unchanged on the
    other is deleted, one changed on one side takes that side's line) and
    rendered as `vaultkeeper index` renders it; the text outside the markers
    is merged as git merges text. An entry changed differently on both sides,
    or a list not in vaultkeeper's own format, leaves the whole file to git's
    text merge (conflict markers, exit 1).

    A skill apply promote wrote (`skills/NAME/SKILL.md`) keeps the earlier
    promotion's line and every evidence receipt once; a note under
    `projects/` gets the union of a receipt list (`provenance`, `sources`,
    `supersedes`) both sides appended to; the rest of either is merged as
    git merges text.

    \b
    Example:
      vaultkeeper merge-driver base.md ours.md theirs.md patterns/registry.md
      vaultkeeper merge-driver base.md ours.md theirs.md _index.md
    """
    from vaultkeeper.apply.notemerge import (
        is_note_path,
        is_skill_path,
        merge_note_files,
        merge_skill_files,
    )
    from vaultkeeper.index.merge import is_index_path, merge_index_files
    from vaultkeeper.registry.merge import merge_files

    if is_index_path(path):
        result = merge_index_files(base, ours, theirs)
    elif is_skill_path(path):
        result = merge_skill_files(base, ours, theirs)
    elif is_note_path(path):
        result = merge_note_files(base, ours, theirs)
    else:
        result = merge_files(base, ours, theirs, path)
    for line in result.notes:
        note(line)
    sys.exit(1 if result.conflicts else 0)


@click.command("post-merge")
@click.argument("squash", required=False)
def post_merge(squash: str | None) -> None:
    """Add up counters git merged without the driver; run by git after a merge.

    git runs the merge driver only where both sides changed a file differently.
    Two machines that each counted one use of a pattern the same day, and
    nothing else in its registry file, wrote the same bytes: git keeps them
    as they are and one use is lost. `hooks install git` installs a
    post-merge hook that runs this: for each registry file whose two parents
    are the same and changed since their merge base, the counters are merged
    by the driver's rules, the file written and committed on its own
    ("vaultkeeper: counters both machines changed the same way, added up").
    A fast-forward or a squash merge (SQUASH=1, git's argument) changes
    nothing. Run in the repository; no vault is needed.

    \b
    Example:
      vaultkeeper post-merge
    """
    from vaultkeeper.hosts.git import repair_after_merge

    if squash == "1":
        return
    found = repair_after_merge(Path.cwd())
    for path in found.fixed:
        click.echo(f"vaultkeeper: {path}: counters both machines changed the same way, added up")
    for line in found.notes:
        note(line)
