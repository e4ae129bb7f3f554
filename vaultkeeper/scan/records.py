"""A memory file's record as the scan cache keeps it in JSON (vaultkeeper.scan.cache).

``MemoryRecord`` is what a scan needs of one memory file (vaultkeeper.scan.memory reads and
judges it): the entry's facts, already in the form the duplicates and decay passes read
them, and for a file that may be held out the few keys its candidate line shows.
``encode_record`` and ``decode_record`` turn it into the cache's JSON and back, refusing
anything this version would not have written.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NamedTuple

    class MemoryRecord(NamedTuple):
        """What a scan keeps of one memory file (vaultkeeper.scan.memory reads and judges it)."""

        # name, description, status, holdout_until, last_validated, provenance_date: the
        # fields of decay.MemoryFacts after its path; None: the file is not an entry
        facts: tuple[Any, ...] | list[Any] | None
        line: int  # the holdout_until line (1 when it has none)
        hash: str | None  # file_hash of its text; None: not a held-out candidate on any day
        details: tuple[Any, Any, Any] | list[Any] | None  # label, status, condition, as written
        problem: tuple[int | None, str] | None  # (line, reason): unreadable

else:  # the same tuple without importing typing (a scan has no other use for it)
    from collections import namedtuple

    MemoryRecord = namedtuple("MemoryRecord", ("facts", "line", "hash", "details", "problem"))

_BIG = 10**15  # ints JSON and int() round-trip without the 4,300-digit limit


# In JSON: [facts, line, hash, details] (details None when hash is), ["problem", line,
# reason], or [None] for a file that is not an entry. A date is kept as its ISO text,
# which every reader of these values takes as the same date (model.parse_date, str());
# a value JSON cannot carry as YAML gave it (a time, a mapping, a huge number) leaves
# the file out of the cache: it is read every scan.


def encode_record(record: MemoryRecord) -> list[Any] | None:
    if record.problem is not None:
        return ["problem", record.problem[0], record.problem[1]]
    if record.facts is None:
        return [None]
    if not all(map(_plain, record.facts)):
        return None
    details = record.details
    if details is not None and not all(map(_plain, details)):
        return None
    return [list(record.facts), record.line, record.hash, details and list(details)]


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

    Only what a reader could trip on is checked (the texts it joins and compares);
    the other values go through model.parse_date or str(), which take anything.
    """
    if type(raw) is not list:
        return None
    if len(raw) == 4:
        facts, line, digest, details = raw
        if type(facts) is not list or len(facts) != 6 or type(line) is not int:
            return None
        name, description, status, _, _, since = facts
        if not (type(name) is str and type(description) is str):
            return None
        if not ((status is None or type(status) is str) and (since is None or type(since) is str)):
            return None
        if digest is None:
            if details is not None:
                return None
        elif not (type(digest) is str and type(details) is list and len(details) == 3):
            return None
        return MemoryRecord(facts, line, digest, details, None)
    if raw == [None]:
        return MemoryRecord(None, 1, None, None, None)
    if len(raw) == 3 and raw[0] == "problem":
        line, reason = raw[1], raw[2]
        if (line is None or type(line) is int) and type(reason) is str:
            return MemoryRecord(None, 1, None, None, (line, reason))
    return None
