"""Text and JSON on the standard streams, without importing click when it changes nothing.

The throttled scan's whole run is starting Python and reading one small file, so its
output must not cost a click import; every other command prints through the same two
functions, so the bytes are the same whichever way a command was reached.
"""

from __future__ import annotations

import sys

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

    from vaultkeeper.errors import EXIT_BROKEN_PIPE

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
