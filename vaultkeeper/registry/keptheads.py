"""The registry's block heads as a scan keeps them in its rows, and read back.

What a scan needs of each ``### name`` block: its name, line, counters, first sentence,
hash (for a block that can be a candidate), what is wrong with it (for a block whose
counters do not read) and a fingerprint of its text. ``load_heads`` gives a scan every
registry file's heads: from its row while the file's stat key is the row's
(``CachedHead``), else parsed again whole and kept; a block whose fingerprint is in the
old row takes its first sentence and hash from there.
"""

from __future__ import annotations

from hashlib import blake2b
from typing import TYPE_CHECKING, Any

from vaultkeeper import config
from vaultkeeper.registry.blocks import RegistryBlock, parse_blocks, registry_files, whole_count
from vaultkeeper.store import model
from vaultkeeper.store.model import ParseError, Problem, decode, outside_problems, parse_date
from vaultkeeper.store.vault import rel

if TYPE_CHECKING:
    import datetime as dt
    from pathlib import Path

    from vaultkeeper.scan.cache import ScanCache


class CachedHead:
    """What a scan reads of one block (RegistryBlock's counters, hash, sentence, problems)."""

    __slots__ = (
        "name",
        "path",
        "rel",
        "line",
        "count",
        "count_raw",
        "last_used",
        "last_used_raw",
        "promoted",
        "_sentence",
        "_hash",
        "_problems",
        "fingerprint",  # of the block's text: the brief's patterns key on it
    )

    def __init__(self, path: Path, rel: str, kept: list[Any], dates: dict[str, Any]) -> None:
        """From what _kept wrote; TypeError or ValueError for anything else. (Checks
        written out, not called: this runs for every block of every unchanged file.)"""
        name, line, count_raw, last_raw, promoted, sentence, digest, problems, mark = kept
        if not (type(name) is str and type(line) is int and type(sentence) is str):
            raise TypeError("not a kept block head")
        if not (
            (count_raw is None or type(count_raw) is str)
            and (last_raw is None or type(last_raw) is str)
            and (promoted is None or type(promoted) is str)
            and (digest is None or type(digest) is str)
            and type(problems) is list
        ):
            raise TypeError("not a kept block head")
        self.name, self.path, self.rel, self.line = name, path, rel, line
        self.count_raw, self.count = count_raw, whole_count(count_raw)
        self.last_used_raw = last_raw
        if last_raw is None:
            self.last_used = None
        else:
            if last_raw not in dates:  # a registry repeats its dates many times
                dates[last_raw] = parse_date(last_raw)
            self.last_used = dates[last_raw]
        self.promoted = promoted
        if digest is None and _candidate(self.count, promoted):
            raise ValueError("a candidate kept without its hash")  # the settings changed
        self._sentence, self._hash = sentence, digest
        self.fingerprint = mark if type(mark) is str else None
        self._problems = _problems(rel, problems) if problems else []

    @property
    def hash(self) -> str:
        """The block's hash; asked only of candidates, and __init__ refuses a candidate
        kept without one (the file is then read again)."""
        assert self._hash is not None, f"{self.rel}:{self.line}: no hash kept"
        return self._hash

    def problems(self) -> list[Problem]:
        return list(self._problems)

    def sentence(self) -> str:
        return self._sentence


Head = RegistryBlock | CachedHead  # a block as a scan reads it: parsed now, or from its row


def _problems(rel: str, kept: list[Any]) -> list[Problem]:
    for p in kept:
        if not (type(p) is list and len(p) == 2 and type(p[1]) is str):
            raise TypeError("not a kept block problem")
        if not (p[0] is None or type(p[0]) is int):
            raise TypeError("not a kept block problem")
    return [Problem(rel, p[0], p[1]) for p in kept]


def _candidate(count: int | None, promoted: str | None) -> bool:
    """Whether a block may be a prune or promote candidate on some day (its hash kept)."""
    return count == 0 or (
        count is not None and count >= config.PROMOTE_MIN_COUNT and promoted is None
    )


def kept_of(head: RegistryBlock, fingerprint: str) -> list[Any]:
    """What the cache keeps of a block just parsed (CachedHead reads it back).

    Its hash only where a candidate can come from (a count of 0: prune on some day;
    promote eligible, by the count alone): most blocks are neither, and 64 characters
    each would make the cache a good third bigger.
    """
    problems = []
    if head.count is None or head.last_used is None:  # as registry_candidates asks
        problems = [[p.line, p.reason] for p in head.problems()]
    candidate = _candidate(head.count, head.promoted)
    return [
        head.name,
        head.line,
        head.count_raw,
        head.last_used_raw,
        head.promoted,
        head.sentence(),
        head.hash if candidate else None,
        problems,
        fingerprint,
    ]


def _kept_heads(heads: list[RegistryBlock], text: str, old: Any) -> list[Any]:
    """What the rows keep of each block just parsed; one whose text is as in ``old`` (the
    file's last row, any shape) takes its first sentence and hash from there."""
    by_print = {}
    for was in old if type(old) is list else ():
        if type(was) is list and len(was) > 8 and type(was[8]) is str:
            by_print[was[8]] = was
    if text.isascii():  # the common case: one encoding, its offsets the text's
        data = ("\n" + text).encode("ascii")
        raws = [data[slice(*head.bounds())] for head in heads]
    else:
        raws = [head.span().encode("utf-8", "surrogatepass") for head in heads]
    out = []
    for head, raw in zip(heads, raws, strict=True):
        fingerprint = blake2b(raw, digest_size=8).hexdigest()
        was = by_print.get(fingerprint)
        if was is not None and type(was[5]) is str and (was[6] is None or type(was[6]) is str):
            head._sentence, head._hash = was[5], was[6]
        out.append(kept_of(head, fingerprint))
    return out


def load_heads(vault: Path, cache: ScanCache) -> tuple[list[Head], list[Problem]]:
    """blocks.load_registry for a scan: an unchanged file's heads from its row, a changed
    one parsed whole and its row replaced."""
    heads: list[Head] = []
    problems: list[Problem] = []
    dates: dict[str, dt.date | None] = {}
    outside: list[str] = []
    for path in registry_files(vault, outside):
        rel_path = rel(vault, path)
        entry, key = cache.registry(rel_path, str(path))
        if entry is not None:
            try:
                heads.extend([CachedHead(path, rel_path, head, dates) for head in entry[1]])
            except (TypeError, ValueError):
                pass  # not as this version keeps them: read the file
            else:
                cache.keep_registry_entry(rel_path)
                continue
        try:
            raw = model.read_regular(path)  # a FIFO named *.md is refused, not waited on
            text = decode(raw)
        except ParseError as exc:
            problems.append(Problem(rel_path, exc.line, exc.reason))
            continue
        found = parse_blocks(path, rel_path, text)
        kept = _kept_heads(found, text, cache.registry_before(rel_path))
        heads.extend(found)
        cache.keep_registry(rel_path, key, kept, raw)
    problems.extend(outside_problems(vault, outside))  # symlinks out: never read
    return heads, problems
