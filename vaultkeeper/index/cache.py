"""The index cache (state/index-cache.json): each note's index entries, kept by stat key.

Regenerating the index used to read and parse every note (its frontmatter's YAML, a
registry file's blocks): seconds at tens of thousands of entries, paid twice by every
``apply`` that adds or removes a note (``check_index`` before the write, ``reindex``
after it). What the index lists of one file depends on that file's bytes and its path
alone, so it is kept here under the scan cache's stat key ``(device, inode, size,
mtime_ns, ctime_ns)``: a file whose stat differs in any of them is read again, and a
file changed less than ``RACY_NS`` before the regeneration began is never kept (two
writes within one clock tick can leave all five the same). A file that could not be
read is never kept either: it may become readable without its own stat changing (a
folder's permission), and such files are few.

Within one process the kept entries also stay in memory (``_MEMO``), so the second
regeneration of one command reads neither the cache file nor an unchanged note.

The cache is only ever a shortcut: a missing, unreadable, corrupt or foreign (another
format, another version) file is ignored, and then every note is read, as without it.
It is written atomically, only when what it holds changed, and only into a ``state/``
folder that already exists as a real folder (not a symlink): a foreign vault gets no
new file from a read-only command, and nothing is written through a link.
"""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

from vaultkeeper import __version__, config
from vaultkeeper.index.entries import Entry, Key, all_served_as_written, served_as_written
from vaultkeeper.store.fsio import atomic_write
from vaultkeeper.store.text import read_regular

FILE = "index-cache.json"  # in state/
FORMAT = 1
RACY_NS = 2_000_000_000
Kept = dict[str, tuple[Key, list[Entry]]]  # vault-relative path -> (key, its entries)

# the last regeneration's kept entries by the vault's path, and whether the cache file
# holds exactly them: a command that regenerates twice (check, then write) reads the
# cache file once; every entry is still checked against its file's stat
_MEMO: dict[str, tuple[Kept, bool]] = {}


def stat_key(path: str) -> Key | None:
    """A regular file's stat key, else None."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def cache_path(vault: Path) -> Path | None:
    """Where the cache lives, or None when ``state/`` is not a real folder (missing: a
    foreign vault; a symlink: never followed)."""
    state = os.path.join(os.fspath(vault), config.STATE_DIR)
    try:
        st = os.lstat(state)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode):
        return None
    return Path(state) / FILE


def _decode(data: object) -> tuple[Kept, set[str]]:
    """The file's records, and those whose links are served as written; a record not
    exactly in the written shape is dropped."""
    kept: Kept = {}
    plain_rels: set[str] = set()
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return kept, plain_rels
    if data.get("version") != __version__ or not isinstance(data.get("files"), dict):
        return kept, plain_rels
    for rel, record in data["files"].items():
        try:
            dev, ino, size, mtime, ctime, what, plain = record
            if not all(type(n) is int for n in (dev, ino, size, mtime, ctime, plain)):
                continue
            base, folder = rel.removesuffix(".md"), rel.rpartition("/")[0]
            if type(what) is str:  # a note: one entry, its description
                entries = [Entry(base, folder, what, (rel, ""))]
            elif type(what) is list:  # a registry file's blocks, by name
                entries = []
                for item in what:
                    name, desc = item if type(item) is list else (None, None)
                    if type(name) is not str or type(desc) is not str:
                        raise TypeError(name)
                    entries.append(Entry(f"{base}#{name}", folder, desc, (rel, name.casefold())))
            else:
                continue
        except (TypeError, ValueError):  # not a list, the wrong length, not strings
            continue
        kept[rel] = ((dev, ino, size, mtime, ctime), entries)
        if plain == 1:
            plain_rels.add(rel)
    return kept, plain_rels


def _encode(rel: str, entries: list[Entry]) -> str | list[list[str]] | None:
    """What _decode gives back as ``entries``; None when it would not (then not kept)."""
    base, folder = rel.removesuffix(".md"), rel.rpartition("/")[0]
    if len(entries) == 1 and entries[0] == Entry(base, folder, entries[0].description, (rel, "")):
        return entries[0].description
    blocks: list[list[str]] = []
    for e in entries:
        name = e.link[len(base) + 1 :]
        if e != Entry(f"{base}#{name}", folder, e.description, (rel, name.casefold())):
            return None
        blocks.append([name, e.description])
    return blocks


def _load(path: Path | None) -> tuple[Kept, set[str]]:
    if path is None:
        return {}, set()
    try:
        # never through a link planted in state/: it would read a file out of the vault
        return _decode(json.loads(read_regular(path, follow=False)))
    except Exception:  # corrupt, too deep, unreadable: a cache is never worth a failure
        return {}, set()


class IndexCache:
    """One regeneration's view of the cache: what it found, and what it will keep."""

    def __init__(self, vault: Path) -> None:
        self.path = cache_path(vault)
        self._vault = os.path.abspath(vault)
        memo = _MEMO.get(self._vault)
        # (a memo's links were rendered, so checked, in this process already)
        self._plain: set[str] = set()
        if memo is not None:
            self.found, self._on_disk = memo
        else:
            (self.found, self._plain), self._on_disk = _load(self.path), True
        self.kept: Kept = {}
        self._new = 0  # records read now and kept
        self.limit = time.time_ns() - RACY_NS  # before any file's stat
        self.seen: dict[str, Key] = {}  # every regular file's key, by its path
        self.racy = False  # whether one of them changed within the window

    def key(self, path: str) -> Key | None:
        """The stat key of a regular file changed before the window, else None."""
        key = stat_key(path)
        if key is None:
            return None
        self.seen[path] = key  # as it was before the read (vaultkeeper.index.stamp)
        if key[3] >= self.limit or key[4] >= self.limit:
            self.racy = True
            return None
        return key

    def get(self, rel: str, key: Key | None) -> list[Entry] | None:
        """The kept entries of ``rel`` when its key is unchanged; None: read it."""
        found = self.found.get(rel)
        if found is not None:
            # kept even when stale: its key will not match, and a file just written
            # (by the command itself, within the window) then costs no rewrite of it
            self.kept[rel] = found
            if found[0] == key:
                if rel in self._plain:  # only a record that matches its file says so
                    served_as_written(e.link for e in found[1])
                return found[1]
        return None

    def keep(self, rel: str, key: Key | None, entries: list[Entry]) -> None:
        if key is not None:
            self.kept[rel] = (key, entries)
            self._new += 1

    def save(self) -> None:
        """Remember what was kept; write the file when it differs (and may be written)."""
        if self._on_disk and not self._new:
            # nothing read could be kept: the file stays as it is, though it may still
            # hold notes since deleted (dropped at the next write; never matched before)
            _MEMO.clear()
            _MEMO[self._vault] = (self.found, True)
            return
        same = False
        if self.path is not None:
            files = {}
            for rel, (key, entries) in sorted(self.kept.items()):
                what = _encode(rel, entries)
                if what is not None:  # and whether its links are served as written
                    files[rel] = [*key, what, int(all_served_as_written(entries))]
            data = {"format": FORMAT, "version": __version__, "files": files}
            try:
                text = json.dumps(data, separators=(",", ":"))  # ASCII: a lone surrogate too
                atomic_write(self.path, text, fsync_dir=False)
                same = True
            except OSError:  # a read-only state/: the index is still right, only slower
                pass
        _MEMO.clear()  # one vault at a time: a long-lived process holds no more
        _MEMO[self._vault] = (self.kept, same)
