"""`init`, `new` and `use`: make a vault, add an entry, record a reuse."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from vaultkeeper import config
from vaultkeeper.commands.base import nonempty_path, now_utc, vault_path, waiting_to_count
from vaultkeeper.output import Note, Shown, show
from vaultkeeper.store.textsafe import inert


@click.command()
@click.argument("path", type=click.Path(), callback=nonempty_path, required=False)
@click.option(
    "--here",
    is_flag=True,
    help="Make a folder that already holds files (and is not a vault) the vault, "
    "indexing its notes; without it init refuses such a folder (exit 2).",
)
@click.option(
    "--dry-run", is_flag=True, help="Say exactly what init would create, and write nothing."
)
@click.pass_context
def init(ctx: click.Context, path: Path | None, here: bool, dry_run: bool) -> int:
    """Create a vault at PATH (default: --vault, else here); never changes an existing file.

    Lays out _index.md, projects/, patterns/registry.md, references/ with the
    vault's spec, state/ and a .gitignore keeping state/ out of git. PATH is a new or
    empty folder, or a vault to complete; a folder holding other files needs --here.
    The index never lists another vault nested inside, a virtual environment,
    node_modules or hidden folders (.git/).

    \b
    Example:
      vaultkeeper init ~/memory
      vaultkeeper init --here      # this folder, files and all
    """
    from vaultkeeper.entries.init import init_vault

    explicit = ctx.find_root().params.get("vault")
    target = path or explicit or Path(".")
    if dry_run or here:  # a folder of someone's files: what will be written, first
        plan = init_vault(target, here=here, dry_run=True)
        verb = "would create" if dry_run else "will create"
        lines = tuple(f"{verb} {name}" for name in plan.created)
        if dry_run:
            done = f"nothing written; {len(plan.created)} to create in {plan.vault}"
            return show(Shown(lines=(*lines, done)))
        show(Shown(lines=lines))
        if not _go_ahead(len(plan.created)):
            return show(Shown(lines=("nothing written",), code=1))
    result = init_vault(target, here=here)
    lines = (
        *(f"created {name}" for name in result.created),
        *(f"kept    {name} (exists)" for name in result.kept),
        *(Note(f"vaultkeeper: warning: {warning}") for warning in result.warnings),
        f"vault ready at {result.vault}",
    )
    return show(Shown(lines=lines))


def _go_ahead(count: int) -> bool:
    """At a terminal, the person's yes to write ``count`` files and folders; elsewhere
    (a script, a test) init goes on, as it always did, having said what it writes."""
    from vaultkeeper.apply.review import is_terminal

    if not is_terminal(sys.stdin, sys.stdout):
        return True
    try:
        answer = click.prompt(
            f"Write these {count}? [y/N]", default="", show_default=False, prompt_suffix=" "
        )
    except click.Abort:
        return False
    return str(answer).strip().lower() in ("y", "yes")


@click.command()
@click.argument("kind", type=click.Choice(config.ENTRY_KINDS))
@click.argument("name")
@click.option("--description", "-d", required=True, help="One-line recall summary (indexed).")
@click.option("--project", "-p", help="Project folder for memory, decision and research.")
@click.option("--label", type=click.Choice(config.LABELS), help="Promotion weight label.")
@click.option(
    "--falsify",
    metavar="TEXT",
    help="falsification_condition: what would prove the lesson wrong (its re-check).",
)
@click.option(
    "--anchor",
    "anchors",
    multiple=True,
    metavar="PATH[::NAME]",
    help="Code the lesson is about (repeatable): a file, PATH::NAME or 'PATH: TEXT'.",
)
@click.option(
    "--repo", "repo_dir", metavar="DIR", help="The repository of --anchor (default: here)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def new(
    ctx: click.Context,
    kind: str,
    name: str,
    description: str,
    project: str | None,
    label: str | None,
    falsify: str | None,
    anchors: tuple[str, ...],
    repo_dir: str | None,
    as_json: bool,
) -> int:
    """Create an entry from its template and add it to _index.md.

    A memory (a new lesson) starts held_out with a quoted holdout_until a
    hold-out window ahead and label inferred; --falsify says what would prove
    it wrong, the condition it is re-validated against (without it, lint warns:
    VK205). A pattern is a new ### block in the registry with success count 0.

    \b
    Example:
      vaultkeeper new memory retry-flaky-tests -p api -d "Retry flaky tests once, not forever" \\
          --falsify "a retried job hides a real failure"
      vaultkeeper new pattern bisect-first -d "Bisect before reading diffs"
    """
    from vaultkeeper.entries.create import holdout_days_from_env, new_entry

    days = holdout_days_from_env(os.environ)
    result = new_entry(
        vault_path(ctx),
        kind,
        name,
        description,
        project=project,
        label=label,
        today=now_utc().date(),
        holdout_days=days,
        falsify=falsify,
        anchors=anchors,
        repo_dir=repo_dir,
    )
    lines = (
        f"created {result.path}:{result.line} ({kind} {name})",
        *(Note(inert(f"warning: {p}")) for p in result.problems),  # listed without a description
        *([f"indexed {result.index_file}: {result.index_line}"] if result.index_line else []),
    )
    # each problem as its line: a Problem is a named tuple, JSON'd as a list
    data = {**result.__dict__, "problems": [str(p) for p in result.problems]}
    return show(Shown(data, lines), as_json)


@click.command()
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def use(ctx: click.Context, name: str, as_json: bool) -> int:
    """Record one reuse of registry pattern NAME: success count + 1, last used today.

    Only those two lines of the registry change. The use is journaled and
    logged in state/uses.jsonl (source cli), as ingest logs a session's.

    \b
    Example:
      vaultkeeper use bisect-first
    """
    from vaultkeeper.learn.count import record_cli

    result = record_cli(vault_path(ctx), name, now_utc(), waiting_to_count)
    line = inert(
        f"{result.name}: success count {result.count_before} -> {result.count_after}, "
        f"last used {result.last_used} ({result.path})"
    )
    notes = [Note(f"vaultkeeper: note: {result.note}")] if result.note else []
    return show(Shown(result.__dict__, (line, *notes)), as_json)
