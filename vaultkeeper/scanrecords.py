"""A memory file's record as the scan cache keeps it in JSON (vaultkeeper.scancache).

``MemoryRecord`` is what a scan needs of one memory file (vaultkeeper.memscan reads and
judges it); ``encode_record`` and ``decode_record`` turn it into the cache's JSON and
back, refusing anything this version would not have written.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NamedTuple

    class MemoryRecord(NamedTuple):
        """What a scan keeps of one memory file (vaultkeeper.memscan reads and judges it)."""

        meta: dict[str, Any] | None  # memscan.FACTS and DETAILS it has; None: no entry
        line: int  # the holdout_until line (1 when it has none)
        hash: str | None  # file_hash of its text; None: not a held-out candidate on any day
        problem: tuple[int | None, str] | None  # (line, reason): unreadable

else:  # the same tuple without importing typing (a scan has no other use for it)
    from collections import namedtuple

    MemoryRecord = namedtuple("MemoryRecord", ("meta", "line", "hash", "problem"))

_BIG = 10**15  # ints JSON and int() round-trip without the 4,300-digit limit


# In JSON: [meta, line, hash or None, dated] (``dated``: the keys whose value is a date,
# kept as its ISO text), ["problem", line, reason], or [None] for a file that is not an
# entry. A value JSON cannot carry as YAML gave it (a time, a mapping, a huge number)
# leaves the file out of the cache: it is read every scan.


def encode_record(record: MemoryRecord) -> list[Any] | None:
    import datetime as dt

    if record.problem is not None:
        return ["problem", record.problem[0], record.problem[1]]
    if record.meta is None:
        return [None]
    meta: dict[str, Any] = {}
    dated: list[str] = []
    for key, value in record.meta.items():
        if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
            meta[key] = value.isoformat()
            dated.append(key)
        elif _plain(value) or (isinstance(value, list) and all(_plain(v) for v in value)):
            meta[key] = value
        else:
            return None
    return [meta, record.line, record.hash, dated]


def _plain(value: Any) -> bool:
    if value is None or isinstance(value, (str, bool)):
        return True
    if isinstance(value, int):
        return -_BIG < value < _BIG
    if isinstance(value, float):
        return value == value and abs(value) != float("inf")
    return False


def decode_record(raw: Any) -> MemoryRecord | None:
    """The record, or None for anything this version would not have written.

    The values are not checked one by one: JSON gives only what YAML can give too, and
    the scan takes any YAML value a file holds.
    """
    if type(raw) is not list:
        return None
    if len(raw) == 4:
        meta, line, digest, dated = raw
        if type(meta) is not dict or type(line) is not int:
            return None
        if not (digest is None or (type(digest) is str and "holdout_until" in meta)):
            return None  # a hash is kept only for a file with one (memscan.may_hold_out)
        if dated:
            import datetime as dt

            meta = dict(meta)  # the kept entry stays as JSON wrote it
            try:
                for key in dated:
                    meta[key] = dt.date.fromisoformat(meta[key])
            except (KeyError, TypeError, ValueError):
                return None
        return MemoryRecord(meta, line, digest, None)
    if raw == [None]:
        return MemoryRecord(None, 1, None, None)
    if len(raw) == 3 and raw[0] == "problem":
        line, reason = raw[1], raw[2]
        if (line is None or type(line) is int) and type(reason) is str:
            return MemoryRecord(None, 1, None, (line, reason))
    return None
