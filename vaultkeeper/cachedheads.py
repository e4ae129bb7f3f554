"""Registry block heads for a scan, from the scan cache when a registry file is unchanged.

A scan needs of each ``### name`` block only its name, line, counters, first sentence,
hash, and what is wrong with it (for a block whose counters do not read); that is what
the cache keeps per registry file (vaultkeeper.scancache). A changed file is parsed as
registry.load_heads parses it, and what the scan needs of it is kept for the next one.
"""

from __future__ import annotations

from vaultkeeper import config
from vaultkeeper.model import Problem, parse_date
from vaultkeeper.registry import registry_files, whole_count
from vaultkeeper.registrylines import HEAD_FIELDS

TYPE_CHECKING = False
if TYPE_CHECKING:
    import datetime as dt
    from pathlib import Path
    from typing import Any, Protocol

    from vaultkeeper.registry import BlockHead
    from vaultkeeper.scancache import ScanCache

    class Head(Protocol):
        """A block as a scan reads it: a BlockHead, or a CachedHead of an unchanged file."""

        name: str
        path: Path
        rel: str
        line: int
        count: int | None
        count_raw: str | None
        last_used: dt.date | None
        last_used_raw: str | None
        promoted: str | None

        def hash(self) -> str: ...
        def problems(self) -> list[Problem]: ...
        def sentence(self) -> str: ...


class CachedHead:
    """What a scan reads of one block (BlockHead's attributes and scan-side methods)."""

    __slots__ = (
        *HEAD_FIELDS,
        "_sentence",
        "_hash",
        "_problems",
    )

    def __init__(self, path: Path, rel: str, kept: list[Any], dates: dict[str, Any]) -> None:
        """From what _kept wrote; TypeError or ValueError for anything else. (Checks
        written out, not called: this runs for every block of every unchanged file.)"""
        name, line, count_raw, last_raw, promoted, sentence, digest, problems, _ = kept
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
        self._problems = _problems(rel, problems) if problems else []

    def hash(self) -> str:
        """The block's hash; asked only of candidates, and __init__ refuses a candidate
        kept without one (the file is then read again)."""
        assert self._hash is not None, f"{self.rel}:{self.line}: no hash kept"
        return self._hash

    def problems(self) -> list[Problem]:
        return list(self._problems)

    def sentence(self) -> str:
        return self._sentence


def _line_or_none(value: Any) -> bool:
    return value is None or type(value) is int


def _problems(rel: str, kept: list[Any]) -> list[Problem]:
    for p in kept:
        if not (type(p) is list and len(p) == 2 and _line_or_none(p[0]) and type(p[1]) is str):
            raise TypeError("not a kept block problem")
    return [Problem(rel, p[0], p[1]) for p in kept]


def _candidate(count: int | None, promoted: str | None) -> bool:
    """Whether a block may be a prune or promote candidate on some day (its hash kept)."""
    return count == 0 or (
        count is not None and count >= config.PROMOTE_MIN_COUNT and promoted is None
    )


def _text_or_none(value: Any) -> bool:
    return value is None or type(value) is str


def _kept(head: BlockHead, fingerprint: str) -> list[Any]:
    """What the cache keeps of a block just parsed (CachedHead reads it back).

    Its hash only where a candidate can come from (a count of 0: prune on some day;
    promote eligible, by the count alone): most blocks are neither, and 64 characters
    each would make the cache a good third bigger. ``fingerprint``: see _reused.
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
        head.hash() if candidate else None,
        problems,
        fingerprint,
    ]


def _fingerprints(kept: Any) -> dict[str, list[Any]]:
    """A changed registry file's blocks as the cache kept them, by fingerprint."""
    if type(kept) is not list:
        return {}
    out: dict[str, list[Any]] = {}
    for head in kept:
        if type(head) is list and len(head) == 9 and type(head[8]) is str:
            out[head[8]] = head
    return out


def _reused(path: Path, rel_path: str, text: str, before: Any) -> list[tuple[BlockHead, list[Any]]]:
    """A changed registry file's blocks, parsed, with what the cache keeps of each.

    A session moves a count or two in a registry of thousands of blocks; each block's
    first sentence and hash are taken from the cache when the block's text is as it
    was: the same fingerprint (BLAKE2b, 64 bits, of everything from its heading to the
    next, on which every kept value but the line depends).
    """
    from vaultkeeper.digests import blake2b_maker
    from vaultkeeper.registry import parse_heads

    old = _fingerprints(before)
    heads = parse_heads(path, rel_path, text)
    if text.isascii():  # the common case: one encoding, its offsets the text's
        data = ("\n" + text).encode("ascii")
        raws = [data[a:b] for a, b in (head.bounds() for head in heads)]
    else:
        raws = [head.span().encode("utf-8", "surrogatepass") for head in heads]
    make = blake2b_maker()
    out = []
    for head, raw in zip(heads, raws, strict=True):
        fingerprint = make(raw, digest_size=8).hexdigest()
        was = old.get(fingerprint)
        if was is not None and type(was[5]) is str and _text_or_none(was[6]):
            head._sentence, head._hash = was[5], was[6]
        out.append((head, _kept(head, fingerprint)))
    return out


def load_heads(vault: Path, cache: ScanCache) -> tuple[list[Head], list[Problem]]:
    """registry.load_heads, reading only the registry files that changed since the cache."""
    from vaultkeeper.model import ParseError, decode, read_regular
    from vaultkeeper.vault import rel

    heads: list[Head] = []
    problems: list[Problem] = []
    dates: dict[str, dt.date | None] = {}
    for path in registry_files(vault):
        rel_path = rel(vault, path)
        kept, key = cache.registry(rel_path, str(path))
        if kept is not None:
            try:
                heads.extend([CachedHead(path, rel_path, head, dates) for head in kept])
            except (TypeError, ValueError):
                pass  # not as this version keeps them: read the file
            else:
                cache.keep_registry(rel_path, key, kept)
                continue
        try:
            text = decode(read_regular(path))  # a FIFO named *.md is refused, not waited on
        except ParseError as exc:
            problems.append(Problem(rel_path, exc.line, exc.reason))
            continue
        parsed = _reused(path, rel_path, text, cache.registry_before(rel_path))
        heads.extend(head for head, _ in parsed)
        cache.keep_registry(rel_path, key, [kept for _, kept in parsed])
    return heads, problems
