"""A changed registry file read again only where it changed.

A session moves a count or two, but a registry is often one file of thousands of
blocks: parsing all of it again cost a session-end scan more than anything else it
read. The scan's row of each registry file (scan/cache.py) keeps the digests of its
text's pages (``PAGE`` characters, counted from the start and, separately, from the
end) and, per block, where it is. The pages alike at both ends bound the one region that changed
(``region``); then:

- the blocks that end before that region are as they were (the text up to them is);
- the blocks after it are as they were, moved, if reading the region left no fence
  open (its text to the end is the same, and so is how it is read);
- the blocks between are parsed, each taking its first sentence and hash from the
  cache when its own text is as it was (a 64-bit BLAKE2b fingerprint of it).

Anything kept that is not as this module writes it makes the whole file parsed again;
so does a region that leaves a fence open. The result is always what parsing the whole
file gives (a property test compares the two after random edits).

``load_heads`` gives a scan every registry file's block heads: from the scan's rows
where a file is unchanged, read again here where it changed, and kept for the next.
"""

from __future__ import annotations

from hashlib import blake2b as make
from typing import TYPE_CHECKING, Any

from vaultkeeper.registry.blocks import BlockHead, build_heads, parse_heads
from vaultkeeper.registry.keptheads import FIELDS, CachedHead, kept_of, text_or_none
from vaultkeeper.registry.lines import body_start, index_range, registry_files
from vaultkeeper.store.model import Problem, outside_problems

if TYPE_CHECKING:
    import datetime as dt
    from pathlib import Path

    from vaultkeeper.registry.keptheads import Head

    Kept = list[Any]  # one block as keptheads.kept_of writes it

PAGE = 4096  # characters a page digest covers


def shape_of(text: str) -> list[Any]:
    """``[length, forward page digests, backward page digests]`` of a file's text: the
    full pages from its start, and from its end."""

    def digest(chunk: str) -> str:
        return str(make(chunk.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest())

    size = len(text)
    full = size // PAGE
    forward = [digest(text[k * PAGE : (k + 1) * PAGE]) for k in range(full)]
    backward = [digest(text[size - (k + 1) * PAGE : size - k * PAGE]) for k in range(full)]
    return [size, forward, backward]


def region(old: list[Any], new: list[Any]) -> tuple[int, int, int]:
    """``(start, old_end, new_end)``: the old text's ``start:old_end`` became the new
    one's ``start:new_end``; what comes before and after is the same in both."""
    old_size, old_forward, old_backward = old
    size, forward, backward = new
    same = 0
    for a, b in zip(old_forward, forward, strict=False):
        if a != b:
            break
        same += 1
    start = same * PAGE
    same = 0
    for a, b in zip(old_backward, backward, strict=False):
        if a != b or min(old_size, size) - (same + 1) * PAGE < start:
            break
        same += 1
    return start, old_size - same * PAGE, size - same * PAGE


def _valid(kept: Any, shape: Any) -> bool:
    if not (type(kept) is list and type(shape) is list and len(shape) == 3):
        return False
    size, forward, backward = shape
    if not (type(size) is int and type(forward) is list and type(backward) is list):
        return False
    if not all(type(d) is str for d in (*forward, *backward)):
        return False
    last = 0
    for head in kept:
        if not (type(head) is list and len(head) == FIELDS):
            return False
        start, stop = head[9], head[10]
        if not (type(start) is int and type(stop) is int and last <= start < stop <= size + 1):
            return False
        last = stop
    return True


def reread(
    path: Path, rel_path: str, text: str, before: Any, dates: dict[str, dt.date | None]
) -> tuple[list[Head], list[Kept], list[Any]]:
    """A changed registry file's blocks, what the cache keeps of each, and its shape;
    ``before``: what the cache kept of the file, (blocks, shape), or None."""
    shape = shape_of(text)
    old: list[Kept] = []
    if before is not None and _valid(*before):
        old = before[0]
        try:
            done = _partial(path, rel_path, text, old, region(before[1], shape), dates)
        except (TypeError, ValueError):  # a kept block CachedHead refuses
            done = None
        if done is not None:
            return done[0], done[1], shape
    heads = parse_heads(path, rel_path, text)
    kept = _fingerprinted(heads, text, _by_print(old))
    return list(heads), kept, shape


def _partial(
    path: Path,
    rel_path: str,
    text: str,
    old: list[Kept],
    changed: tuple[int, int, int],
    dates: dict[str, dt.date | None],
) -> tuple[list[Head], list[Kept]] | None:
    """The blocks when only ``changed`` (see region) is read again, or None when that
    cannot be told apart from the rest (a fence left open)."""
    start, old_end, new_end = changed
    shift = new_end - old_end
    nl_text = "\n" + text  # the offsets kept: index i is the text's i - 1
    # blocks whose text lies before the change; the last of them is read again, so that
    # the heading ending the one before it is in the unchanged text too
    before = 0
    while before < len(old) and old[before][10] <= start + 1:
        before += 1
    before = max(before - 1, 0)
    body = body_start(text)
    if before and old[0][9] - 1 < body:
        return None  # a frontmatter closed only now, past the blocks kept: read it all
    begin = old[before][9] - 1 if before else body
    # blocks whose heading line and the "\n" before it lie after the change
    after = before
    while after < len(old) and old[after][9] - 1 < old_end + 1:
        after += 1
    end = old[after][9] - 1 + shift if after < len(old) else len(nl_text)
    if end < begin:
        return None
    found, counters, fence_open = index_range(nl_text, begin, end)
    if fence_open and after < len(old):
        return None  # the blocks after may be fenced code now: read them all
    last = end + 1 if after < len(old) else end  # the next heading's line, or the end
    middle = build_heads(path, rel_path, nl_text, found, counters, last, dates)
    heads: list[Head] = [CachedHead(path, rel_path, kept, dates) for kept in old[:before]]
    kept = old[:before] + _fingerprinted(middle, text, _by_print(old))
    heads += middle
    if after < len(old):
        moved = nl_text.count("\n", 0, old[after][9] + shift) - old[after][1]
        for head in old[after:]:
            again = [*head[:9], head[9] + shift, head[10] + shift]
            again[1] += moved
            problems = head[7]
            if problems:  # a problem's line moves with its block
                if type(problems) is not list or not all(
                    type(p) is list and len(p) == 2 for p in problems
                ):
                    raise TypeError("not a kept block problem")
                again[7] = [[p[0] + moved if type(p[0]) is int else p[0], p[1]] for p in problems]
            heads.append(CachedHead(path, rel_path, again, dates))
            kept.append(again)
    return heads, kept


def _by_print(old: list[Kept]) -> dict[str, Kept]:
    return {head[8]: head for head in old if type(head[8]) is str}


def _fingerprinted(heads: list[BlockHead], text: str, old: dict[str, Kept]) -> list[Kept]:
    """What the cache keeps of each block just parsed; a block whose text is as it was
    takes its first sentence and hash from ``old`` instead of working them out."""

    if text.isascii():  # the common case: one encoding, its offsets the text's
        data = ("\n" + text).encode("ascii")
        raws = [data[slice(*head.bounds())] for head in heads]
    else:
        raws = [head.span().encode("utf-8", "surrogatepass") for head in heads]
    out = []
    for head, raw in zip(heads, raws, strict=True):
        fingerprint = make(raw, digest_size=8).hexdigest()
        was = old.get(fingerprint)
        if was is not None and type(was[5]) is str and text_or_none(was[6]):
            head._sentence, head._hash = was[5], was[6]
        out.append(kept_of(head, fingerprint))
    return out


if TYPE_CHECKING:
    from vaultkeeper.scan.cache import ScanCache


def load_heads(vault: Path, cache: ScanCache) -> tuple[list[Head], list[Problem]]:
    """registry.load_heads, reading only the registry files that changed since the cache."""
    from vaultkeeper.store.model import ParseError, decode, read_regular
    from vaultkeeper.store.vault import rel

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
                cache.keep_registry_entry(rel_path, entry)
                continue
        try:
            raw = read_regular(path)  # a FIFO named *.md is refused, not waited on
            text = decode(raw)
        except ParseError as exc:
            problems.append(Problem(rel_path, exc.line, exc.reason))
            continue
        found, kept, shape = reread(path, rel_path, text, cache.registry_before(rel_path), dates)
        heads.extend(found)
        cache.keep_registry(rel_path, key, kept, shape, raw)
    problems.extend(outside_problems(vault, outside))  # symlinks out: never read
    return heads, problems
