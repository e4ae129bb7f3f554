"""``native``: curate Claude Code's auto memory, the vault's inbox.

Claude Code keeps writing its memory files; vaultkeeper counts their use
(``<cc-memory>`` tags in a session's replies, read by ``ingest``), reviews them, and,
through the same gates as the vault, promotes one into a lesson or prunes one with a
person's yes. A native file's bytes never change otherwise.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from vaultkeeper.commands.apply import _render_outcome
from vaultkeeper.commands.base import AS_JSON, now_utc, print_json, usage_error, vault_path
from vaultkeeper.store.textsafe import inert


@click.group("native")
def native() -> None:
    """Curate Claude Code's auto memory (~/.claude/projects/<project>/memory/).

    \b
    Example:
      vaultkeeper native adopt --all           curate every project's auto memory
      vaultkeeper native review                what to promote, prune, and what the caps cut
      vaultkeeper native prune work-api/old.md  asks a person; restore ID undoes it
    """


@native.command("adopt")
@click.argument("folders", nargs=-1, type=click.Path(file_okay=False, path_type=Path))
@click.option("--all", "every", is_flag=True, help="Every auto-memory folder there is.")
@click.option("--cwd", "cwds", multiple=True, help="The folder a session in this project uses.")
@click.pass_context
def adopt(
    ctx: click.Context, folders: tuple[Path, ...], every: bool, cwds: tuple[str, ...]
) -> None:
    """Record which auto-memory folders this vault curates (on this machine).

    Name FOLDERS, or a project's working directory with --cwd, or --all. Claude Code
    keeps writing them; nothing in them is changed by adopting.

    \b
    Example:
      vaultkeeper native adopt --cwd ~/src/api
    """
    from vaultkeeper.native.folders import adopt as record
    from vaultkeeper.native.folders import discover, folder_for_cwd

    home = Path.home()
    chosen = list(folders) + [p for c in cwds if (p := folder_for_cwd(home, c)) is not None]
    if every:
        chosen += discover(home)
    if not chosen:
        raise usage_error("name a folder, --cwd DIR or --all")
    for folder in record(vault_path(ctx), home, chosen):
        click.echo(inert(f"adopted {folder.project}: {folder.path}"))


@native.command("review")
@AS_JSON
@click.pass_context
def review_cmd(ctx: click.Context, as_json: bool) -> None:
    """What each adopted folder holds: promote and prune candidates, what the caps
    cut, problems. Reads only; exit 0.

    \b
    Example:
      vaultkeeper native review --json
    """
    from vaultkeeper.native.folders import adopted
    from vaultkeeper.native.review import review

    vault, today = vault_path(ctx), now_utc().date()
    reviews = [review(vault, f, today) for f in adopted(vault)]
    if as_json:
        print_json({"folders": [r.to_dict() for r in reviews]})
        return
    if not reviews:
        click.echo("no auto-memory folder adopted (vaultkeeper native adopt --all)")
    for r in reviews:
        click.echo(
            inert(
                f"{r.folder.project}: {r.files} files, {r.used_recently} used in the "
                f"last 90 days, {r.never_used} never used ({r.folder.path})"
            )
        )
        for finding in r.findings:
            click.echo(inert(f"  {finding.line()}"))


def _confirm(plan: Any) -> bool:
    from vaultkeeper.apply.review import is_yes
    from vaultkeeper.commands.apply import show_and_ask

    title = (
        f"This Claude Code memory will leave {plan.path.parent}: {plan.path.name} (and "
        f"{len(plan.index_cut)} MEMORY.md line). `vaultkeeper restore ID` brings both back."
    )
    try:
        return is_yes(show_and_ask(title, plan.text, "Delete it? Only y or yes deletes [y/N]:"))
    except click.Abort:
        click.echo("")
        return False


@native.command("prune")
@click.argument("target")
@AS_JSON
@click.pass_context
def prune(ctx: click.Context, target: str, as_json: bool) -> NoReturn:
    """Move one native memory to the vault's .trash/, on a person's yes at a terminal.

    TARGET is <project>/<file>.md as `native review` names it. Without a terminal
    nothing moves and the exit code is 3 (waiting for a person).

    \b
    Example:
      vaultkeeper native prune home-me-src-api/old-note.md
    """
    from vaultkeeper.apply.decision import Decision
    from vaultkeeper.apply.native import ACTION
    from vaultkeeper.apply.native import prune as run
    from vaultkeeper.apply.review import is_terminal

    confirm = _confirm if is_terminal(sys.stdin, sys.stdout) else None
    outcome = run(vault_path(ctx), Decision(ACTION, target), now_utc(), confirm)
    _render_outcome(ctx, outcome, as_json)


@native.command("promote")
@click.argument("target")
@click.option("--project", required=True, help="The vault project the lesson goes to.")
@AS_JSON
@click.pass_context
def promote(ctx: click.Context, target: str, project: str, as_json: bool) -> NoReturn:
    """Make a native memory used in 2+ sessions a vault lesson (held out, with its
    receipts as provenance). The native file stays as it is.

    \b
    Example:
      vaultkeeper native promote home-me-src-api/testing.md --project api
    """
    from vaultkeeper.apply.decision import Decision
    from vaultkeeper.entries.native_promote import ACTION
    from vaultkeeper.entries.native_promote import promote as run

    outcome = run(vault_path(ctx), Decision(ACTION, target), now_utc(), project)
    _render_outcome(ctx, outcome, as_json)
