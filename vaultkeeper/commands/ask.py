"""The questions put to a person at a terminal: the prune prompt and review's."""

from __future__ import annotations

import sys
from typing import Any

import click

from vaultkeeper import config
from vaultkeeper.store.textsafe import inert


def show_and_ask(title: str, text: str, question: str) -> str:
    """Show vault text made inert (see textsafe), then ask: the screen shows the file."""
    click.echo(inert(title))
    click.echo("-" * 60)
    click.echo(inert(text), nl=not text.endswith("\n"))
    click.echo("-" * 60)
    return str(click.prompt(question, default="", show_default=False, prompt_suffix=" "))


def _confirm_prune(plan: Any) -> bool:
    from vaultkeeper.apply.review import is_yes

    count = "" if plan.count is None else f" (success count {plan.count})"
    title = (
        f"This {plan.kind} will be deleted{count}: {plan.where}. It moves to "
        f"{config.TRASH_DIR}/ and `vaultkeeper restore ID` brings it back."
    )
    try:
        answer = show_and_ask(title, plan.text, "Delete it? Only y or yes deletes [y/N]:")
    except click.Abort:  # Ctrl-C / Ctrl-D at the question: a clear no, journaled as one
        click.echo("")
        return False
    return is_yes(answer)


def _confirm_merge(plan: Any) -> bool:
    from vaultkeeper.apply.review import is_yes

    title = f"{plan.title} `vaultkeeper restore ID` undoes it. It writes exactly this:"
    try:
        answer = show_and_ask(title, plan.diff_text, "Merge them? Only y or yes merges [y/N]:")
    except click.Abort:  # Ctrl-C / Ctrl-D at the question: a clear no
        click.echo("")
        return False
    return is_yes(answer)


def _confirm(plan: Any) -> bool:
    """The question for what the plan would delete: a prune's, or a merge's."""
    from vaultkeeper.apply.merge import MergePlan

    return _confirm_merge(plan) if isinstance(plan, MergePlan) else _confirm_prune(plan)


def prune_confirm(dry_run: bool) -> Any:
    """A prompt only when a person is there: stdin and stdout both terminals. It asks
    before a prune and before a merge (both take an entry out of the vault)."""
    from vaultkeeper.apply.review import is_terminal

    return _confirm if not dry_run and is_terminal(sys.stdin, sys.stdout) else None


def ask_person(item: Any) -> str:
    """The person's answer to one queued ask; Ctrl-C or Ctrl-D is STOP, a clean end."""
    from vaultkeeper.apply.review import STOP, parse_answer

    changed = " (changed since it was queued: this is how it is now)" if item.changed else ""
    click.echo("")
    title = f"[{item.ask.id}] {item.title}{changed}\nasked {item.ask.ts}: {item.ask.reason}"
    question = "[y]es / [n]o / [s]kip / [q]uit:"
    try:
        answer = parse_answer(show_and_ask(title, item.text, question))
        while answer is None:
            click.echo("answer y, n, s (or nothing) to skip, or q")
            reply = click.prompt(question, default="", show_default=False, prompt_suffix=" ")
            answer = parse_answer(str(reply))
    except click.Abort:  # click.prompt's Ctrl-C / Ctrl-D
        click.echo("")
        return STOP
    return answer


def show_outcome(outcome: Any) -> None:
    """One result line right after the answer (a deletion's says the id that undoes it)."""
    click.echo(inert(f"{outcome.outcome}: {outcome.action} {outcome.target}: {outcome.reason}"))
