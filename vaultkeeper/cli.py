"""The root command group: global options, every command registered, errors made one line.

Whatever a command raises, and click's own usage errors, goes to output.fail once; a
command's int return value is its exit code.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from vaultkeeper import __version__, config
from vaultkeeper.commands import (
    anchor,
    apply,
    checks,
    entries,
    gitsync,
    hooks,
    ingest,
    mcp,
    native,
    review,
    scan,
    search,
    status,
)
from vaultkeeper.commands.base import nonempty_path
from vaultkeeper.errors import UsageError
from vaultkeeper.output import fail


class _Group(click.Group):
    """Every failure one line and its exit code (output.fail); click's usage errors too."""

    json_errors = False  # set per run by main(): the command line asked for --json

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise  # usage errors and ctx.exit(): handled in main() below
        except (Exception, KeyboardInterrupt) as exc:  # a bug too: one line, no traceback
            sys.exit(fail(exc, self.json_errors))

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        """The root's own --help and --version print here, before invoke(): a closed pipe too."""
        try:
            return super().make_context(info_name, args, parent, **extra)
        except BrokenPipeError as exc:
            sys.exit(fail(exc))

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        """Click's standalone mode, with its usage errors made one line (exit 2); a
        command's return value, when an int, is its exit code."""
        argv = list(sys.argv[1:] if args is None else args)
        options = argv[: argv.index("--")] if "--" in argv else argv
        self.json_errors = "--json" in options
        if not standalone_mode:
            return super().main(argv, prog_name, complete_var, False, **extra)
        try:
            code = super().main(argv, prog_name, complete_var, False, **extra)
        except click.exceptions.NoArgsIsHelpError as exc:
            # a group with no command (`vaultkeeper`, `vaultkeeper apply`): its help, exit 0
            try:
                click.echo(exc.ctx.get_help() if exc.ctx else "")
            except BrokenPipeError as gone:
                sys.exit(fail(gone))
            sys.exit(0)
        except click.ClickException as exc:
            usage = UsageError(_one_line(exc, _command_words(self, argv)))
            usage.exit_code = exc.exit_code
            sys.exit(fail(usage, self.json_errors))
        except (click.Abort, KeyboardInterrupt):  # Ctrl-C while click reads the arguments
            sys.exit(fail(KeyboardInterrupt()))
        sys.exit(code if isinstance(code, int) else 0)


_CHOICES = re.compile(r"'\{[\w|-]+\}'")
_QUOTED_NAME = re.compile(r"'(--?[A-Za-z][\w-]*|[A-Z][A-Z_]*)'")


def _command_words(group: click.Group, argv: list[str]) -> list[str]:
    """The command a command line names (``["apply", "promote"]``), read from the
    arguments: some of click's errors come with no context to say it."""
    words: list[str] = []
    command: click.Command = group
    tokens = iter(argv)
    for token in tokens:
        if not isinstance(command, click.Group) or token == "--":
            break
        if token == "--vault":  # the one global option with a value
            next(tokens, None)
        elif not token.startswith("-"):
            found = command.commands.get(token)
            if found is None:
                break
            words.append(token)
            command = found
    return words


def _one_line(exc: click.ClickException, argv_words: list[str] | None = None) -> str:
    """``apply promote: missing option --evidence (see --help)`` from click's three lines."""
    message = " ".join(exc.format_message().split()).rstrip(".")
    # click's quotes off option names and metavars; a name the person typed keeps them
    message = _QUOTED_NAME.sub(r"\1", message)
    # a choice argument's metavar is its whole list (`'{memory|decision|...}'`): its name
    param = getattr(exc, "param", None)
    if param is not None and param.name:
        message = _CHOICES.sub(param.name.upper(), message)
    message = message[:1].lower() + message[1:]
    ctx = getattr(exc, "ctx", None)
    words = ctx.command_path.split()[1:] if ctx is not None else (argv_words or [])
    if not words and ctx is None:
        return message
    if words and getattr(exc, "option_name", None) == "--vault":  # `scan --vault V`
        message += f"; --vault is global: it goes first (vaultkeeper --vault PATH {words[0]} ...)"
    where = f"{' '.join(words)}: " if words else ""
    return f"{where}{message} (see {' '.join(['vaultkeeper', *words, '--help'])})"


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--vault",
    type=click.Path(file_okay=False),
    callback=nonempty_path,
    default=None,
    help=f"The vault folder (default: ${config.ENV_VAULT}, else the nearest folder "
    f"upwards holding {config.INDEX_FILE}).",
)
@click.version_option(__version__, prog_name="vaultkeeper")
def cli(vault: Path | None) -> None:
    """Keep an agent's markdown memory vault healthy.

    The scanner (`scan`) classifies entries into promote / prune / held-out
    candidates and never changes the vault; the applier (`apply ...`) carries
    out decisions through gates, journals every one, and deletes nothing
    without a person's explicit yes.

    \b
    Exit codes: 0 ok or nothing to do; 1 refused (a gate, or what the
                vault holds) or findings; 2 usage error (the command line is
                wrong in any vault) or no vault; 3 waiting for a person;
                130 interrupted (Ctrl-C).

    \b
    Example:
      vaultkeeper init ~/memory
      vaultkeeper --vault ~/memory scan
    """


for _command in (
    entries.init,
    entries.new,
    entries.use,
    ingest.ingest,
    scan.scan,
    scan.report,
    search.search,
    apply.apply_group,
    review.review,
    review.restore,
    review.log,
    checks.lint,
    checks.index,
    checks.verify,
    hooks.hooks,
    gitsync.merge_driver,
    gitsync.post_merge,
    status.status,
    mcp.mcp,
    native.native,
):
    cli.add_command(_command)
apply.apply_group.add_command(anchor.apply_anchor)


def main() -> None:
    try:
        cli(prog_name="vaultkeeper")
    except KeyboardInterrupt as exc:  # before or after the group's own handling
        sys.exit(fail(exc))


if __name__ == "__main__":  # pragma: no cover
    main()

__all__ = ["cli", "main"]
