"""Text, JSON and errors on the standard streams, without importing click when it
changes nothing (the throttled scan); the same bytes whichever way a command was reached.

A command's result is shown in one place: the command builds a frozen `Shown` (the data
for ``--json``, the lines for a person, the notes for stderr, the exit code) and `show`
renders it as text or JSON.
"""

from __future__ import annotations

import sys
from collections import namedtuple  # imported by Python's start already: no typing here

from vaultkeeper.errors import EXIT_BROKEN_PIPE, explain

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def echo(message: str, err: bool = False) -> None:
    """click.echo(message, err=err); click itself only where it would change something
    (ASCII or no encoding, ANSI codes, text that does not encode, Windows)."""
    import codecs  # imported by Python's start already

    stream = sys.stderr if err else sys.stdout
    if stream is None:
        return
    encoding = getattr(stream, "encoding", None)
    errors = getattr(stream, "errors", None)
    try:
        plain = (
            "\x1b" not in message
            and isinstance(encoding, str)
            and isinstance(errors, str)
            and sys.platform != "win32"
            and codecs.lookup(encoding).name != "ascii"
        )
        if plain:
            message.encode(str(encoding), str(errors))  # else click raises, from its own line
    except (UnicodeError, LookupError):
        plain = False
    if not plain:
        import click

        click.echo(message, err=err)
        return
    stream.write(message + "\n")
    stream.flush()


def stdout_gone() -> int:
    """A closed stdout pipe: quiet, stdout pointed at the null device (so the flush at
    exit does not raise again), and the exit code to leave with."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no real file descriptor (a test's runner)
        pass
    return EXIT_BROKEN_PIPE


def print_json(data: Any) -> None:
    """The one JSON rendering every command's --json uses."""
    import json  # here: the throttled scan prints nothing and needs no json

    echo(json.dumps(data, indent=2, sort_keys=False, default=str))


def fail(exc: BaseException, as_json: bool = False) -> int:
    """What every edge does with what it caught: errors.explain's line on stderr (and with
    ``as_json``, ``{"error": ..., "exit": N}`` on stdout); the exit code to leave with."""
    import contextlib  # here: the throttled scan imports this module

    message, code = explain(exc)
    if isinstance(exc, BrokenPipeError):  # the reader (`head`) has what it wanted: quiet
        return stdout_gone()
    if isinstance(exc, KeyboardInterrupt):  # never click's "Aborted!" and 1 (a refusal)
        with contextlib.suppress(OSError):  # stderr gone too: the code still says it
            echo(f"vaultkeeper: {message}", err=True)
        return code
    from vaultkeeper.store.textsafe import inert

    echo(f"vaultkeeper: error: {inert(message)}", err=True)
    if as_json:
        try:
            print_json({"error": message, "exit": code})
        except BrokenPipeError:  # the error's own code still says what went wrong
            stdout_gone()
    return code


class Note(str):
    """A line of a person's text that goes to stderr, in its place among the others."""


class Shown(namedtuple("Shown", "data lines notes code", defaults=(None, (), (), 0))):
    """What a command shows: ``data`` for --json; ``lines`` for a person (a `Note` among
    them to stderr); ``notes`` to stderr first, as text or JSON; the exit code."""

    __slots__ = ()


def show(shown: Shown, as_json: bool = False) -> int:
    """Render ``shown`` as JSON or as text; its exit code. Text is shown inert (textsafe):
    any line may hold a name or a value read from a vault file."""
    from vaultkeeper.store.textsafe import inert

    for note in shown.notes:
        echo(inert(note), err=True)
    if as_json:
        print_json(shown.data)
    for line in () if as_json else shown.lines:
        echo(inert(line), err=isinstance(line, Note))
    return int(shown.code)
