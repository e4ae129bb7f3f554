"""The scan's rows in the derived store: what a scan read of each file, so that the next
scan does not read an unchanged file again.

What a scan finds in a file depends on its bytes alone, so it is a row of
``state/vaultkeeper.db`` by vault-relative path and stat key ``(device, inode, size,
mtime_ns, ctime_ns)``, used only while the file still has that key. A file changed
within ``RACY_NS`` of the scan's start (two writes in one clock tick can keep the key)
is not kept; a racy registry file is, with its bytes' digest (registry/keptheads.py
only finds where the next version changed from it). The duplicates pass keeps each
group's pairs under a digest of its entries (upkeep/duplicates.py). Changed rows are
written in one transaction at the end of a scan (never by ``scan --as-of``); a failure
to write them never fails the scan. A scan that builds every row says so (``RebuildNote``).
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from typing import Any, NamedTuple, TextIO

from vaultkeeper import config
from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.store import db
from vaultkeeper.store.db import content_digest, stat_key


class MemoryRecord(NamedTuple):
    """What a scan keeps of one memory file (vaultkeeper.scan.memory reads it)."""

    # decay.MemoryFacts' fields after its path; None: the file is not an entry
    facts: tuple[Any, ...] | list[Any] | None
    line: int  # the holdout_until line (1 when it has none)
    hash: str | None  # file_hash of its text; None: not a held-out candidate on any day
    details: tuple[Any, Any, Any] | list[Any] | None  # label, status, condition
    problem: tuple[int | None, str] | None  # (line, reason): unreadable
    served: list[Any] | None = None  # what the brief shows (report/brief.py fields)


RACY_NS = db.RACY_NS
Key = str  # store.db.stat_key's text of (device, inode, size, mtime_ns, ctime_ns)

_PAIR_META = ("settings", "complete", "unkept")
PATTERNS_TOTAL = "patterns_total"  # scan_meta: how many readable patterns the registry has
_TABLES = ("scan_memory", "scan_registry", "scan_pairs", "scan_meta", "brief_patterns")


# built once: json.dumps with options builds an encoder per call (thousands a scan)
_json = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def _loads(text: Any) -> Any:
    """A stored JSON value, or None when it is not one (a forged or truncated row)."""
    if type(text) is not str:
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


class ScanCache:
    """One scan's view of its rows: what it found, and what it will keep. ``pairs`` is
    the duplicates pass's rows as one dict (``settings``, ``complete``, ``unkept``,
    ``groups``: group -> [digest, pairs]); ``patterns`` the brief's most-used patterns
    and their total."""

    def __init__(
        self,
        memory: dict[str, tuple[str, str, str]] | None = None,
        registry: dict[str, tuple[str, str | None, str]] | None = None,
        pairs: dict[str, Any] | None = None,
        patterns: tuple[list[tuple[Any, ...]], int | None] = ([], None),
        *,
        fresh: bool = False,
    ) -> None:
        """From the rows found; ``fresh`` (``scan --fresh``): none used, all replaced."""
        self.fresh = fresh
        self._memory: dict[str, tuple[str, str, str]] = memory or {}
        self._registry: dict[str, tuple[str, str | None, str]] = registry or {}
        self._pairs: dict[str, Any] = pairs or {}
        self.patterns_found = patterns
        self.patterns = patterns  # the scan puts the brief's patterns here
        self.kept_memory: dict[str, tuple[str, str, str]] = {}
        self.kept_registry: dict[str, tuple[str, str | None, str]] = {}
        self._racy_registry: set[str] = set()
        self.kept_pairs: dict[str, Any] = {}
        self.hits = 0
        self.misses = 0
        self.missed: list[str] = []  # memory files read again (or unreadable)
        self.texts: dict[str, str] = {}  # their texts (a few, unless rebuilding)
        # memory and registry files' keys and settledness as found (the full-text index's)
        self.stats: dict[str, tuple[Key, bool]] = {}
        self.registry_keys: dict[str, tuple[Key, bool] | None] = {}
        self._unkept_projects: list[str] | None = None
        self.complete = True  # every file read is kept (else the pairs cover one that is not)
        self.note: RebuildNote | None = None  # set by a scan that says so
        self.began = time.time_ns()  # before any file's stat
        self.limit = self.began - RACY_NS  # a file changed since is not kept
        # keys the scan took just before (scan/reportrow.py ``inputs``), used once each
        self.taken: dict[str, tuple[Key, bool] | None] = {}

    def _key(self, full: str) -> tuple[Key, bool] | None:
        """A regular file's key and whether it is settled; None for anything else (a FIFO
        or a device: read_regular refuses it)."""
        if full in self.taken:
            return self.taken.pop(full)
        try:
            st = os.stat(full)
        except OSError:
            return None
        return stat_key(st, self.limit) if (st.st_mode & 0o170000) == 0o100000 else None

    def memory(self, rel: str, full: str) -> tuple[MemoryRecord | None, Key | None]:
        """The kept record of ``rel`` if the file is unchanged, and the key to keep a new
        one under (None: not to be kept)."""
        got = self._key(full)
        if got is None:
            self.missed.append(rel)
            return None, None
        self.stats[rel] = got
        key, settled = got
        found = self._memory.get(rel)
        if found is not None and found[0] == key:
            record = decode_record(_loads(found[1]))
            if record is not None:
                self.kept_memory[rel] = found
                self.hits += 1
                return record, key
        self.misses += 1
        self.missed.append(rel)
        return None, key if settled else None

    def keep_memory(self, rel: str, key: Key | None, record: MemoryRecord) -> None:
        # a problem (a read error among them) may not be the bytes' doing: read it again
        if key is None or record.problem or (encoded := encode_record(record)) is None:
            self.complete = False
        else:
            self.kept_memory[rel] = (key, _json(encoded), _json(record.served))

    def registry(self, rel: str, full: str) -> tuple[list[Any] | None, Key | None]:
        """``[key, blocks]`` kept of registry file ``rel`` if unchanged and settled
        when read (keptheads reads it); and its key now (None: not a regular file)."""
        got = self.registry_keys[rel] = self._key(full)
        if got is None:
            return None, None
        key, settled = got
        if not settled:
            self._racy_registry.add(rel)
        found = self._registry.get(rel)
        if found is not None and found[0] == key and found[1] is None:
            blocks = _loads(found[2])
            if type(blocks) is list:
                self.hits += 1  # the caller keeps it again once it has read it back
                return [key, blocks], key
        self.misses += 1
        return None, key

    def registry_before(self, rel: str) -> Any:
        """The blocks kept of registry file ``rel`` whatever its key (registry/keptheads.py
        checks them against the file as it is now); None without a row."""
        found = self._registry.get(rel)
        return None if found is None else _loads(found[2])

    def keep_registry(self, rel: str, key: Key | None, blocks: list[Any], raw: bytes) -> None:
        """Keep a registry file's blocks, read from ``raw``; a racy one with the digest of
        ``raw`` (see the module docstring)."""
        if key is None:
            self.complete = False
            return
        digest = None
        if rel in self._racy_registry:
            self.complete = False
            digest = content_digest(raw)
        self.kept_registry[rel] = (key, digest, _json(blocks))

    def keep_registry_entry(self, rel: str) -> None:
        """Keep the row registry() read blocks from, as it was."""
        self.kept_registry[rel] = self._registry[rel]

    def unchanged_pairs(self, settings: str) -> list[Any] | None:
        """Every group's kept pairs, in order, if no file the scan read has changed, been
        added or gone since they were kept."""
        groups = self._groups(settings)
        if groups is None or self._pairs.get("complete") is not True or not self.files_unchanged():
            return None
        kept = [self.group_entry(settings, group) for group in groups]
        if None in kept:
            return None
        self.kept_pairs = self._pairs
        return [pair for entry in kept for pair in entry[1]]  # type: ignore[index]

    def group_pairs(self, settings: str, group: str, digest: str) -> list[Any] | None:
        """The pairs kept for ``group`` when its entries' digest is ``digest``."""
        kept = self.group_entry(settings, group)
        return None if kept is None or kept[0] != digest else list(kept[1])

    def touched_projects(self) -> set[str] | None:
        """The projects where a memory file was read again, is gone since its row, or was
        not kept by the scan that kept the pairs: the others' duplicates groups are as
        kept (duplicates.cached_pairs). None: all of them."""
        unkept = self._pairs.get("unkept")
        if type(unkept) is not list:
            return None
        gone = self._memory.keys() - self.kept_memory.keys()
        # [1:2]: a path with no project in it (a forged row's) names none
        return {p for rel in (*self.missed, *gone) for p in rel.split("/", 2)[1:2]}.union(
            map(str, unkept)
        )

    def _unkept(self) -> list[str]:
        """The projects of the memory files this scan read and did not keep."""
        if self._unkept_projects is None:
            kept = self.kept_memory
            found = {rel.split("/", 2)[1] for rel in self.missed if rel not in kept}
            self._unkept_projects = sorted(found)
        return self._unkept_projects

    def _groups(self, settings: str) -> dict[str, Any] | None:
        """The pass's groups as kept, when kept with ``settings``."""
        found = self._pairs.get("groups")
        return found if self._pairs.get("settings") == settings and type(found) is dict else None

    def group_entry(self, settings: str, group: str) -> list[Any] | None:
        """What was kept for ``group`` ([digest, pairs]), whatever its entries' digest."""
        kept = (self._groups(settings) or {}).get(group)
        ok = type(kept) is list and len(kept) == 2 and type(kept[1]) is list
        return kept if ok else None

    def keep_group(self, settings: str, group: str, digest: str, pairs: list[Any]) -> None:
        if self.kept_pairs is self._pairs or self.kept_pairs.get("settings") != settings:
            self.kept_pairs = {"settings": settings, "groups": {}}
        self.kept_pairs["complete"] = self.complete  # pairs found with an unkept file
        self.kept_pairs["unkept"] = self._unkept()  # and where
        self.kept_pairs["groups"][group] = [digest, pairs]

    def rebuilding(self) -> bool:
        """Whether this scan builds every row anew: ``--fresh``, or no row was found."""
        return self.fresh or not (self._memory or self._registry)

    def files_unchanged(self) -> bool:
        """Every file this scan read came from its row, and no row's file is gone."""
        return (
            self.misses == 0
            and self.kept_memory == self._memory
            and self.kept_registry == self._registry
        )

    def changed(self) -> bool:
        """Whether what this scan keeps differs from what it found."""
        return (
            self.kept_memory != self._memory
            or self.kept_registry != self._registry
            or self.kept_pairs != self._pairs
            or self.patterns != self.patterns_found
        )

    def known_summaries(self) -> dict[str, str]:
        """The brief's patterns' first paragraphs as found, by their block's fingerprint."""
        return {row[6]: row[5] for row in self.patterns_found[0] if type(row[6]) is str}


NOTE_FILES = 2_000  # memory files; below this the build is quick enough to go unsaid
STEP = 500  # files between two updates of the count on a terminal


class RebuildNote:
    """The line a scan that builds every row (no rows found: a first scan, a deleted or
    outdated database, ``--fresh``) writes once on ``stream`` (stderr) before reading
    many memory files: ``vaultkeeper: building state/vaultkeeper.db from N files ...``.
    Decided by the number of files (``NOTE_FILES``), never by a clock, so a vault always
    gives the same stderr; on a terminal it also counts the files read, in place."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.total = 0
        self.shown = False
        self.head = ""
        try:
            self.tty = stream.isatty()
        except (AttributeError, ValueError):  # a closed or odd stream: the plain line
            self.tty = False

    def start(self, total: int) -> None:
        """Before reading ``total`` memory files: the note, if there are enough of them."""
        if self.shown or total < NOTE_FILES:
            return
        self.total, self.shown = total, True
        head = f"vaultkeeper: building {config.STATE_DIR}/{config.DB_FILE} from {total} files ..."
        self._write(head if self.tty else head + "\n")
        self.head = head

    def step(self, done: int) -> None:
        """``done`` files read so far: the count, on a terminal, every ``STEP`` files."""
        if self.shown and self.tty and done % STEP == 0 and 0 < done < self.total:
            self._write(f"\r{self.head} {done}/{self.total}")

    def finish(self) -> None:
        """The reading is over: a terminal's line shows the total and ends."""
        if self.shown and self.tty:
            self._write(f"\r{self.head} {self.total}/{self.total}\n")
            self.tty = False  # once

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # stderr gone (a closed pipe): the scan goes on
            pass


def load(vault: Any) -> ScanCache:
    """The rows as the last scan left them; none when the database is missing, foreign
    or unreadable. One through a symlink or a FIFO is refused (UnsafePathError)."""
    try:
        with db.connect(vault) as conn:
            memory = {p: (k, r, s) for p, k, r, s in conn.execute("SELECT * FROM scan_memory")}
            registry = {p: (k, d, b) for p, k, d, b in conn.execute("SELECT * FROM scan_registry")}
            meta = dict(conn.execute("SELECT name, value FROM scan_meta").fetchall())
            pairs = _pairs_of(conn, meta)
            top = conn.execute("SELECT * FROM brief_patterns ORDER BY rank").fetchall()
    except (sqlite3.Error, OSError) as exc:
        if isinstance(exc, VaultkeeperError):
            raise
        return ScanCache()
    total = _loads(meta.get(PATTERNS_TOTAL))
    return ScanCache(memory, registry, pairs, (top, total if type(total) is int else None))


def _pairs_of(conn: sqlite3.Connection, meta: dict[str, str]) -> dict[str, Any]:
    if not set(_PAIR_META) <= set(meta):
        return {}
    out: dict[str, Any] = {name: _loads(meta[name]) for name in _PAIR_META}
    rows = conn.execute("SELECT * FROM scan_pairs")
    out["groups"] = {group: [digest, _loads(pairs)] for group, digest, pairs in rows}
    return out


def save(vault: Any, cache: ScanCache) -> bool:
    """Write the rows that changed (and delete those whose file is gone), in one
    transaction. Whether it wrote; a database that cannot be written is a cache lost."""
    if not cache.changed():
        return False
    try:
        with db.connect(vault) as conn:
            if cache.rebuilding():
                db.bulk(conn)
            with db.writing(conn):
                if cache.fresh:  # none was read: whatever the rows held goes
                    for table in _TABLES:
                        conn.execute(f"DELETE FROM {table}")  # noqa: S608 - our names
                _put(conn, "scan_memory", cache._memory, cache.kept_memory)
                _put(conn, "scan_registry", cache._registry, cache.kept_registry)
                if cache.kept_pairs is not cache._pairs and cache.kept_pairs != cache._pairs:
                    _put_pairs(conn, cache._pairs, cache.kept_pairs)
                if cache.patterns != cache.patterns_found:
                    _put_patterns(conn, *cache.patterns)
    except (sqlite3.Error, OSError, VaultkeeperError):
        return False
    return True


def _put(conn: sqlite3.Connection, table: str, found: dict[str, Any], kept: dict[str, Any]) -> None:
    gone = [(p,) for p in found.keys() - kept.keys()]
    conn.executemany(f"DELETE FROM {table} WHERE path = ?", gone)  # noqa: S608 - our names
    new = [(p, *row) for p, row in kept.items() if found.get(p) is not row and found.get(p) != row]
    if new:
        marks = ", ".join("?" * len(new[0]))
        conn.executemany(f"INSERT OR REPLACE INTO {table} VALUES ({marks})", new)  # noqa: S608


def _put_pairs(conn: sqlite3.Connection, found: dict[str, Any], kept: dict[str, Any]) -> None:
    """The duplicates pass's rows: a group's only when its pairs changed."""
    conn.executemany(
        "INSERT OR REPLACE INTO scan_meta VALUES (?, ?)",
        [(name, _json(kept.get(name))) for name in _PAIR_META],
    )
    same_settings = found.get("settings") == kept.get("settings")
    old_groups: dict[str, Any] = (found.get("groups") or {}) if same_settings else {}
    groups: dict[str, Any] = kept.get("groups") or {}
    if not same_settings:
        conn.execute("DELETE FROM scan_pairs")
    gone = [(g,) for g in old_groups.keys() - groups.keys()]
    conn.executemany("DELETE FROM scan_pairs WHERE grp = ?", gone)
    new = [
        (group, digest, _json(pairs))
        for group, (digest, pairs) in groups.items()
        if old_groups.get(group) != [digest, pairs]
    ]
    conn.executemany("INSERT OR REPLACE INTO scan_pairs VALUES (?, ?, ?)", new)


def _put_patterns(conn: sqlite3.Connection, rows: list[tuple[Any, ...]], total: int | None) -> None:
    """The brief's most-used patterns, replaced whole (a few hundred rows at most)."""
    conn.execute("DELETE FROM brief_patterns")
    conn.executemany("INSERT INTO brief_patterns VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    conn.execute("INSERT OR REPLACE INTO scan_meta VALUES (?, ?)", (PATTERNS_TOTAL, _json(total)))


# -- a memory file's record as its row keeps it ------------------------------------------
# In JSON: [facts, line, hash, details] (details None when hash is), or [None] (not an
# entry). A date is its ISO text; a value JSON cannot carry as YAML gave it (a time, a
# mapping, a huge number) leaves the file unkept, as does a problem reading it.

_BIG = 10**15  # ints JSON and int() round-trip without the 4,300-digit limit


def encode_record(record: MemoryRecord) -> list[Any] | None:
    """The row's JSON of a readable file's record (an unreadable one is never kept)."""
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
    """The record, or None for anything this version would not have written (only what
    a reader could trip on is checked: the others go through parse_date or str())."""
    if raw == [None]:
        return MemoryRecord(None, 1, None, None, None)
    if not (type(raw) is list and len(raw) == 4 and type(raw[0]) is list and len(raw[0]) == 6):
        return None
    facts, line, digest, details = raw
    name, description, status, _, _, since = facts
    ok = type(line) is int and type(name) is str and type(description) is str
    ok = ok and (status is None or type(status) is str) and (since is None or type(since) is str)
    if digest is None:
        ok = ok and details is None
    else:
        ok = ok and type(digest) is str and type(details) is list and len(details) == 3
    return MemoryRecord(facts, line, digest, details, None) if ok else None
