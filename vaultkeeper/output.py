"""Text, JSON and errors on the standard streams, without importing click when it
changes nothing.

The throttled scan's whole run is starting Python and reading one small file, so its
output must not cost a click import; every command prints through these functions and
says its failure through ``fail``, so the bytes are the same whichever way a command
was reached.
"""

from __future__ import annotations

import sys

from vaultkeeper.errors import EXIT_BROKEN_PIPE, explain

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def echo(message: str, err: bool = False) -> None:
    """click.echo(message, err=err), without importing click when it would change nothing.

    click writes to the standard stream as it is unless the stream's encoding is ASCII
    or missing, and strips ANSI codes when the stream is not a terminal; in those cases
    (and where the text does not encode: click raises, from its own line) click itself
    does the writing. On Windows click has console streams of its own.
    """
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
    """A closed stdout pipe, at the CLI's edge: quiet, and the exit code to leave with.

    The reader (``head``, ``true``) has what it wanted; a message would only be noise on
    the terminal. stdout now points at the null device so Python's flush at exit (of
    whatever the failed write left in the buffer) does not raise the same error again.
    """
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
    """What every edge that runs a command does with what it caught: the line
    errors.explain gives on stderr, with ``as_json`` (``--json`` was asked for) also one
    JSON object on stdout, ``{"error": ..., "exit": N}``, so an agent that asked for JSON
    always gets JSON; the exit code to leave with."""
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
