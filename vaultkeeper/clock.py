"""What time it is for a command: now, or the day ``$VAULTKEEPER_TODAY`` names.

Every command takes its "now" from here, once, at the edge. ``VAULTKEEPER_TODAY`` moves
the date, not the time of day (previews, tests); the throttle keeps real time. datetime
is imported by the functions that return one: the throttled scan needs only ``now_ns``.
"""

from __future__ import annotations

import os
import time

from vaultkeeper.config import ENV_TODAY
from vaultkeeper.errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import datetime as dt
    from collections.abc import Mapping


def real_now() -> dt.datetime:
    import datetime as dt

    return dt.datetime.now(dt.timezone.utc)


def parse_day(text: str, what: str) -> dt.date:
    """A YYYY-MM-DD date, or a one-line UsageError naming ``what`` and the value."""
    import datetime as dt

    value = text.strip()
    try:
        if len(value) != 10:
            raise ValueError(value)
        day = dt.date.fromisoformat(value)
    except ValueError:
        raise UsageError(f"{what}={text!r}: not a date; use YYYY-MM-DD") from None
    # spans are added to and taken from "today": stay inside datetime's years
    first, last = dt.date(1900, 1, 1), dt.date(9000, 12, 31)
    if not first <= day <= last:
        raise UsageError(
            f"{what}={text!r}: outside {first.isoformat()}..{last.isoformat()}; "
            "use a day in that range"
        )
    return day


def now(env: Mapping[str, str] | None = None) -> dt.datetime:
    """The real time in UTC, moved to ``$VAULTKEEPER_TODAY``'s date when that is set."""
    current = real_now()
    given = (os.environ if env is None else env).get(ENV_TODAY)
    if not given:
        return current
    day = parse_day(given, ENV_TODAY)
    return current.replace(year=day.year, month=day.month, day=day.day)


def now_ns(env: Mapping[str, str] | None = None) -> int | None:
    """``now()`` as epoch nanoseconds, without importing datetime; None when
    ``$VAULTKEEPER_TODAY`` is set (then ask ``now()``, which moves the date)."""
    if (os.environ if env is None else env).get(ENV_TODAY):
        return None
    return time.time_ns()


def from_ns(ns: int) -> dt.datetime:
    """The UTC datetime of epoch nanoseconds (to the microsecond, as ``now()`` has it)."""
    import datetime as dt

    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    return epoch + dt.timedelta(microseconds=ns // 1000)


def to_ms(moment: dt.datetime | int) -> int:
    """Epoch milliseconds of a datetime, or of epoch nanoseconds (``now_ns``)."""
    if isinstance(moment, int):
        return moment // 1_000_000
    return int(moment.timestamp() * 1000)
