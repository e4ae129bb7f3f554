"""``state/recall-lookup.bin``: the small prebuilt table the point-of-use recall reads.

The recall hooks (vaultkeeper.recall.moment) run on every prompt and file tool call, so
they never walk the vault. Per live lesson (a note with frontmatter under
``projects/<p>/memory/``, not archived, superseded or stale-anchored): its path, status,
project, casefolded name and description, its body's most frequent words, and the files
it is about: the file part of each ``anchors:`` place (``path``, ``path::name``
or ``path: text``, as strings or mappings under ``at``/``path``/``place``/``file``) and
its ``paths:`` globs; laid out by scan.lookuptable.

``build`` runs at the end of every scan. Unchanged (every file's stat key hashes as last
time): nothing is read or written. A few lessons changed since the table was built: only
they are read, as rows over it (scan.lookupover). Otherwise the table is built again,
reading only the files changed since they were last read (scan.lookupkeys keeps what
was read). It also drops recall session files older than ``RECALL_SESSION_MAX_DAYS``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from pathlib import Path

import vaultkeeper
from vaultkeeper import config
from vaultkeeper.scan.cache import RACY_NS, key_of
from vaultkeeper.scan.lookupkeys import (
    RECS_FILE,
    load,
    newer,
    read_bytes,
    read_text,
    save,
    stat_of,
    tidy,
)
from vaultkeeper.scan.lookupover import load as over_rows
from vaultkeeper.scan.lookupover import over_path, prune, put_held
from vaultkeeper.scan.lookuptable import line, table, words
from vaultkeeper.store.frontmatter import split_frontmatter
from vaultkeeper.store.fsio import atomic_write
from vaultkeeper.store.model import ParseError, decode, parse_note, read_regular
from vaultkeeper.store.quickmeta import read_front
from vaultkeeper.store.secrets import mask
from vaultkeeper.store.stopwords import STOPWORDS
from vaultkeeper.store.vault import own_dir
from vaultkeeper.store.walk import memory_files

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not on the scan's path (tests/test_entry.py)
    from typing import Any

_KEYS: tuple[str, ...] = ("name", "description", "status", config.SUPERSEDED_BY_KEY)
_KEYS += (config.PATHS_KEY, config.ANCHORS_KEY)
_WORD = re.compile(r"\w+")
OVER_MAX = 32  # a scan finding more lessons changed than this builds the table again
_STALE = frozenset({"gone", "changed", "moved", "stale"})  # an anchor check's verdicts
_PLACE_KEYS = ("at", "path", "place", "file")


def lookup_path(vault: Path) -> Path:
    return vault / config.STATE_DIR / config.RECALL_LOOKUP_FILE


def anchor_file(place: object) -> str | None:
    """The file (or folder) part of one anchor: the text before ``::`` or ``: ``."""
    if isinstance(place, dict):
        place = next((place[k] for k in _PLACE_KEYS if isinstance(place.get(k), str)), None)
    if not isinstance(place, str):
        return None
    head = place.split("::", 1)[0].split(": ", 1)[0].strip()
    while head.startswith("./"):
        head = head[2:]
    head = head.rstrip("/")
    if not head or head.startswith("/") or ".." in head.split("/") or "\x00" in head:
        return None
    return head


def _stale(place: object) -> bool:
    if not isinstance(place, dict):
        return False
    verdict = place.get("state", place.get("check"))
    return isinstance(verdict, str) and verdict.casefold() in _STALE


def _as_list(value: object) -> list[object]:
    if isinstance(value, (str, dict)):
        return [value]
    return list(value) if isinstance(value, list) else []


def _meta(path: Path, rel_path: str, text: str) -> tuple[dict[str, Any], str] | None:
    front = read_front(text, _KEYS)
    if front is not None and not any(
        k in front[2] for k in (config.PATHS_KEY + ":", config.ANCHORS_KEY + ":")
    ):
        meta, _, yaml_text = front
        return meta, text.split("\n", yaml_text.count("\n") + 2)[-1]
    if split_frontmatter(text)[0] is None:
        return None
    note = parse_note(path, rel_path, text)
    return None if note.frontmatter is None else (dict(note.frontmatter.data), note.body)


def _words(body: str) -> str:
    counts: dict[str, int] = {}
    for w in _WORD.findall(body.casefold()):
        if len(w) >= config.MOMENT_MIN_TERM and w not in STOPWORDS and not w.isdigit():
            counts[w] = counts.get(w, 0) + 1
    best = sorted(counts, key=lambda w: -counts[w])[: config.MOMENT_BODY_WORDS]
    return " ".join(best)


def _text(description: str, body: str) -> str:
    """What the hook serves of a lesson: its description, then its body's first lines."""
    lines = [x.strip() for x in body.splitlines()]
    prose = [x for x in lines if x and not x.startswith(("#", "---"))]  # no headings
    joined = " ".join([description, *prose]) if description else " ".join(prose)
    return " ".join(mask(joined).split())[: config.MOMENT_LESSON_CHARS]


def record(vault: Path, rel_path: str) -> list[Any] | None:
    """One file's record: [name, description, status, project, words, text, places,
    globs], or None when it is not a lesson the recall may serve."""
    path = vault / rel_path
    try:
        got = _meta(path, rel_path, decode(read_regular(path)))
    except (ParseError, OSError):
        return None
    if got is None:
        return None
    meta, body = got
    status = meta.get("status")
    if status in config.SEARCH_DEAD_STATUSES or meta.get(config.SUPERSEDED_BY_KEY) not in (
        None,
        "",
        [],
    ):
        return None
    anchors = _as_list(meta.get(config.ANCHORS_KEY))
    if any(_stale(a) for a in anchors):
        return None  # the code under it moved: never served as fact
    places = sorted({f for f in map(anchor_file, anchors) if f})
    globs = [g.strip() for g in _as_list(meta.get(config.PATHS_KEY)) if isinstance(g, str)]
    stem = rel_path.rsplit("/", 1)[-1].removesuffix(".md")
    name = " ".join(str(meta.get("name") or stem).split())
    description = " ".join(str(meta.get("description") or "").split())
    parts = rel_path.split("/")
    project = parts[1] if len(parts) > 2 and parts[0] == config.PROJECTS_DIR else ""
    return [
        mask(name)[:200],
        mask(description)[:400],
        "" if status is None else " ".join(str(status).split()),
        project,
        _words(body),
        _text(description, body),
        places,
        [g for g in globs if g and not g.startswith("/")],
    ]


def _candidates(vault: Path) -> list[str]:
    """The lessons' files (research notes, patterns and indexes are not served here):
    only the memory folders are listed, never a symlink out of the vault."""
    top = str(vault)
    skip = len(top) + 1
    return [full[skip:].replace(os.sep, "/") for full in memory_files(top)]


def build(
    vault: Path | str,
    unchanged: bool = False,
    seen: tuple[dict[str, list[int]], int, int] | None = None,
) -> bool:
    """Bring the table up to date; True when it was written. ``unchanged``: the scan
    that calls this found every file as its cache had it, so when the table was built
    after that cache was saved, not even the walk is done again.

    ``seen`` (the scan's run): the scan's stat key of every lesson file, the time (epoch
    ns) before which a change is settled, and the time before its first stat
    (scan.cache.ScanCache's ``stats``, ``limit`` and ``began``), so nothing is walked
    or stat'ed here; and when at most ``OVER_MAX`` lessons changed since the
    table was built, only they are read, as rows over the table (scan.lookupover, as
    ``new`` and ``apply`` write them): the table is built again once more have changed."""
    vault = Path(vault)
    own_dir(vault, config.STATE_DIR)
    state = vault / config.STATE_DIR
    sig_file = state / config.RECALL_LOOKUP_SIG_FILE
    over = over_path(vault)  # rows new or apply wrote since: the table is looked at again
    after = (state / config.SCAN_CACHE_FILE, state / config.SCAN_CACHE_DELTA_FILE, over)
    if unchanged and newer(sig_file, after, lookup_path(vault)):
        return False
    stats, began = _stats(vault, seen)
    sig = _sig(stats, stat_of(over))
    tidy(vault)
    if all(s[2] for s in stats) and lookup_path(vault).is_file() and read_text(sig_file) == sig:
        os.utime(sig_file)  # its time: when the table was last found true
        return False  # every file as last time: nothing read, nothing written
    known = load(vault, config.RECALL_LOOKUP_KEYS_FILE, "files")
    if seen is not None and known and lookup_path(vault).is_file():
        changed = _changed(stats, known, over_rows(vault))
        if len(changed) <= OVER_MAX:
            from vaultkeeper.report.file import locked

            now = {rel_path for rel_path, _, _ in stats}
            with locked(vault) as held:
                if held:  # read under the lock: a row an apply wrote meanwhile is newer
                    put_held(vault, {p: record(vault, p) if p in now else None for p in changed})
                    atomic_write(sig_file, _sig(stats, stat_of(over)), fsync_dir=False)
                    return False
            # no lock (busy, or none on this system): the table built again, which needs
            # none (an apply's rows written meanwhile are newer than it, and kept)
    changed_table = _rebuild(vault, stats, known, began)
    prune(vault, began)  # rows the table now holds (or a newer read of their files)
    atomic_write(sig_file, _sig(stats, stat_of(over)), fsync_dir=False)
    return changed_table


def _sig(stats: list[tuple[str, list[int], bool]], over: list[int] | None) -> str:
    """Every lesson's stat key and the rows' file's, hashed; with the format and the
    masking's version (the hook serves the table's text as masked when built)."""
    sig = json.dumps([config.RECALL_LOOKUP_VERSION, vaultkeeper.__version__, stats, over])
    return hashlib.blake2b(sig.encode(), digest_size=16).hexdigest()


def _stats(
    vault: Path, seen: tuple[dict[str, list[int]], int, int] | None
) -> tuple[list[tuple[str, list[int], bool]], int]:
    """Each lesson file's (path, stat key, settled), and the time the table is of."""
    if seen is not None:
        found, limit, began = seen
        settled = [(p, found[p], found[p][3] < limit and found[p][4] < limit) for p in found]
        return sorted(settled), began
    began = time.time_ns()
    limit = began - RACY_NS
    stats: list[tuple[str, list[int], bool]] = []
    for rel_path in _candidates(vault):
        try:
            stats.append((rel_path, *key_of(os.stat(vault / rel_path), limit)))
        except OSError:
            continue
    return stats, began


def _changed(
    stats: list[tuple[str, list[int], bool]], known: dict[str, Any], rows: dict[str, Any]
) -> list[str]:
    """The lessons not as the table was built from them: changed, new or gone; and those
    gone that only a row over the table serves (``new`` wrote it; a person removed it)."""
    out = []
    for rel_path, key, _ in stats:
        was = known.get(rel_path)
        if not (isinstance(was, list) and len(was) == 2 and was[1] is True and was[0] == key):
            out.append(rel_path)
    now = {rel_path for rel_path, _, _ in stats}
    out += [rel_path for rel_path in known if rel_path not in now]
    return out + [
        p
        for p, row in rows.items()
        if p not in now and p not in known and isinstance(row, list) and row[-1] is not None
    ]


def _rebuild(
    vault: Path, stats: list[tuple[str, list[int], bool]], known: dict[str, Any], began: int
) -> bool:
    """The table of every lesson, reading only those changed since they were last read;
    True when its bytes changed."""
    read = load(vault, RECS_FILE, "recs")
    recs: dict[str, Any] = {}
    files: dict[str, list[Any]] = {}
    for rel_path, key, settled in stats:
        files[rel_path] = [key, settled]
        was = read.get(rel_path)
        if isinstance(was, list) and len(was) == 3 and was[1] is True and was[0] == key:
            recs[rel_path] = was  # as last read: its line was neutralised and masked then
            continue
        rec = record(vault, rel_path)
        if rec is None:
            recs[rel_path] = [key, settled, None]
        else:
            served = [rec[3], rec[6], rec[7], line(rel_path, rec), words(rec)]
            recs[rel_path] = [key, settled, served]
    if recs != read:
        save(vault, RECS_FILE, "recs", recs)
    live = [(p, *v[2]) for p, v in sorted(recs.items()) if v[2] is not None]
    data = table(live, began)
    old = read_bytes(lookup_path(vault))
    changed = old is None or old.partition(b"\n")[2] != data.partition(b"\n")[2]
    if changed:
        atomic_write(lookup_path(vault), data, fsync_dir=False)
    if files != known:  # last: keys that match the table on disk (a failed write above
        save(vault, config.RECALL_LOOKUP_KEYS_FILE, "files", files)  # keeps the old keys)
    return changed
