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
    """The one JSON rendering every command's --json uses."""
    import json  # here: the throttled scan prints nothing and needs no json

    echo(json.dumps(data, indent=2, sort_keys=False, default=str))
