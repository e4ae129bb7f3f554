"""The console script: ``vaultkeeper scan`` without click, every other command through it.

A session-end hook runs ``vaultkeeper scan`` after every session, almost always inside
the cooldown, where the whole run is starting Python and reading one small JSON file;
importing click and building the command tree would cost about as much again. So for
exactly the scan command's own forms -- ``[--vault PATH | --vault=PATH] scan`` with any
of ``--force``, ``--strict`` and ``--json`` once each -- this module reads argv itself,
calls the same core function and prints the same bytes as the click command in cli.py.
Anything else (help, another command, an unusual argument, a vault that cannot be found
or a shell-completion request) goes to click untouched, which reports it. Nothing is
decided here before that hand-over, so a hand-over never follows a write.

run() mirrors cli.scan and the click group's error handling: a change to either belongs
here too. tests/test_entry.py runs both ways on the same cases and compares every byte.
"""

from __future__ import annotations

import datetime as dt
import gc
import json
import os
import sys
from pathlib import Path
from typing import Any, NamedTuple

from vaultkeeper.errors import VaultkeeperError, internal_error

_FLAGS = ("--force", "--strict", "--json")
_COMPLETE_VAR = "_VAULTKEEPER_COMPLETE"  # click's shell completion for prog "vaultkeeper"


class ScanArgs(NamedTuple):
    vault: str | None  # --vault as given, or None
    force: bool
    strict: bool
    as_json: bool


def parse(args: list[str]) -> ScanArgs | None:
    """The scan command's arguments, or None when click should read them."""
    vault: str | None = None
    if args[:1] == ["--vault"] and len(args) >= 3:
        vault, rest = args[1], args[2:]
    elif args[:1] and args[0].startswith("--vault="):
        vault, rest = args[0][len("--vault=") :], args[1:]
    else:
        rest = args
    if rest[:1] != ["scan"]:
        return None
    flags = rest[1:]
    if any(f not in _FLAGS for f in flags) or len(set(flags)) != len(flags):
        return None
    return ScanArgs(vault, "--force" in flags, "--strict" in flags, "--json" in flags)


def _vault(given: str | None) -> Path | None:
    """The vault as cli.vault_path finds it, or None when click should say what is wrong."""
    from vaultkeeper.vault import find_vault

    if given is not None and not (
        given and os.path.isdir(given) and os.access(given, os.R_OK)  # click.Path's checks
    ):
        return None
    try:
        return find_vault(None if given is None else Path(given), os.environ, Path.cwd())
    except (VaultkeeperError, OSError):
        return None


def echo(message: str, err: bool = False) -> None:
    """click.echo(message, err=err), without importing click when it would change nothing.

    click writes to the standard stream as it is unless the stream's encoding is ASCII
    or missing, and strips ANSI codes when the stream is not a terminal; in those cases
    click itself does the writing.
    """
    stream = sys.stderr if err else sys.stdout
    if stream is None:
        return
    encoding = getattr(stream, "encoding", None)
    errors = getattr(stream, "errors", None)
    plain = (
        "\x1b" not in message
        and isinstance(encoding, str)
        and isinstance(errors, str)
        and bool(encoding)
        and sys.platform != "win32"  # click has console streams of its own there
        and not _ascii(encoding)
        and _encodes(message, encoding, errors)  # else click raises, from its own line
    )
    if not plain:
        import click

        click.echo(message, err=err)
        return
    stream.write(message + "\n")
    stream.flush()


def _encodes(message: str, encoding: str, errors: str) -> bool:
    try:
        message.encode(encoding, errors)
    except (UnicodeError, LookupError):
        return False
    return True


def _ascii(encoding: str) -> bool:
    import codecs

    try:
        return codecs.lookup(encoding).name == "ascii"
    except LookupError:
        return False


def run(vault: Path, args: ScanArgs) -> int:
    """What cli.scan does, and the group's error handling around it; the exit code."""
    from vaultkeeper.scan import run_scan

    try:
        now = dt.datetime.now(dt.timezone.utc)
        outcome = run_scan(vault, now=now, env=os.environ, force=args.force, pid=os.getpid())
        for message in outcome.notes:
            echo(f"vaultkeeper: note: {message}", err=True)
        if outcome.report is None:
            if args.as_json:  # an agent parsing stdout gets JSON either way
                print_json({"skipped": outcome.skipped, "detail": outcome.detail})
            elif sys.stderr.isatty():  # a person wondering why nothing printed; hooks see nothing
                echo(f"vaultkeeper: note: scan skipped ({outcome.skipped}): {outcome.detail}", True)
            return 0
        print_report(outcome.report, args.as_json)
        return 1 if args.strict and outcome.report.problems else 0
    except VaultkeeperError as exc:
        echo(f"vaultkeeper: error: {exc}", err=True)
        return exc.exit_code
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        echo(f"vaultkeeper: error: {where}{exc.strerror or exc}", err=True)
        return 1
    except (EOFError, KeyboardInterrupt):  # as click's standalone mode reports them
        echo("", err=True)
        echo("Aborted!", err=True)
        return 1
    except Exception as exc:  # a bug: one line, as the click group says it
        echo(f"vaultkeeper: error: {internal_error(exc)}", err=True)
        return 1


def print_report(report: Any, as_json: bool, made: str | None = None) -> None:
    """Problems to stderr; the report (with ``made``, when given, as its second line)."""
    from vaultkeeper.report import render_problems, render_text

    if report.problems:
        echo("\n".join(render_problems(report)), err=True)
    if as_json:
        print_json(report.to_dict())
        return
    lines = render_text(report)
    if made is not None:
        lines.insert(1, made)
    echo("\n".join(lines))


def print_json(data: Any) -> None:
    """The one JSON rendering every command's --json uses (cli.py imports it)."""
    echo(json.dumps(data, indent=2, sort_keys=False, default=str))


def main() -> None:
    args = None if os.environ.get(_COMPLETE_VAR) else parse(sys.argv[1:])
    vault = None if args is None else _vault(args.vault)
    if args is not None and vault is not None:
        # One short burst of allocation that makes no reference cycles worth collecting:
        # the cyclic collector would only walk every imported module's objects again, and
        # once more at exit. Off for the run, and what is left is not walked at exit.
        gc.disable()
        code = run(vault, args)
        gc.freeze()
        sys.exit(code)
    from vaultkeeper.cli import main as click_main

    click_main()
