"""The report's rows in the derived store: the last completed scan's report as of its
start, kept file by file so that a patch (scan/last.py) writes only what changed.

``report_files`` holds one row per file the report is derived from (the registry and
memory files, the usage log, the journal, ``machine.json``): its stat key, taken before
any file is read; what the report says of it (``items``: a registry file's promote and
prune candidates and problems, a lesson's held-out candidate, problems and stale line;
NULL when none); and what a patch needs of it (``basis``: a registry file's blocks as the
duplicates pass sees them, their lines, promoted blocks, blocks without counters and its
most-used patterns; a lesson's facts). ``scan_report`` holds the rest as one small row:
the digest of every input's key (a reader whose files all kept theirs reads the rows as
they are), the racy files' byte digests, the problems before and after the files', the
duplicate pairs of each group, the unused skills, the anchors. Text is compact (the
named tuples as JSON arrays) and served once (credentials masked, controls stripped).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import sqlite3
import stat
import time
from hashlib import blake2b
from itertools import chain
from operator import itemgetter
from pathlib import Path
from typing import Any, NamedTuple

from vaultkeeper import config
from vaultkeeper.errors import UnsafePathError
from vaultkeeper.registry.blocks import registry_files
from vaultkeeper.report.candidates import HELD_OUT, PROMOTE, PRUNE, Candidate, Report, iso
from vaultkeeper.scan import cache as scancache
from vaultkeeper.scan.cache import ScanCache
from vaultkeeper.store import db
from vaultkeeper.store.model import Problem
from vaultkeeper.store.secrets import needs_serving, served
from vaultkeeper.store.walk import memory_files

REGISTRY, MEMORY = config.PATTERNS_DIR + "/", config.PROJECTS_DIR + "/"
OUT = "out"  # the key of a registry or memory file that is a symlink out of the vault
STATE_INPUTS = (config.USES_LOG_FILE, config.JOURNAL_FILE, config.MACHINE_FILE)
# what a row this version did not write raises: derived again
BAD_ROW = (
    sqlite3.Error,
    OSError,
    ValueError,
    LookupError,
    TypeError,
    AttributeError,
    RecursionError,
)
_TEXTS = (1, 2, 6, 10, 11, 13)  # a candidate's text from the vault's files (the rest is ours)


def is_input(rel: str) -> bool:
    """Whether a vault-relative path is where a registry or memory file the report is
    derived from would be (the walk may still leave it out: a hidden one)."""
    parts = rel.split("/")
    if not rel.endswith(".md"):
        return False
    return parts[0] == config.PATTERNS_DIR or (
        len(parts) >= 4 and parts[0] == config.PROJECTS_DIR and parts[2] == config.MEMORY_SUBDIR
    )


class Inputs(NamedTuple):
    """What the report is derived from, taken before any of it is read."""

    digest: str  # of every input's path and stat key
    keys: dict[str, str]  # vault-relative path -> its stat key's text ("-": none)
    racy: dict[str, str]  # a file changed within RACY_NS -> its bytes' digest


class Rows(NamedTuple):
    """The report as kept: the report's own row (``head``, decoded) and each file's."""

    digest: str  # the inputs' digest the rows were kept under
    racy: dict[str, str]
    head: list[Any]  # vault, made, took, problems before, after, pairs, skills, anchors, ...
    keys: dict[str, str]  # path -> stat key text
    items: dict[str, str]  # path -> its items' text (only files with some)


def inputs(vault: Path, taken: dict[str, tuple[str, bool] | None] | None = None) -> Inputs:
    """Every file the report is derived from, in the scan's order, with its stat key;
    ``taken`` receives each registry and memory file's (key, settled) by its path (None:
    not a regular file), for a scan that reads them next (ScanCache.taken)."""
    limit = time.time_ns() - scancache.RACY_NS  # the scan's window (a test may close it)
    root = str(vault)
    cut = len(root) + 1
    out: tuple[list[str], list[str]] = ([], [])  # symlinks out of the vault: never read
    paths = [str(p) for p in registry_files(vault, out[0])]
    paths += [*out[0], *memory_files(vault, out[1]), *out[1]]
    paths += [os.path.join(root, config.STATE_DIR, name) for name in STATE_INPUTS]
    keys: dict[str, str] = {}
    racy: dict[str, str] = {}
    linked = {*out[0], *out[1]}
    stat_key, stat_of = db.stat_key, os.stat
    for path in paths:
        if path in linked:
            keys[path[cut:]] = OUT
            continue
        try:
            info = stat_of(path)
        except OSError:
            keys[path[cut:]] = "-"
            continue
        key, settled = stat_key(info, limit)
        if taken is not None:
            taken[path] = (key, settled) if stat.S_ISREG(info.st_mode) else None
        keys[path[cut:]] = key
        if not settled:
            racy[path[cut:]] = bytes_digest(path)
    return Inputs(keys_digest(keys), keys, racy)


def keys_digest(keys: dict[str, str]) -> str:
    """The digest of every input's path and stat key, in the scan's order."""
    text = "".join(f"{path}\0{key}\n" for path, key in keys.items())
    return blake2b(text.encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()


def bytes_digest(path: str) -> str:
    """The digest of a regular file's bytes ("-": none to read; a FIFO is never opened)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return "-"
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # fdopen refuses a folder by its fd number
        os.close(fd)
        return "-"
    with os.fdopen(fd, "rb") as fh:
        return db.content_digest(fh.read())


def changed_bytes(vault: Path, racy: dict[str, str], known: set[str]) -> set[str]:
    """The files of ``racy`` (path -> bytes' digest) not in ``known`` whose bytes differ."""
    return {p for p, d in racy.items() if p not in known and bytes_digest(f"{vault}/{p}") != d}


# -- text: compact, what a reader may be shown ------------------------------------------


def served_rows(rows: Any, fields: tuple[int, ...] = ()) -> list[Any]:
    """``rows`` (named tuples) with the text of their ``fields`` (all: none given)
    served: credentials masked, controls stripped. One check for them all, then row by row."""

    def text(some: Any) -> str:
        got = chain.from_iterable(map(itemgetter(*fields), some)) if fields else chain(*some)
        return " ".join(
            x if type(x) is str else " ".join(x) if type(x) is tuple else "" for x in got
        )

    if not needs_serving(text(rows)):
        return list(rows)
    return [
        [_served(v, not fields or i in fields) for i, v in enumerate(r)]
        if needs_serving(text([r]))
        else r
        for r in rows
    ]


def _served(value: Any, text: bool) -> Any:
    if type(value) is tuple:
        return [served(w) for w in value]
    return served(value) if text and type(value) is str else value


def items_text(first: Any, second: Any, third: Any, registry: bool, fresh: bool = True) -> Any:
    """A file's items as its row keeps them: a registry file's promote, prune candidates
    and problems; a lesson's held-out candidates, problems and stale lines (None: none).
    ``fresh``: as classified (else served already)."""
    if not (first or second or third):
        return None
    serve = served_rows if fresh else _as_given
    one = [c[1:] for c in serve(first, _TEXTS)]
    two = [c[1:] for c in serve(second, _TEXTS)] if registry else serve(second)
    return json.dumps([one, two, serve(third)])


def _as_given(rows: Any, fields: tuple[int, ...] = ()) -> Any:
    return rows


def facts_text(facts: list[Any]) -> str:
    """A lesson's facts as JSON ("null": a value JSON cannot carry as YAML gave it, a
    time; a patch that needs them classifies whole)."""
    try:
        return json.dumps(facts, allow_nan=False)
    except (TypeError, ValueError):
        return "null"


def pair(row: list[Any]) -> Any:
    from vaultkeeper.upkeep.duplicates import DuplicatePair

    return DuplicatePair._make([*row[:8], tuple(row[8])])


def assemble(head: list[Any], order: Any, items: dict[str, str]) -> Report:
    """The Report of the rows: each file's items in ``order`` (the scan's), between the
    problems before and after them; raises on rows this version did not write."""
    from vaultkeeper.upkeep.decay import SkillUnused, Stale

    vault, made, took, before, after, groups, skills, extra = head[:8]
    lists: tuple[list[Any], ...] = ([], [], [], [], [], [])  # promote prune held reg mem stale
    paths = [path for path in order if path in items]
    for path, (a, b, c) in zip(paths, _decoded(items[p] for p in paths), strict=True):
        at = (0, 1, 3) if path.startswith(REGISTRY) else (2, 4, 5)
        lists[at[0]].extend(a)
        lists[at[1]].extend(b)
        lists[at[2]].extend(c)
    promote, prune, held, in_registry, in_memory, stale = lists
    more = {"anchors": (), "suggested": ()}
    if extra is not None:
        from vaultkeeper.report import anchors

        more = anchors.from_dict(extra)
    problems = (*before, *in_registry, *in_memory, *after)
    return Report(
        vault=str(vault),
        generated_at=dt.datetime.fromisoformat(made.replace("Z", "+00:00")),
        promote=tuple(Candidate(PROMOTE, *c) for c in promote),
        prune=tuple(Candidate(PRUNE, *c) for c in prune),
        held_out=tuple(Candidate(HELD_OUT, *c) for c in held),
        problems=tuple(Problem(*p) for p in problems),
        duration_ms=int(took),
        duplicates=tuple(pair(p) for p in served_rows(groups[""] if head[10] else _capped(groups))),
        stale=tuple(Stale(*s) for s in stale),
        skills_unused=tuple(SkillUnused(*s) for s in skills),
        **more,
    )


def _capped(groups: Any) -> list[Any]:
    from vaultkeeper.upkeep.duplicates import capped

    return capped([pair(p) for pairs in groups.values() for p in pairs])


def tops(registry: dict[str, Any]) -> list[Any]:
    """[merged top patterns, blocks without counters by file] of each registry file's
    basis ([shape, top]; None: no blocks), in the scan's order: the report row keeps
    them, so a reader with nothing changed reads no registry file's row."""
    bare = {rel: got[0][3] for rel, got in registry.items() if got is not None and got[0][3]}
    return [merged(registry), bare]


def merged(registry: dict[str, Any]) -> list[Any] | None:
    """The registry's most-used patterns, [name, count, last used, file, summary] each
    (the brief's order: count, then latest use; files in order on a tie), and how many
    readable ones there are, from each file's (None: one could not be had)."""
    from vaultkeeper.report.brief import TOP

    tops = [(rel, got[1]) for rel, got in registry.items() if got is not None]
    if any(top is None for _, top in tops):
        return None
    rows = [[n, c, u, rel, s] for rel, top in tops for n, c, u, s in top[0]]
    rows.sort(key=lambda r: (r[1], r[2] or ""), reverse=True)  # ISO days sort as days; stable
    if any(r[4] is None for r in rows[:TOP]):
        return None  # a block whose summary was not read: the brief parses the registry
    return [rows[:TOP], sum(top[1] for _, top in tops)]


# -- a file's basis: what a patch needs that the report does not say --------------------


def items_digest(heads: Any) -> str:
    """The digest of what the duplicates pass compares of a file's blocks, in order."""
    text = "\x1f".join(f"{h.name} {h.sentence()}" for h in heads)
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def top_of(vault: Path, heads: Any, known: dict[str, str]) -> Any:
    """A registry file's most-used patterns, [name, count, last used, summary] each,
    and how many readable ones it has (None: a file changed under the scan). A summary
    not in ``known`` (nor in the block's text) is None: a block past the brief's patterns
    when it was read, which ``merged`` gives only if it is one of them now."""
    from vaultkeeper.errors import Interrupted, VaultkeeperError
    from vaultkeeper.report import brief

    try:
        rows, total = brief.top(vault, heads, known, parse=False)
    except Interrupted:
        raise  # a signal during a scan stops it (scan/classify.py), never swallowed here
    except (VaultkeeperError, OSError, ValueError):
        return None
    return [[r[1], r[2], r[3], r[5]] for r in rows], total


def shape(heads: Any) -> list[Any]:
    """What a patch keeps of a registry file: its blocks' words digest, their lines,
    its promoted blocks, its blocks without counter lines (status: merge leftovers)."""
    bare = [[h.line, h.name] for h in heads if h.count_raw is None and h.last_used_raw is None]
    promoted = [
        [h.name, h.line, h.promoted, h.last_used and h.last_used.isoformat()]
        for h in heads
        if h.promoted is not None
    ]
    return [items_digest(heads), [h.line for h in heads], promoted, bare]


def usage_view(vault: Path, memory: Any) -> tuple[Any, list[Any]]:
    """The usage log and the journal (decay.load_usage) as the stale lessons read them:
    the log's first day, and the days it and the journal name each of ``memory``."""
    from vaultkeeper.upkeep.decay import load_usage

    usage = load_usage(vault)
    paths = set(memory)
    seen = {k: v.isoformat() for k, v in usage.last_seen.items() if {k, k + ".md"} & paths}
    checked = {k: v.isoformat() for k, v in usage.validated.items() if k in paths}
    return usage, [usage.since and usage.since.isoformat(), seen, checked]


def _by_file(items: Any, order: dict[str, int], wanted: str, at: int = 1) -> dict[str, list[Any]]:
    """``items`` served (one check for them all) by their file, which must be under
    ``wanted`` and in ``order`` (the scan's); raises ValueError when they are not: such a
    report is not kept."""
    out: dict[str, list[Any]] = {}
    last = -1
    for item, shown in zip(items, served_rows(items, _TEXTS if at == 2 else ()), strict=True):
        where = order.get(item[at], -1)
        if where < last or not item[at].startswith(wanted):
            raise ValueError(item[at])
        out.setdefault(item[at], []).append(shown)
        last = where
    return out


def split(
    vault: Path, report: Report, parts: dict[str, Any], cache: ScanCache, found: Inputs
) -> tuple[list[Any], dict[str, str | None], dict[str, Any]]:
    """A whole classification as rows: the report's own row (decoded), each file's items'
    text, each file's basis (a registry file's [shape, top]; a lesson's facts' text).
    Raises ValueError for a report whose lists do not follow its files' order."""
    from vaultkeeper.upkeep.duplicates import BLOCK, capped

    heads, facts = parts["heads"], parts["facts"]
    start, end = parts["problems"]
    order = {path: n for n, path in enumerate(found.keys)}
    memory = {p for p in found.keys if p.startswith(MEMORY)}
    rest = report.problems[end:]
    after = [p for p in rest if p.path not in memory]
    in_memory = [p for p in rest if p.path in memory]
    if list(rest) != in_memory + after:
        raise ValueError("problems")
    reg = [_by_file(x, order, REGISTRY, 2) for x in (report.promote, report.prune)]
    reg.append(_by_file(report.problems[start:end], order, REGISTRY, 0))
    mem = [_by_file(report.held_out, order, MEMORY, 2), _by_file(in_memory, order, MEMORY, 0)]
    mem.append(_by_file(report.stale, order, MEMORY))
    by_file: dict[str, list[Any]] = {}
    for h in heads:
        by_file.setdefault(h.rel, []).append(h)
    items: dict[str, str | None] = {}
    basis: dict[str, Any] = {}
    known = cache.known_summaries()  # and this scan's: a block it kept has no text
    known.update((r[6], r[5]) for r in cache.patterns[0] if type(r[6]) is str)
    for path in found.keys:
        if path.startswith(REGISTRY):
            a, b, c = (x.get(path, ()) for x in reg)
            items[path] = items_text(a, b, c, True, False)
            hs = by_file.get(path)
            basis[path] = None if hs is None else [shape(hs), top_of(vault, hs, known)]
    for path in mem[0].keys() | mem[1].keys() | mem[2].keys():  # a lesson with none: no items
        a, b, c = (x.get(path, ()) for x in mem)
        items[path] = items_text(a, b, c, False, False)
    for f in facts:
        basis.setdefault(f.rel, []).append(f)
    pairs: dict[str, Any] | None = {}
    kept = cache.kept_pairs.get("groups") or {}
    groups = [BLOCK] * bool(heads) + [f"memory:{g}" for g in _projects(facts)]
    for group in groups:
        got = kept.get(group)
        if pairs is None or type(got) is not list:
            pairs = None
            continue
        pairs[group] = [pair(p) for p in got[1]]
    if pairs is not None and capped([p for g in pairs.values() for p in g]) != list(
        report.duplicates
    ):
        pairs = None  # not the pairs the report was capped from: every patch derives whole
    view = usage_view(vault, memory)[1]
    extra = None
    if report.anchors or report.suggested:
        from vaultkeeper.report import anchors

        extra = anchors.to_dict(report)
    groups_kept = {"": list(report.duplicates)} if pairs is None else pairs  # None: as listed
    twice = len({h.name for h in heads}) != len(heads)
    head = [str(vault), iso(report.generated_at), report.duration_ms]
    head += [served_rows(report.problems[:start]), served_rows(after), groups_kept]
    head += [served_rows(report.skills_unused), extra, twice, view, pairs is None]
    head.append(tops({p: b for p, b in basis.items() if p.startswith(REGISTRY)}))
    return head, items, basis


def _projects(facts: Any) -> list[str]:
    """The projects with a live lesson, in the duplicates pass's order."""
    seen: dict[str, None] = {}
    for f in facts:
        if f.status != "archived":
            seen.setdefault(f.rel.split("/", 2)[1])
    return list(seen)


# -- reading and writing the rows ---------------------------------------------------------


def load(conn: sqlite3.Connection, started_ms: int, found: Inputs) -> Rows | None:
    """The rows kept as of ``started_ms`` (in the caller's read transaction); None: none.
    Kept under ``found``'s digest, a row for each of its files: their keys are not read."""
    got = conn.execute(
        "SELECT inputs, racy, report FROM scan_report WHERE started = ?", (started_ms,)
    ).fetchone()
    if got is None:
        return None
    registry = [
        path
        for (path,) in conn.execute(
            "SELECT path FROM report_files WHERE path >= ? AND path < ?",
            (REGISTRY, REGISTRY[:-1] + "0"),
        )
    ]
    (count,) = conn.execute("SELECT count(*) FROM report_files").fetchone()
    keys: dict[str, str] = {}
    items: dict[str, str] = {}
    if (got[0], count) == (found.digest, len(found.keys)) and set(registry) == {
        p for p in found.keys if p.startswith(REGISTRY)
    }:
        keys = found.keys
        items = dict(conn.execute("SELECT path, items FROM report_files WHERE items NOT NULL"))
    else:
        for path, key, text in conn.execute("SELECT path, key, items FROM report_files"):
            keys[path] = key
            if text is not None:
                items[path] = text
    head = json.loads(got[2])
    if type(head) is not list or len(head) != 12 or type(head[5]) is not dict:
        raise ValueError("not this version's row")
    return Rows(got[0], json.loads(got[1]), head, keys, items)


def ordered(conn: sqlite3.Connection, started_ms: int) -> Rows | None:
    """The rows kept as of ``started_ms`` with their files in the scan's order (in the
    caller's read transaction), for a writer that stats only what it wrote; None: none
    kept, or a file's place is not known (added by a patch: the next scan places it)."""
    got = conn.execute(
        "SELECT inputs, racy, report FROM scan_report WHERE started = ?", (started_ms,)
    ).fetchone()
    if got is None:
        return None
    found = conn.execute("SELECT ord, path, key, items FROM report_files").fetchall()
    if any(row[0] is None for row in found):
        return None
    found.sort()  # by place: no two rows share one (SQLite's ORDER BY takes longer)
    keys = {row[1]: row[2] for row in found}
    items = {row[1]: row[3] for row in found if row[3] is not None}
    head = json.loads(got[2])
    if type(head) is not list or len(head) != 12 or type(head[5]) is not dict:
        raise ValueError("not this version's row")
    return Rows(got[0], json.loads(got[1]), head, keys, items)


def facts_of(conn: sqlite3.Connection, prefix: str) -> dict[str, Any]:
    """Each lesson's facts kept under ``prefix`` (decoded; None: not JSON's to carry)."""
    rows = conn.execute(
        "SELECT path, basis FROM report_files WHERE path >= ? AND path < ?",
        (prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)),
    )
    found = [(path, text) for path, text in rows if text is not None]
    return dict(zip((p for p, _ in found), _decoded(t for _, t in found), strict=True))


def _decoded(texts: Any) -> list[Any]:
    """Each of ``texts`` (JSON values, one a row) decoded, by one parse of them all."""
    return list(json.loads("[" + ",".join(texts) + "]"))


def keep(
    vault: Path,
    started_ms: int,
    found: Inputs,
    report: Report,
    parts: dict[str, Any],
    cache: ScanCache,
) -> None:
    """Keep ``report`` (classified as of ``started_ms`` from ``found``, with the ``parts``
    classify gave and the pairs ``cache`` holds) as the rows readers use and patch; a
    report whose lists do not follow its files is not kept (readers classify whole)."""
    with contextlib.suppress(ValueError):
        head, items, basis = split(vault, report, parts, cache, found)
        with contextlib.suppress(sqlite3.Error, OSError, UnsafePathError), db.connect(vault) as c:
            write(c, started_ms, found, head, items, basis)


def write(
    conn: sqlite3.Connection,
    started_ms: int,
    found: Inputs,
    head: list[Any],
    items: dict[str, str | None],
    basis: dict[str, Any],
    was: str | None = None,
    changed: set[str] | None = None,
) -> None:
    """Write the rows of the files whose key, items or basis changed. A whole derivation
    (``changed`` None: every file's items and basis given) never over a scan that started
    later; a patch (the ``changed`` files re-derived, ``items`` of others re-stated) only
    over the rows it read, kept under the inputs' digest ``was``."""
    with db.writing(conn):
        now = conn.execute("SELECT started, inputs, racy FROM scan_report").fetchone()
        if now is not None and (
            now[0] > started_ms or was is not None and now[:2] != (started_ms, was)
        ):
            return  # a later scan's rows, or another reader patched meanwhile: theirs stay
        place: dict[str, int | None] = {}  # a file's place in the scan's order
        if changed is None:
            old: dict[str, tuple[str, str | None, int | None]] = {}
            racy = found.racy.keys()
            with contextlib.suppress(*BAD_ROW):  # rows of no readable report: all written anew
                racy = racy | json.loads(now[2]).keys()
                old = {
                    p: (k, i, o)
                    for p, k, i, o in conn.execute("SELECT path, key, items, ord FROM report_files")
                }
            if not old:
                conn.execute("DELETE FROM report_files")
            conn.executemany(
                "DELETE FROM report_files WHERE path = ?", [(p,) for p in old.keys() - found.keys]
            )
            changed = {
                p
                for p, k in found.keys.items()
                if p not in old or old[p][0] != k or p in racy or p.startswith(REGISTRY)
            }
            given = items
            items = {p: given.get(p) for p in changed}
            items |= {
                p: i for p in found.keys if p not in changed and old[p][1] != (i := given.get(p))
            }
            place = {p: n for n, p in enumerate(found.keys)}
            conn.executemany(
                "UPDATE report_files SET ord = ? WHERE path = ?",
                [(n, p) for p, n in place.items() if p not in changed and old[p][2] != n],
            )
        else:
            conn.executemany(
                "DELETE FROM report_files WHERE path = ?",
                [(p,) for p in changed - found.keys.keys()],
            )
        conn.executemany(  # a patch keeps a file's place; one it adds has none known
            "INSERT INTO report_files VALUES (?, ?, ?, ?, ?) ON CONFLICT (path) DO UPDATE "
            "SET key = excluded.key, items = excluded.items, basis = excluded.basis, "
            "ord = coalesce(excluded.ord, ord)",
            [
                (p, found.keys[p], items.get(p), _basis_text(p, basis.get(p)), place.get(p))
                for p in changed
                if p in found.keys
            ],
        )
        conn.executemany(
            "UPDATE report_files SET items = ? WHERE path = ?",
            [(i, p) for p, i in items.items() if p not in changed],
        )
        conn.execute("DELETE FROM scan_report")
        conn.execute(
            "INSERT INTO scan_report VALUES (?, ?, ?, ?)",
            (started_ms, found.digest, json.dumps(found.racy), json.dumps(head)),
        )


def _basis_text(path: str, value: Any) -> str | None:
    if not value:
        return None
    return json.dumps(value) if path.startswith(REGISTRY) else facts_text(value)
