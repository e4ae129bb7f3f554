"""The text helpers every rendering of a report shares: times, ages, one-line values.

Apart from the report's records (report/candidates.py) so that they and the brief's
wording (report/brief_layout.py) share one copy without importing each other.
"""

from __future__ import annotations

import datetime as dt
import re

from vaultkeeper.store.secrets import needs_serving, served


def iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def plural(n: int, unit: str) -> str:
    return f"{n} {unit}" if n == 1 else f"{n} {unit}s"


def age_text(made: dt.datetime, now: dt.datetime) -> str:
    """How long ago ``made`` was, in the largest unit that reads well."""
    seconds = int((now - made).total_seconds())
    if seconds < 0:
        return "in the future (check the clock)"
    if seconds < 90:
        return f"{plural(seconds, 'second')} ago"
    if seconds < 90 * 60:
        return f"{plural(seconds // 60, 'minute')} ago"
    if seconds < 48 * 3600:
        return f"{plural(seconds // 3600, 'hour')} ago"
    return f"{plural(seconds // 86400, 'day')} ago"


_LINE_BREAKS = re.compile(r"[ \t]*[\r\n\v\f\x85\u2028\u2029]+[ \t]*")


def one_line(text: str) -> str:
    """Line breaks -> one space: a value read from a file can't add lines to the output.

    Credentials are masked and terminal control characters stripped as well
    (vaultkeeper.store.secrets.served): every line the report and the brief print goes
    through here.
    """
    return _LINE_BREAKS.sub(" ", served(text))  # served first: a CR may cut a token


def one_lines(texts: list[str]) -> list[str]:
    """one_line of each text, with one check for them all: a big report's lines almost
    never hold a line break, a credential or a control character."""
    whole = "".join(texts)
    if not needs_serving(whole):  # which holds every line break too: none is printable
        return texts
    return [one_line(text) for text in texts]
