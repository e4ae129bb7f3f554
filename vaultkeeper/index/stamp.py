"""The index stamp (state/index-stamp.json): the vault as it was when its index was last
known to be exactly what a regeneration writes.

An ``apply`` that adds, edits or removes an entry used to regenerate the whole index
twice (a check before its first write, the write after it): every entry's record read
from the index cache and every line rendered, seconds at 50,000 entries for a decision
that changes one or two of them. A regeneration that finds (or leaves) every index file
as it would write it records here what the index depends on: each walked file's
vault-relative path, with the stat key ``(device, inode, size, mtime_ns, ctime_ns)`` of
each file it reads (the entries' notes and the index files), the symlinks out of the
vault it left out, the templates folder and vaultkeeper's version. A walk that finds all
of that the same knows the index is up to date without reading a note; the apply then
carries its own writes into the index files entry by entry (vaultkeeper.index.delta)
and records the stamp again.

A file changed less than ``RACY_NS`` before its key was taken may change again within
one tick of the file system's clock and keep its key (the index cache's rule): the
stamp then keeps the sha256 of its bytes too, and a check reads it again. Only the index
files and the notes vaultkeeper itself just wrote are kept so (at most ``MAX_RACY``);
any other file that recent, an unreadable note or a stray index file: no stamp, and the
next apply regenerates as before. So does a missing, foreign or corrupt stamp.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from vaultkeeper import __version__
from vaultkeeper.index.cache import cache_path
from vaultkeeper.index.cache import stat_key as stat_key
from vaultkeeper.index.entries import Key
from vaultkeeper.index.files import is_index_file
from vaultkeeper.store.fsio import atomic_write
from vaultkeeper.store.obsidian import in_folder, templates_folder
from vaultkeeper.store.text import read_regular
from vaultkeeper.store.vault import walk_files

FILE = "index-stamp.json"  # in state/, beside the index cache
FORMAT = 1
RACY_NS = 2_000_000_000
MAX_RACY = 64
State = dict[str, "Key | None"]  # vault-relative path -> stat key (files the index reads)
LAST: dict[str, Stamp] = {}  # the stamp each vault's last regeneration recorded here


@dataclass
class Stamp:
    """The vault as its index is known to follow it, and the index's own shape."""

    state: State
    outside: list[str]  # vault-relative symlinks out of the vault (never read)
    templates: str | None
    split: bool
    files: list[str]  # the index files the vault has (the root first)
    unsplit: tuple[int, int]  # lines and bytes of the root index were it not split
    racy: dict[str, str] = field(default_factory=dict)  # path -> sha256 of its bytes


def is_md(rel_path: str) -> bool:
    """``Path(rel_path).suffix == ".md"``: a name ``.md`` alone has no suffix."""
    return rel_path.endswith(".md") and len(rel_path.rpartition("/")[2]) > 3


def read_by_index(rel_path: str, templates: str | None) -> bool:
    """Whether a regeneration reads the file: an index file, or a possible entry."""
    return is_index_file(rel_path) or (is_md(rel_path) and not in_folder(rel_path, templates))


def is_racy(key: Key | None, now: int) -> bool:
    return key is not None and max(key[3], key[4]) >= now - RACY_NS


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def survey(vault: Path) -> tuple[State, list[str], str | None] | None:
    """What the stamp compares: every walked file (keyed where the index reads it), the
    symlinks out, the templates folder. None when a path is not below the vault's text."""
    top = os.fspath(vault)
    prefix = top + os.sep
    templates = templates_folder(vault)
    outside: list[str] = []
    state: State = {}
    cut = len(prefix)
    for full in walk_files(top, outside=outside):
        if not full.startswith(prefix):
            return None
        relative = full[cut:].replace(os.sep, "/") if os.sep != "/" else full[cut:]
        keyed = is_md(relative) if templates is None else read_by_index(relative, templates)
        state[relative] = stat_key(full) if keyed else None  # (index files are .md too)
    if not all(p.startswith(prefix) for p in outside):
        return None
    return state, sorted(p[len(prefix) :].replace(os.sep, "/") for p in outside), templates


def _digest(state: State, outside: list[str], templates: str | None) -> str:
    # marshal: the fastest exact serialisation; version 0 writes no references nor
    # interning marks, so equal values give equal bytes however they were made (another
    # Python's bytes may still differ: then the stamp is only not recognised)
    data = (FORMAT, __version__, templates, outside, sorted(state.items()))
    return sha(marshal.dumps(data, 0))


def record(vault: Path, stamp: Stamp | None) -> None:
    """Write ``stamp`` (None, or one that can't vouch for a racy file: remove the old)."""
    path = cache_path(vault)
    if path is None:
        return
    path = path.with_name(FILE)
    now = time.time_ns()
    if stamp is not None:
        racy = {r for r, k in stamp.state.items() if is_racy(k, now)}
        if len(racy) > MAX_RACY or not racy <= set(stamp.racy):
            stamp = None
        else:
            stamp.racy = {r: h for r, h in stamp.racy.items() if r in racy}
    try:
        if stamp is None:
            if os.path.lexists(path):
                os.unlink(path)
            return
        data = {
            "format": FORMAT,
            "digest": _digest(stamp.state, stamp.outside, stamp.templates),
            "split": stamp.split,
            "files": stamp.files,
            "unsplit": list(stamp.unsplit),
            "racy": stamp.racy,
        }
        atomic_write(path, json.dumps(data, sort_keys=True), fsync_dir=False)
        LAST.clear()  # one vault at a time: a long-lived process holds no more
        LAST[os.path.abspath(vault)] = stamp
    except OSError:  # a read-only state/: the next apply regenerates, as before
        pass


def check(vault: Path) -> Stamp | None:
    """The stamp, when the vault is still exactly as it says; else None."""
    path = cache_path(vault)
    if path is None:
        return None
    try:
        data = json.loads(read_regular(path.with_name(FILE), follow=False))
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            return None
        found = survey(vault)
        if found is None or _digest(*found) != data["digest"]:
            return None
        state, outside, templates = found
        racy = {str(r): str(h) for r, h in data["racy"].items()}
        for relative, digest in racy.items():
            if sha(read_regular(os.path.join(vault, relative))) != digest:
                return None
        files = [str(f) for f in data["files"]]
        lines, size = (int(n) for n in data["unsplit"])
        return Stamp(state, outside, templates, bool(data["split"]), files, (lines, size), racy)
    except Exception:  # missing, unreadable, corrupt: a stamp is never worth a failure
        return None
