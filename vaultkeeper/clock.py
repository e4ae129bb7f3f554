"""What time it is for a command: now, or the day ``$VAULTKEEPER_TODAY`` names.

Every command takes its "now" from here, once, at the edge; core functions take it as a
parameter. ``VAULTKEEPER_TODAY=YYYY-MM-DD`` makes a command behave as on that date (the
time of day stays the real one, so records made in one run still sort in order): for
previews ("what would be due on the first of March?") and for tests. The throttle's
own bookkeeping (cooldown, lock age) keeps real time: see ``real_now``.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping

from vaultkeeper.config import ENV_TODAY
from vaultkeeper.errors import UsageError


def real_now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def parse_day(text: str, what: str) -> dt.date:
    """A YYYY-MM-DD date, or a one-line UsageError naming ``what`` and the value."""
    value = text.strip()
    try:
        if len(value) != 10:
            raise ValueError(value)
        return dt.date.fromisoformat(value)
    except ValueError:
        raise UsageError(f"{what}={text!r}: not a date; use YYYY-MM-DD") from None


def now(env: Mapping[str, str] | None = None) -> dt.datetime:
    """The real time in UTC, moved to ``$VAULTKEEPER_TODAY``'s date when that is set."""
    current = real_now()
    given = (os.environ if env is None else env).get(ENV_TODAY)
    if not given:
        return current
    day = parse_day(given, ENV_TODAY)
    return current.replace(year=day.year, month=day.month, day=day.day)
