"""The duplicates pass of a big group redone for its changed entries only.

A registry of 25,000 blocks is one group: tokenising and joining all of it again because
one block's first sentence gained a word cost a scan about 250 ms. The pairs are exactly
those of a fresh ``find_pairs``: Jaccard >= t and a shared word carried by at most
``common_limit(n)`` entries of the group (n: the entries that have words). So this pass
keeps, per group, what it needs to redo only the part that changed:

- the texts cut into runs, after each text whose length is a multiple of ``CHUNK`` (so
  the cuts follow the texts: an entry added or removed moves none outside its own run),
  and each run's size and digest: the runs unchanged at both ends bound the one changed
  region;
- each entry's words that are not common (``EMPTY`` for an entry without words), a line
  each: the exact count of every such word, and who carries it;
- each common word with a lower bound of its count (its count when it was seen, less
  every entry with words that left since, plus those that came with it);
- n and the pairs, as (i, j) entry places.

When the region changes, its old lines leave and its new texts are tokenised. A common
word whose lower bound no longer clears the limit may have become uncommon, and pairs
between unchanged entries could appear through it: then the whole group is redone. A
word counted above the limit moves to the common ones. A kept pair outside the region
stays if one of its shared words is still uncommon; each new entry probes the lines for
the entries sharing an uncommon word with it, and each of those is checked on its words.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import chain, filterfalse

from vaultkeeper import config
from vaultkeeper.duplicates import DuplicatePair, Item, _group_pairs, common_limit, pair_of
from vaultkeeper.dupwords import Vocabulary, Words

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

CHUNK = 16  # texts per digested run: a changed entry costs at most two runs of tokenising
_LONGEST = 8  # texts without a cut: one after this many runs' worth anyway
_MOST = 8  # a region over 1/_MOST of the group (and over four runs) is redone whole
EMPTY = "."  # the line of an entry without words (no word is "."; "" is all-common)


@dataclass(frozen=True)
class Found:
    pairs: list[DuplicatePair]
    state: dict[str, Any]  # what the next pass over this group starts from (JSON)
    redone: bool  # whether every entry was tokenised (no usable state, or too much changed)


def group_pairs(
    items: Sequence[Item], kept: Any, threshold: float = config.DUP_MIN_JACCARD
) -> Found:
    """``find_pairs(items)`` for the items of one group, from ``kept`` (a state this
    function returned before, or anything else: then from scratch)."""
    texts = [item.text for item in items]
    runs = _runs(texts)
    found = _update(items, texts, runs, kept, threshold)
    return found if found is not None else _redo(items, texts, runs, threshold)


Runs = tuple[list[str], list[int]]  # each run's digest, and its count of texts


def _runs(texts: list[str]) -> Runs:
    import hashlib

    mark = ""
    if "\x1f".join(texts).count("\x1f") != max(len(texts) - 1, 0):
        # a text holds the separator: each text prefixed with its length, and the runs
        # marked so that none reads the same as a run of plain texts
        mark, texts = "\x1f", [f"{len(t)}:{t}" for t in texts]
    cuts = [k + 1 for k, n in enumerate(map(len, texts)) if not n % CHUNK]
    bounds, last = [0], 0
    for cut in [*cuts, len(texts)]:
        while cut - last > _LONGEST * CHUNK:  # no cut for long: one at a fixed length
            last += _LONGEST * CHUNK
            bounds.append(last)
        if cut > last:
            bounds.append(cut)
            last = cut
    digests = [
        hashlib.blake2b(
            (mark + "\x1f".join(texts[a:b])).encode("utf-8", "surrogatepass"), digest_size=12
        ).hexdigest()
        for a, b in zip(bounds, bounds[1:], strict=False)
    ]
    return digests, [b - a for a, b in zip(bounds, bounds[1:], strict=False)]


def _redo(items: Sequence[Item], texts: list[str], runs: Runs, threshold: float) -> Found:
    sets = Vocabulary().sets(texts)
    members = [n for n, found in enumerate(sets) if found]
    df = Counter(chain.from_iterable(sets))
    pairs: list[tuple[int, int]] = []
    if len(members) >= 2:
        joined = _group_pairs([sets[n] for n in members], threshold, df)
        pairs = [(members[i], members[j]) for i, j in joined]
    limit = common_limit(len(members))
    common = {w: n for w, n in df.items() if n > limit}
    lines = [" ".join(filterfalse(common.__contains__, s)) if s else EMPTY for s in sets]
    raw = "\n".join(lines)
    return _found(items, sets.__getitem__, pairs, runs, raw, common, len(members), True)


def _found(
    items: Sequence[Item],
    words_of: Any,
    pairs: list[tuple[int, int]],
    runs: Runs,
    raw: str,
    common: dict[str, int],
    size: int,
    redone: bool,
) -> Found:
    pairs.sort()
    found = [pair_of(items[i], items[j], words_of(i), words_of(j)) for i, j in pairs]
    state = {
        "chunk": CHUNK,
        "entries": sum(runs[1]),
        "runs": runs[0],
        "sizes": runs[1],
        "lines": raw,
        "common": common,
        "n": size,
        "pairs": [list(pair) for pair in pairs],
    }
    return Found(found, state, redone)


def _read(kept: Any) -> tuple[Runs, list[str], dict[str, int], int, list[Any]]:
    """The parts of a kept state; ValueError if it is not one this module wrote."""
    if type(kept) is not dict or kept.get("chunk") != CHUNK:
        raise ValueError("not a state")
    digests, sizes = kept["runs"], kept["sizes"]
    raw, common = kept["lines"], kept["common"]
    size, entries, pairs = kept["n"], kept["entries"], kept["pairs"]
    if not (type(raw) is str and type(common) is dict and type(pairs) is list):
        raise ValueError("not a state")
    if not (type(size) is int and type(entries) is int and type(digests) is list):
        raise ValueError("not a state")
    if type(sizes) is not list or len(sizes) != len(digests) or sum(sizes) != entries:
        raise ValueError("not a state")  # (sum: a non-number raises TypeError)
    lines = raw.split("\n") if entries else []
    if len(lines) != entries or not all(type(n) is int for n in common.values()):
        raise ValueError("not a state")
    for pair in pairs:
        if not (type(pair) is list and len(pair) == 2 and all(type(k) is int for k in pair)):
            raise ValueError("not a state")
        if not 0 <= pair[0] < pair[1] < entries:
            raise ValueError("not a state")
    return (digests, sizes), lines, dict(common), size, pairs


def _update(
    items: Sequence[Item],
    texts: list[str],
    runs: Runs,
    kept: Any,
    threshold: float,
) -> Found | None:
    try:
        (digests, sizes), lines, common, size, old_pairs = _read(kept)
    except (KeyError, TypeError, ValueError):
        return None
    same = _same_runs(digests, runs[0])
    start = sum(sizes[:same])
    # the same runs at the end, none of them counted twice
    most = min(len(digests), len(runs[0])) - same
    end = sum(runs[1][len(runs[1]) - _same_runs(digests[::-1], runs[0][::-1], most) :])
    old_stop, stop = len(lines) - end, len(texts) - end
    if (old_stop - start) + (stop - start) > max(4 * CHUNK, len(texts) // _MOST):
        return None  # so much changed that redoing it all costs less
    added = Vocabulary().sets(texts[start:stop])
    left = sum(1 for line in lines[start:old_stop] if line != EMPTY)
    size += sum(1 for found in added if found) - left
    limit = common_limit(size)
    came = Counter(chain.from_iterable(added))
    for w in common:
        common[w] += came[w] - left  # every entry with words that left may have held w
        if common[w] <= limit:
            return None  # w may be uncommon now: pairs between unchanged entries may appear
    lines[start:old_stop] = [
        " ".join(filterfalse(common.__contains__, s)) if s else EMPTY for s in added
    ]
    raw = "\n".join(lines)
    df = Counter(raw.split())
    df.pop(EMPTY, None)
    moved = {w for w, n in df.items() if n > limit}
    if moved:
        common.update((w, df.pop(w)) for w in moved)
        lines = [
            line if line == EMPTY else " ".join(filterfalse(moved.__contains__, line.split()))
            for line in lines
        ]
        raw = "\n".join(lines)
    region = (start, old_stop, stop)
    pairs, words = _pairs_after(texts, region, added, raw, df, old_pairs, threshold)
    return _found(items, words.__getitem__, pairs, runs, raw, common, size, False)


def _pairs_after(
    texts: list[str],
    region: tuple[int, int, int],
    added: list[Words],
    raw: str,
    df: Counter[str],
    old_pairs: list[Any],
    threshold: float,
) -> tuple[list[tuple[int, int]], dict[int, Words]]:
    """The pairs once the region ``start:old_stop`` became ``start:stop`` (its words
    ``added``), given the entries' lines ``raw`` and each word's count ``df`` there (no
    common word); and the words of their entries."""
    start, old_stop, stop = region
    words: dict[int, Words] = {start + k: found for k, found in enumerate(added)}
    kept = [
        (i if i < start else i + stop - old_stop, j if j < start else j + stop - old_stop)
        for i, j in old_pairs
        if not (start <= i < old_stop or start <= j < old_stop)
    ]
    # an added entry's uncommon words, and every entry carrying one of them
    probes = {start + k: [w for w in found if df[w] > 1] for k, found in enumerate(added)}
    wanted = set(chain.from_iterable(probes.values()))
    carriers: dict[str, list[int]] = {}
    if wanted:  # one search of the lines (a word each, whole), not a split of each line
        import re

        alone = "(?<![^ \n])(?:" + "|".join(map(re.escape, wanted)) + ")(?![^ \n])"
        line, last = 0, 0
        for found in re.finditer(alone, raw):
            line += raw.count("\n", last, found.start())
            last = found.start()
            carriers.setdefault(found.group(), []).append(line)
    candidates = {
        (min(r, n), max(r, n))
        for r, mine in probes.items()
        for w in mine
        for n in carriers[w]
        if n != r
    }
    need = sorted({k for pair in chain(kept, candidates) for k in pair if k not in words})
    words.update(zip(need, Vocabulary().sets([texts[k] for k in need]), strict=True))
    pairs = [(i, j) for i, j in kept if any(df[w] > 1 for w in set(words[i]) & set(words[j]))]
    pairs += [(i, j) for i, j in candidates if _similar(words[i], words[j], threshold)]
    return pairs, words


def _similar(a: Words, b: Words, threshold: float) -> bool:
    """Jaccard at or above ``threshold``, reckoned as the join reckons it."""
    shared = len(set(a).intersection(b))
    return shared >= threshold * (len(a) + len(b) - shared) - 1e-9


def _same_runs(old: list[Any], new: list[str], most: int | None = None) -> int:
    """How many runs the two lists of digests start with alike (at most ``most``)."""
    same = 0
    for a, b in zip(old, new, strict=False):
        if a != b or same == most:
            break
        same += 1
    return same
