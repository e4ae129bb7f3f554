"""`review`, `restore` and `log`: a person's answers, undo, and the journal."""

from __future__ import annotations

import sys

import click

from vaultkeeper.commands.apply import ask_person, decide, show_outcome
from vaultkeeper.commands.base import AS_JSON, DRY_RUN, now_utc, vault_path
from vaultkeeper.output import Note, Shown, show
from vaultkeeper.store.textsafe import inert, inert_line


@click.command()
@click.option(
    "--list", "list_only", is_flag=True, help="Only list what waits (no terminal needed)."
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="The waiting asks as a JSON list ([] when none waits).",
)
@click.pass_context
def review(ctx: click.Context, list_only: bool, as_json: bool) -> int:
    """Walk the queued asks (deletions, override demotions) one at a time: yes / no / skip.

    For a person at a terminal: without one (stdin and stdout both TTYs) it
    refuses and exits 3. Yes carries the decision out, no closes it, skip (or
    an empty answer) leaves it queued. Exit 0 once nothing waits, 3 while an
    ask is still queued (skipped, quit, or a yes that could not be carried out).

    \b
    Example:
      vaultkeeper review
      vaultkeeper review --list --json
    """
    from vaultkeeper.apply import journal
    from vaultkeeper.apply.review import is_terminal
    from vaultkeeper.apply.review import review as walk
    from vaultkeeper.errors import EXIT_ASK, NeedsPerson

    vault = vault_path(ctx)
    damaged = journal.damaged(vault)
    errors = tuple(inert(f"vaultkeeper: error: {problem}") for problem in damaged)
    waiting = journal.pending(vault)
    if list_only:
        more = f" (and {len(damaged)} unreadable queue line(s))" if damaged else ""
        lines = (
            *(inert_line(f"{ask.id}  {ask.what}: {ask.reason}") for ask in waiting),
            f"{len(waiting)} waiting for a person{more}",
        )
        data = [a.to_dict() for a in waiting]
        return show(Shown(data, lines, errors, code=int(bool(damaged))), as_json)
    terminal = is_terminal(sys.stdin, sys.stdout)
    if not waiting and not damaged:  # nothing waits: nothing to do, not exit 3
        # with --json and no terminal, the --list --json shape: an agent asked for JSON
        return show(Shown([], ("0 waiting for a person",)), as_json and not terminal)
    show(Shown(notes=errors))
    if not terminal:
        raise NeedsPerson(
            f"review is for a person at a terminal (stdin and stdout must be terminals); "
            f"{len(waiting)} ask(s) waiting; `vaultkeeper review --list` shows them"
        )
    result = walk(vault, now_utc(), ask_person, show_outcome)
    # what the person skipped (or could not be done) still waits for a person: exit 3
    code = EXIT_ASK if result.remaining else 0
    return show(Shown(lines=(f"{result.remaining} still waiting",), code=code))


@click.command()
@click.argument("trash_id", metavar="ID")
@DRY_RUN
@AS_JSON
@click.pass_context
def restore(ctx: click.Context, trash_id: str, dry_run: bool, as_json: bool) -> int:
    """Put deleted block or file ID back from .trash/ (ids: `vaultkeeper log`).

    The file is byte-identical to before the prune if nothing changed since;
    otherwise the block goes back between its old neighbours, or at the end of
    the file, and the output says which.

    \b
    Example:
      vaultkeeper restore 20261201-101500-a1b2c3
    """
    from vaultkeeper.apply.decision import Decision

    return decide(ctx, Decision("restore", trash_id), dry_run, as_json)


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the records as a JSON list.")
@click.option(
    "-n", "last", type=click.IntRange(min=1), default=None, help="Only the last N records."
)
@click.pass_context
def log(ctx: click.Context, as_json: bool, last: int | None) -> int:
    """Print the decision journal (state/journal.jsonl), newest last.

    An empty journal says so (on stderr; --json prints []).

    \b
    Example:
      vaultkeeper log -n 5
      vaultkeeper log --json
    """
    from vaultkeeper.apply.journal import read

    result = read(vault_path(ctx))
    records = list(result.records)[-last:] if last else list(result.records)
    lines = [
        inert_line(
            f"{r.get('ts', '?')}  {str(r.get('outcome', '?')):<7} "
            f"{str(r.get('action', '?')):<10} {r.get('target', '?')}: "
            f"{r.get('reason', '')}" + (f"  [{r['id']}]" if r.get("id") else "")
        )
        for r in records
    ]
    none = Note("vaultkeeper: note: no decisions journaled yet")
    warnings = tuple(f"vaultkeeper: warning: {problem}" for problem in result.problems)
    return show(Shown(records, tuple(lines or [none]), warnings), as_json)
