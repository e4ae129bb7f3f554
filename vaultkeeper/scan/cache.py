"""The scan cache (state/scan-cache.json): what a scan read of each file it did not need
to read again.

A full scan parses every memory file's frontmatter, every registry block and every
entry's words, though between two session ends only a few files change. The scanner's
results about one file depend on its bytes alone (never on the date), so they are kept
here keyed by the file's ``(device, inode, size, mtime_ns, ctime_ns)``: a file whose
stat differs in any of them is read again. ctime moves on every write and cannot be
set back, so an edit that restores size and mtime is still seen. A file changed less
than ``RACY_NS`` before the scan read it is not kept (two writes within one tick of
the file system's clock can leave all five the same: git's "racily clean" case).

The duplicates pass keeps each group's pairs (the registry's blocks; one project's
lessons) under a digest of the entries it compared: an unchanged vault skips the pass,
and a changed name or description runs it again for that group only. A big group also
keeps its words (the pairs section's ``words``, dupdelta.py): then only its changed
entries are compared again.

The cache is only ever a shortcut: a missing, unreadable, foreign (another version,
another machine's inodes) or corrupt file is ignored and rewritten, and nothing in it
is trusted beyond what a fresh read of an unchanged file would give. It is written
(atomically) only when something in it changed, and never by ``scan --as-of``.
"""

from __future__ import annotations

import os
import time

from vaultkeeper import __version__
from vaultkeeper.scan.cachelayers import PAIR_PARTS, changes, overlay, pairs_overlay
from vaultkeeper.scan.records import MemoryRecord, decode_record, encode_record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

FORMAT = 4
RACY_NS = 2_000_000_000
_PIECE = 500  # entries per piece of the written file
Key = list[int]  # device, inode, size, mtime_ns, ctime_ns (a list: as JSON gives it back)


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


class ScanCache:
    """One scan's view of the cache: what it found, and what this scan will keep."""

    def __init__(
        self, data: dict[str, Any] | None = None, delta: dict[str, Any] | None = None
    ) -> None:
        """From the base file's data and, written since it, the delta file's."""
        data = data or {}
        self.base: dict[str, dict[str, Any]] = {
            section: data.get(section) or {} for section in ("memory", "registry")
        }
        base_id = data.get("id")
        self.base_id: str | None = base_id if type(base_id) is str else None
        self.base_bytes = 0  # the base file's size: whether a delta is worth writing
        self._memory, self._registry = self.base["memory"], self.base["registry"]
        pairs = data.get("pairs")
        self.base_pairs: dict[str, Any] = pairs if isinstance(pairs, dict) else {}
        if delta is not None:  # what changed since the base: entries, None for one gone
            self._memory = overlay(self._memory, delta["memory"])
            self._registry = overlay(self._registry, delta["registry"])
            pairs = pairs_overlay(self.base_pairs, delta.get("pairs"))
        self._pairs: dict[str, Any] = pairs if isinstance(pairs, dict) else {}
        self.kept: dict[str, dict[str, Any]] = {"memory": {}, "registry": {}}
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
        self.began = time.time_ns()  # before any file's stat
        self.limit = self.began - RACY_NS  # a file changed since is read every time

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
        if type(found) is list and len(found) == 2 and found[0] == key:
            record = decode_record(found[1])
            if record is not None:
                self.kept["memory"][rel] = found
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
            self.kept["memory"][rel] = [key, encoded]

    # -- registry files ----------------------------------------------------------------

    def registry(self, rel: str, full: str) -> tuple[list[Any] | None, Key | None]:
        """What was kept of registry file ``rel``, ``[key, blocks, shape]`` (keptheads
        reads it), if the file is unchanged; and the key to keep a new one under."""
        key, old_enough = stat_key(full, self.limit)
        self.registry_keys[rel] = key
        if key is None:
            return None, None
        found = self._registry.get(rel)
        if type(found) is list and len(found) == 3 and found[0] == key and type(found[1]) is list:
            self.hits += 1  # the caller keeps it again once it has read it back
            return found, key
        self.misses += 1
        return None, key if old_enough else None

    def registry_before(self, rel: str) -> tuple[Any, Any] | None:
        """What was kept of registry file ``rel`` whatever its key, (blocks, shape):
        registrydelta checks it against the file as it is now."""
        found = self._registry.get(rel)
        return (found[1], found[2]) if type(found) is list and len(found) == 3 else None

    def keep_registry(self, rel: str, key: Key | None, blocks: list[Any], shape: Any) -> None:
        """Keep a registry file's blocks; without a key (a file just written: it may change
        again unseen) they serve only to read the file's next version where it changed
        (registrydelta checks them against it), never for the file itself."""
        if key is None:
            self.complete = False
        self.kept["registry"][rel] = [key, blocks, shape]

    def keep_registry_entry(self, rel: str, entry: list[Any]) -> None:
        """Keep what registry() gave, as it was (the delta file then leaves it out)."""
        self.kept["registry"][rel] = entry

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
        groups = self._pairs.get("groups")
        if self._pairs.get("settings") != settings or type(groups) is not dict:
            return None
        kept = groups.get(group)
        if type(kept) is list and len(kept) == 2 and kept[0] == digest and type(kept[1]) is list:
            return list(kept[1])
        return None

    def touched_projects(self) -> set[str] | None:
        """The projects where a memory file was read again, is gone since the cache, or
        was not kept by the scan that kept the pairs (it may be gone unseen since): the
        others' duplicates groups are as they were kept (duppairs.cached_pairs). None:
        all of them."""
        unkept = self._pairs.get("unkept")
        if type(unkept) is not list:
            return None
        gone = self._memory.keys() - self.kept["memory"].keys()
        # [1:2]: a key with no project in it (a forged cache's) names none
        return {p for rel in (*self.missed, *gone) for p in rel.split("/", 2)[1:2]}.union(
            map(str, unkept)
        )

    def _unkept(self) -> list[str]:
        """The projects of the memory files this scan read and did not keep."""
        if self._unkept_projects is None:
            kept = self.kept["memory"]
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
        """What the pass kept of a big group's words (dupdelta.py checks it), or None."""
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

    def files_unchanged(self) -> bool:
        """Every file this scan read came from the cache, and none kept there is gone."""
        return (
            self.misses == 0
            and self.kept["memory"] == self._memory
            and self.kept["registry"] == self._registry
        )

    # -- the file ----------------------------------------------------------------------

    def changed(self) -> bool:
        """Whether what this scan keeps differs from what it found."""
        return (
            self.kept["memory"] != self._memory
            or self.kept["registry"] != self._registry
            or self.kept_pairs != self._pairs
        )

    def delta(self) -> dict[str, dict[str, Any]]:
        """What this scan keeps that the base file does not hold: changed entries and
        duplicates groups, and None for each one gone."""
        out = {section: changes(self.base[section], kept) for section, kept in self.kept.items()}
        pairs = {k: v for k, v in self.kept_pairs.items() if k not in PAIR_PARTS}
        for part in PAIR_PARTS:
            kept, base = self.kept_pairs.get(part), self.base_pairs.get(part)
            pairs[part] = changes(
                base if isinstance(base, dict) else {}, kept if isinstance(kept, dict) else {}
            )
        out["pairs"] = pairs
        return out

    def to_json(self, base_id: str) -> Iterator[str]:
        """The base file's JSON text in pieces of a few hundred entries (a 50,000-entry
        vault's cache is about 10 MB: held whole, as text and as bytes, it was the scan's
        peak)."""
        import json

        compact = (",", ":")
        yield f'{{"format":{FORMAT},"version":{json.dumps(__version__)},"id":"{base_id}",'
        for section in ("memory", "registry"):
            yield f'"{section}":{{'
            entries = list(self.kept[section].items())
            for start in range(0, len(entries), _PIECE):
                part = json.dumps(dict(entries[start : start + _PIECE]), separators=compact)
                yield ("," if start else "") + part[1:-1]
            yield "},"
        yield f'"pairs":{json.dumps(self.kept_pairs, separators=compact)}}}\n'
