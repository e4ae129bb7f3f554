"""The scan's rows in the derived store: what a scan read of each file, kept so that the
next scan does not read an unchanged file again.

A full scan parses every memory file's frontmatter, every registry block and every
entry's words, though between two session ends only a few files change. The scanner's
results about one file depend on its bytes alone (never on the date), so they are kept
as rows of ``state/vaultkeeper.db`` (vaultkeeper.store.db), one per file, keyed by its
vault-relative path and carrying its stat key ``(device, inode, size, mtime_ns,
ctime_ns)``: a row is used only when the file's stat key is still that key, else the
file is read again and its row replaced. ctime moves on every write and cannot be set
back, so an edit that restores size and mtime is still seen. Files are the truth: a row
is never trusted beyond what a fresh read of an unchanged file would give, and a missing
or foreign database only means every file is read again.

The racy case (git's "racily clean"): two writes within one tick of the file system's
clock can leave all five numbers the same, so a row read from a file changed shortly
before the read could describe bytes the file no longer holds. Such a file's row is not
stored: a file whose mtime or ctime is within ``RACY_NS`` of the scan's start is read on
every scan until it settles. ``RACY_NS`` is 2 s, the coarsest timestamp in use (FAT);
a file older than that cannot change again under the same key, because a later write
gets a later timestamp. This is a rule about what is stored, not about how long a row is
trusted: a stored row holds until its file's key changes. (A content hash checked on
each use was the alternative for memory files; it buys nothing the next scan does not
get by reading those few files.) A racy registry file's row is stored with the digest of
the bytes the scan read: the scan uses its blocks only to read the file's next version
where it changed (registry/delta.py checks them against the text), and the brief's
patterns hold only while the file still has those bytes (report/brief.py): a
session's last ``use`` is often within 2 s of the session-end scan.

The duplicates pass keeps each group's pairs (the registry's blocks; one project's
lessons) as a row under a digest of the entries it compared: an unchanged vault skips
the pass, and a changed name or description runs it again for that group only. A big
group's row also keeps its words (upkeep/duplicates.py group_pairs): then only its
changed entries are compared again.

Rows are written in one short transaction at the end of a scan, only those that changed,
and never by ``scan --as-of``. A failure to write them never fails the scan: they are a
cache. ``key_of`` and ``RACY_NS`` are shared with the other readers of stat keys (the
search's and the recall's).
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from typing import TYPE_CHECKING, Any, NamedTuple

from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.store.db import content_digest, key_text

if TYPE_CHECKING:
    from vaultkeeper.scan.rebuild import RebuildNote


class MemoryRecord(NamedTuple):
    """What a scan keeps of one memory file (vaultkeeper.scan.memory reads it)."""

    # name, description, status, holdout_until, last_validated, provenance_date: the
    # fields of decay.MemoryFacts after its path; None: the file is not an entry
    facts: tuple[Any, ...] | list[Any] | None
    line: int  # the holdout_until line (1 when it has none)
    hash: str | None  # file_hash of its text; None: not a held-out candidate on any day
    details: tuple[Any, Any, Any] | list[Any] | None  # label, status, condition
    problem: tuple[int | None, str] | None  # (line, reason): unreadable
    # what the brief shows of it (report/brief.py fields), None: never served;
    # its own column of the row (a hit does not decode it: the scan has no use for it)
    served: list[Any] | None = None


RACY_NS = 2_000_000_000
Key = list[int]  # device, inode, size, mtime_ns, ctime_ns

_PAIR_META = ("settings", "complete", "unkept")
PATTERNS_TOTAL = "patterns_total"  # scan_meta: how many readable patterns the registry has
_TABLES = ("scan_memory", "scan_registry", "scan_pairs", "scan_meta", "brief_patterns")


def stat_key(path: str, limit: int) -> tuple[Key | None, bool]:
    """(the key of a regular file, or None; whether it changed before ``limit``, epoch ns)."""
    try:
        st = os.stat(path)
    except OSError:
        return None, False
    if (st.st_mode & 0o170000) != 0o100000:  # a FIFO or device: read_regular refuses it
        return None, False
    return key_of(st, limit)


def key_of(st: os.stat_result, limit: int) -> tuple[Key, bool]:
    """A stat result's key, and whether the file changed before ``limit`` (epoch ns): a
    file changed since may change again within one clock tick and keep the same key.
    The MCP server's search keeps what it read of each file under the same rule."""
    key = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
    return key, st.st_mtime_ns < limit and st.st_ctime_ns < limit


# json.dumps with these options builds an encoder on every call; a row is encoded
# thousands of times in a first scan, so the encoder is built once (the same text)
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
    """One scan's view of its rows: what it found, and what this scan will keep.

    ``memory`` and ``registry`` map a path to its row as stored (a tuple of its columns,
    JSON text undecoded until the row is used); ``pairs`` is the duplicates pass's rows as
    one dict (``settings``, ``complete``, ``unkept``, ``groups``: group -> [digest, pairs],
    ``words``: group -> words); ``patterns`` the brief's most-used patterns and their
    total (report/brief.py), the scan's to replace.
    """

    def __init__(
        self,
        memory: dict[str, tuple[str, str, str]] | None = None,
        registry: dict[str, tuple[str, str | None, str, str]] | None = None,
        pairs: dict[str, Any] | None = None,
        patterns: tuple[list[tuple[Any, ...]], int | None] = ([], None),
        *,
        fresh: bool = False,
    ) -> None:
        """From the rows found; ``fresh`` (``scan --fresh``): none used, all replaced."""
        self.fresh = fresh
        self._memory: dict[str, tuple[str, str, str]] = memory or {}
        self._registry: dict[str, tuple[str, str | None, str, str]] = registry or {}
        self._pairs: dict[str, Any] = pairs or {}
        self.patterns_found = patterns
        self.patterns = patterns  # the scan puts the brief's patterns here
        self.kept_memory: dict[str, tuple[str, str, str]] = {}
        self.kept_registry: dict[str, tuple[str, str | None, str, str]] = {}
        self._racy_registry: set[str] = set()
        self.kept_pairs: dict[str, Any] = {}
        self.hits = 0
        self.misses = 0
        self.missed: list[str] = []  # memory files read again (or unreadable)
        # every memory file's stat key as this scan found it: the brief's saved lessons and
        # the recall table are brought up to date from these, not from a stat of their own
        self.stats: dict[str, Key] = {}
        self.registry_keys: dict[str, Key | None] = {}  # the same of registry files: the brief's
        self._unkept_projects: list[str] | None = None
        self.complete = True  # every file read is kept (else the pairs cover one that is not)
        self.note: RebuildNote | None = None  # scan/rebuild.py: set by a scan that says so
        self.began = time.time_ns()  # before any file's stat
        self.limit = self.began - RACY_NS  # a file changed since is not kept

    # -- memory files ------------------------------------------------------------------

    def memory(self, rel: str, full: str) -> tuple[MemoryRecord | None, Key | None]:
        """The kept record of ``rel`` if the file is unchanged, and the key to keep a new one
        under (None: not to be kept). stat_key inlined: this runs once per memory file."""
        try:
            st = os.stat(full)
        except OSError:
            st = None
        if st is None or (st.st_mode & 0o170000) != 0o100000:  # read_regular refuses it
            self.missed.append(rel)
            return None, None
        key = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
        self.stats[rel] = key
        found = self._memory.get(rel)
        if found is not None and found[0] == key_text(key):
            record = decode_record(_loads(found[1]))
            if record is not None:
                self.kept_memory[rel] = found
                self.hits += 1
                return record, key
        self.misses += 1
        self.missed.append(rel)
        limit = self.limit
        return None, key if st.st_mtime_ns < limit and st.st_ctime_ns < limit else None

    def keep_memory(self, rel: str, key: Key | None, record: MemoryRecord) -> None:
        # a problem (a read error among them) may not be the bytes' doing: read it again
        encoded = None if key is None or record.problem else encode_record(record)
        if encoded is None:
            self.complete = False
        else:
            row = (key_text(key), _json(encoded), _json(record.served))  # type: ignore[arg-type]
            self.kept_memory[rel] = row

    # -- registry files ----------------------------------------------------------------

    def registry(self, rel: str, full: str) -> tuple[list[Any] | None, Key | None]:
        """What was kept of registry file ``rel``, ``[key, blocks, shape]`` (keptheads
        reads it), if the file is unchanged and was settled when read; and its key now."""
        key, old_enough = stat_key(full, self.limit)
        self.registry_keys[rel] = key
        if key is None:
            return None, None
        if not old_enough:
            self._racy_registry.add(rel)
        found = self._registry.get(rel)
        if found is not None and found[0] == key_text(key) and found[1] is None:
            blocks = _loads(found[2])
            if type(blocks) is list:
                self.hits += 1  # the caller keeps it again once it has read it back
                return [key, blocks, _loads(found[3])], key
        self.misses += 1
        return None, key

    def registry_before(self, rel: str) -> tuple[Any, Any] | None:
        """What was kept of registry file ``rel`` whatever its key, (blocks, shape):
        registry/delta.py checks it against the file as it is now."""
        found = self._registry.get(rel)
        return None if found is None else (_loads(found[2]), _loads(found[3]))

    def keep_registry(
        self, rel: str, key: Key | None, blocks: list[Any], shape: Any, raw: bytes
    ) -> None:
        """Keep a registry file's blocks, read from ``raw``. One changed just before the
        scan (it may change again unseen under the same key) is kept with the digest of
        ``raw``: the scan then uses its blocks only to read the file's next version where
        it changed (registry/delta.py checks them against it), and the brief only while
        the file's bytes still have that digest."""
        if key is None:
            self.complete = False
            return
        digest = None
        if rel in self._racy_registry:
            self.complete = False
            digest = content_digest(raw)
        self.kept_registry[rel] = (key_text(key), digest, _json(blocks), _json(shape))

    def keep_registry_entry(self, rel: str, entry: list[Any]) -> None:
        """Keep the row registry() gave ``entry`` from, as it was."""
        self.kept_registry[rel] = self._registry[rel]

    # -- the duplicates pass -----------------------------------------------------------

    def unchanged_pairs(self, settings: str) -> list[Any] | None:
        """Every group's kept pairs, in order, if no file the scan read has changed, been
        added or gone since they were kept (the entries compared are then the same)."""
        groups = self._pairs.get("groups")
        if self._pairs.get("settings") != settings or type(groups) is not dict:
            return None
        if self._pairs.get("complete") is not True or not self.files_unchanged():
            return None
        out: list[Any] = []
        for kept in groups.values():
            if not (type(kept) is list and len(kept) == 2 and type(kept[1]) is list):
                return None
            out += kept[1]
        self.kept_pairs = self._pairs
        return out

    def group_pairs(self, settings: str, group: str, digest: str) -> list[Any] | None:
        """The pairs kept for ``group`` when its entries' digest is ``digest``."""
        kept = self.group_entry(settings, group)
        return None if kept is None or kept[0] != digest else list(kept[1])

    def touched_projects(self) -> set[str] | None:
        """The projects where a memory file was read again, is gone since its row, or was
        not kept by the scan that kept the pairs (it may be gone unseen since): the
        others' duplicates groups are as they were kept (duplicates.cached_pairs). None:
        all of them."""
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

    def group_entry(self, settings: str, group: str) -> list[Any] | None:
        """What was kept for ``group`` ([digest, pairs]), whatever its entries' digest."""
        groups = self._pairs.get("groups")
        if self._pairs.get("settings") != settings or type(groups) is not dict:
            return None
        kept = groups.get(group)
        if type(kept) is list and len(kept) == 2 and type(kept[1]) is list:
            return kept
        return None

    def group_words(self, settings: str, group: str) -> Any:
        """What the pass kept of a big group's words (duplicates.group_pairs checks it), or None."""
        words = self._pairs.get("words")
        if self._pairs.get("settings") != settings or type(words) is not dict:
            return None
        return words.get(group)

    def keep_group(
        self, settings: str, group: str, digest: str, pairs: list[Any], words: Any = None
    ) -> None:
        if self.kept_pairs is self._pairs or self.kept_pairs.get("settings") != settings:
            self.kept_pairs = {"settings": settings, "groups": {}, "words": {}}
        self.kept_pairs["complete"] = self.complete  # pairs found with an unkept file
        self.kept_pairs["unkept"] = self._unkept()  # and where
        self.kept_pairs["groups"][group] = [digest, pairs]
        if words is not None:  # a big group's words, for redoing only what changes
            self.kept_pairs["words"][group] = words

    def rebuilding(self) -> bool:
        """Whether this scan builds every row anew: ``--fresh``, or no row was found (no
        database, or one just made from another version's): the bulk build's settings."""
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
        """The brief's patterns' first paragraphs as found, by their block's fingerprint:
        a block the scan took from its row (no text read) keeps its paragraph."""
        return {row[6]: row[5] for row in self.patterns_found[0] if type(row[6]) is str}


# -- the rows ------------------------------------------------------------------------------


def load(vault: Any) -> ScanCache:
    """The rows as the last scan left them; none when the database is missing, foreign
    or cannot be read (every file is then read again). A database through a symlink or a
    FIFO is refused (store.db raises UnsafePathError): nothing is read or written."""
    from vaultkeeper.store import db

    try:
        with db.connect(vault) as conn:
            memory = {p: (k, r, s) for p, k, r, s in conn.execute("SELECT * FROM scan_memory")}
            registry = {
                p: (k, d, b, s) for p, k, d, b, s in conn.execute("SELECT * FROM scan_registry")
            }
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
    groups: dict[str, Any] = {}
    words: dict[str, Any] = {}
    for group, digest, pairs, kept_words in conn.execute("SELECT * FROM scan_pairs"):
        groups[group] = [digest, _loads(pairs)]
        if kept_words is not None:
            words[group] = _loads(kept_words)
    out["groups"], out["words"] = groups, words
    return out


def save(vault: Any, cache: ScanCache) -> bool:
    """Write the rows that changed (and delete those whose file is gone), in one short
    transaction. Whether it wrote; a database that cannot be written is only a cache
    lost (the next scan reads every file), never a failed scan."""
    if not cache.changed():
        return False
    from vaultkeeper.store import db

    try:
        with db.connect(vault) as conn:
            if cache.rebuilding():
                db.bulk(conn)
            with db.writing(conn):
                _save(conn, cache)
    except (sqlite3.Error, OSError, VaultkeeperError):
        return False
    return True


def _save(conn: sqlite3.Connection, cache: ScanCache) -> None:
    """The rows that changed, inside the caller's transaction."""
    if cache.fresh:  # none was read: whatever the rows held goes
        for table in _TABLES:
            conn.execute(f"DELETE FROM {table}")  # noqa: S608 - our names
    _put(conn, "scan_memory", cache._memory, cache.kept_memory)
    _put(conn, "scan_registry", cache._registry, cache.kept_registry)
    if cache.kept_pairs is not cache._pairs and cache.kept_pairs != cache._pairs:
        _put_pairs(conn, cache._pairs, cache.kept_pairs)
    if cache.patterns != cache.patterns_found:
        _put_patterns(conn, *cache.patterns)


def _put(conn: sqlite3.Connection, table: str, found: dict[str, Any], kept: dict[str, Any]) -> None:
    gone = [(p,) for p in found.keys() - kept.keys()]
    conn.executemany(f"DELETE FROM {table} WHERE path = ?", gone)  # noqa: S608 - our names
    new = [(p, *row) for p, row in kept.items() if found.get(p) is not row and found.get(p) != row]
    if new:
        marks = ", ".join("?" * len(new[0]))
        conn.executemany(f"INSERT OR REPLACE INTO {table} VALUES ({marks})", new)  # noqa: S608


def _put_pairs(conn: sqlite3.Connection, found: dict[str, Any], kept: dict[str, Any]) -> None:
    """The duplicates pass's rows: each group written only when its pairs or words
    changed (a big group's words are the biggest row), all of them when the settings did."""
    conn.executemany(
        "INSERT OR REPLACE INTO scan_meta VALUES (?, ?)",
        [(name, _json(kept.get(name))) for name in _PAIR_META],
    )
    same_settings = found.get("settings") == kept.get("settings")
    old_groups: dict[str, Any] = (found.get("groups") or {}) if same_settings else {}
    old_words: dict[str, Any] = (found.get("words") or {}) if same_settings else {}
    groups: dict[str, Any] = kept.get("groups") or {}
    words: dict[str, Any] = kept.get("words") or {}
    if not same_settings:
        conn.execute("DELETE FROM scan_pairs")
    gone = [(g,) for g in old_groups.keys() - groups.keys()]
    conn.executemany("DELETE FROM scan_pairs WHERE grp = ?", gone)
    new = []
    for group, (digest, pairs) in groups.items():
        was, had = old_groups.get(group), old_words.get(group)
        now = words.get(group)
        if was == [digest, pairs] and (had is now or had == now):
            continue
        new.append((group, digest, _json(pairs), None if now is None else _json(now)))
    conn.executemany("INSERT OR REPLACE INTO scan_pairs VALUES (?, ?, ?, ?)", new)


def _put_patterns(conn: sqlite3.Connection, rows: list[tuple[Any, ...]], total: int | None) -> None:
    """The brief's most-used patterns, replaced whole (a few hundred rows at most)."""
    conn.execute("DELETE FROM brief_patterns")
    conn.executemany("INSERT INTO brief_patterns VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    conn.execute("INSERT OR REPLACE INTO scan_meta VALUES (?, ?)", (PATTERNS_TOTAL, _json(total)))


# -- a memory file's record as its row keeps it ------------------------------------------

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
