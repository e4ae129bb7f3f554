"""The registry's most-used patterns as the last scan saw them: the brief reads them from
``state/brief-patterns.json`` instead of parsing every registry block at session start.

Parsing the registry was most of the session-start brief's time (about 100 ms at
10,000 entries); the scan has every block's head already. So each scan saves the
``TOP`` most-used readable patterns (count, then latest use; a native memory's counter
left out, as the brief does) with each one's first paragraph, how many there are, and
the stat of every registry file. The brief uses them only while every registry file's
stat is still the one saved (``load``); anything else -- a file changed, added or gone,
a missing, corrupt or foreign file -- gives None, and the brief parses the registry
itself, as before. A file changed just before or during the scan is saved without a
stat (``RACY_NS``): a write within one tick of the file system's clock could leave its
stat alike, so the brief then reads the registry itself.

A block the scan cache kept (not read again) has no text: its first paragraph comes
from the last file, under the fingerprint of the block's text (the cache's), or from
parsing that one registry file when it is not there.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.registry.lines import first_paragraph, registry_files
from vaultkeeper.store.vault import own_dir

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing too: a scan imports this module and has no other use for it
    from collections.abc import Sequence
    from typing import Any, NamedTuple

    from vaultkeeper.registry.keptheads import Head

FORMAT = 1
TOP = config.BRIEF_MAX_CHARS // 40  # as many as the brief can show (recall/start.py)
RACY_NS = 50_000_000  # a file changed this close to the scan's start: saved without a stat


if TYPE_CHECKING:

    class PatternFact(NamedTuple):
        name: str
        count: int  # type: ignore[assignment]  # over tuple.count: unused
        last_used: str | None  # ISO date
        path: str  # the registry file, vault-relative
        summary: str  # the block's first paragraph of prose, on one line

else:
    from collections import namedtuple

    PatternFact = namedtuple("PatternFact", "name count last_used path summary")


def summary(text: str) -> str:
    """The block's first paragraph of prose (after its heading line), on one line."""
    return first_paragraph(text.partition("\n")[2])


def ranked(heads: Sequence[Any]) -> list[Any]:
    """The readable patterns, most used first (count, then latest use)."""
    readable = [h for h in heads if h.count is not None and h.rel != config.NATIVE_REGISTRY_FILE]
    readable.sort(key=lambda h: (-(h.count or 0), -(h.last_used or dt.date.min).toordinal()))
    return readable


def _path(vault: Path) -> Path:
    return Path(own_dir(vault, config.STATE_DIR)) / config.BRIEF_PATTERNS_FILE


def _keys(vault: Path) -> dict[str, list[int] | None]:
    """Each registry file's stat key now (None: it could not be stat'ed)."""
    from vaultkeeper.store.vault import rel

    out: dict[str, list[int] | None] = {}
    for path in registry_files(vault):
        try:
            st = os.stat(path)
        except OSError:
            out[rel(vault, path)] = None
            continue
        out[rel(vault, path)] = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
    return out


def _fingerprint(head: Any) -> str | None:
    """The scan cache's fingerprint of the block's text (registry/delta.py's)."""
    span = getattr(head, "span", None)
    if span is None:  # a block the cache kept: its fingerprint came with it
        return getattr(head, "fingerprint", None)
    import hashlib

    raw = span().encode("utf-8", "surrogatepass")
    return hashlib.blake2b(raw, digest_size=8).hexdigest()


def save(vault: Path, heads: Sequence[Head], started_ns: int, stats: dict[str, Any]) -> None:
    """Keep the scan's most-used patterns; ``started_ns``: when it began reading the
    registry (time.time_ns()); ``stats``: each registry file's stat key as the scan took
    it before reading the file. The caller keeps the scan going whatever this raises."""
    from vaultkeeper.store.fsio import atomic_write

    racy = started_ns - RACY_NS  # changed since: not trusted (the brief reads the file)
    keys = {p: None if k is None or max(k[3], k[4]) >= racy else k for p, k in stats.items()}
    best = ranked(heads)
    before = _read(vault)
    known: dict[str, str] = {}
    if before is not None:
        for item in before.get("patterns", ()):
            if type(item) is list and len(item) == 6 and type(item[5]) is str:
                known[item[5]] = item[4]
    parsed: dict[str, dict[int, Any]] = {}  # registry files parsed for a missing paragraph
    rows: list[list[Any]] = []
    for head in best[:TOP]:
        mark = _fingerprint(head)
        text = getattr(head, "text", None)
        if text is not None:
            said = summary(text())
        elif mark is not None and mark in known:
            said = known[mark]
        else:
            said = _parsed(vault, head, parsed)
        used = head.last_used
        rows.append(
            [head.name, head.count, None if used is None else used.isoformat(), head.rel, said]
            + [mark]
        )
    body = {"format": FORMAT, "top": TOP, "total": len(best), "registry": keys, "patterns": rows}
    if body != before:  # an unchanged registry: no write (and no fsync) at all
        atomic_write(_path(vault), json.dumps(body) + "\n", fsync_dir=False)


def after_scan(vault: Path, heads: Sequence[Head], started_ns: int, stats: dict[str, Any]) -> None:
    """``save``, never the scan's failure: the brief then parses the registry itself."""
    import contextlib

    from vaultkeeper.errors import VaultkeeperError

    with contextlib.suppress(VaultkeeperError, OSError, ValueError):
        save(vault, heads, started_ns, stats)


def _parsed(vault: Path, head: Any, parsed: dict[str, dict[int, Any]]) -> str:
    from vaultkeeper.registry.blocks import parse_heads
    from vaultkeeper.store.model import decode, read_regular

    if head.rel not in parsed:
        text = decode(read_regular(head.path))
        parsed[head.rel] = {h.line: h for h in parse_heads(head.path, head.rel, text)}
    found = parsed[head.rel].get(head.line)
    if found is None or found.name != head.name:
        raise ValueError(f"{head.rel}:{head.line}: not the block the scan read")
    return summary(found.text())


def _read(vault: Path) -> dict[str, Any] | None:
    from vaultkeeper.store.text import read_regular

    try:  # never through a link: what it holds is served to the agent
        data = json.loads(read_regular(_path(vault), follow=False))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    return data


def load(vault: Path, limit: int) -> tuple[list[PatternFact], int] | None:
    """The ``limit`` most-used patterns and how many there are, as the last scan saw
    them, if no registry file changed since; else None (parse the registry)."""
    try:
        data = _read(vault)
        if data is None or type(data.get("top")) is not int or data["top"] < limit:
            return None
        keys = data.get("registry")
        if not isinstance(keys, dict) or None in keys.values() or keys != _keys(vault):
            return None
        total = data["total"]
        out: list[PatternFact] = []
        for item in data["patterns"][:limit]:
            name, count, used, path, said, _ = item
            if not (type(name) is str and type(count) is int and type(path) is str):
                return None
            if not (type(said) is str and (used is None or type(used) is str)):
                return None
            out.append(PatternFact(name, count, used, path, said))
        if type(total) is not int or total < len(out):
            return None
        return out, total
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
