"""The duplicates pass of a big group redone for its changed entries only.

A registry of 25,000 blocks is one group: tokenising and joining all of it again because
one block's first sentence gained a word cost a scan about 250 ms. The pairs are exactly
those of a fresh ``find_pairs``: Jaccard >= t and a shared word carried by at most
``common_limit(n)`` entries of the group (n: the entries that have words). So this pass
keeps, per group, what it needs to redo only the part that changed:

- each entry's text digest (upkeep/dup_region.py): the entries alike at both ends bound the one
  region that changed;
- each entry's words that are not common (``EMPTY`` for an entry without words), a line
  each: the exact count of every such word, and who carries it;
- each common word with a lower bound of its count (its count when it was counted, less
  every entry with words that left since, plus those that came with it);
- n and the pairs, as (i, j) entry places.

When the region changes, its old lines leave and its new texts are tokenised. A common
word whose lower bound no longer clears the limit is counted again, exactly (only the
texts that could hold it are tokenised); if it has become uncommon, pairs between
unchanged entries could appear through it, and the whole group is redone. A word
counted above the limit moves to the common ones. A kept pair outside the region
stays if one of its shared words is still uncommon; each new entry probes the lines for
the entries sharing an uncommon word with it, and each of those is checked on its words.
"""

from __future__ import annotations

from base64 import b64decode  # only for a kept state; its Error is a ValueError
from binascii import b2a_base64
from collections import Counter
from collections.abc import Callable
from itertools import chain, filterfalse
from typing import Any, NamedTuple

from vaultkeeper import config
from vaultkeeper.upkeep import dup_region as dupregion
from vaultkeeper.upkeep.dup_words import Vocabulary, Words
from vaultkeeper.upkeep.duplicates import DuplicatePair, Item, _group_pairs, common_limit, pair_of

_MOST = 8  # a region over 1/_MOST of the group (and over _FEW entries) is redone whole
_FEW = 64
FORMAT = 1  # of the state kept
EMPTY = "."  # the line of an entry without words (no word is "."; "" is all-common)


class Found(NamedTuple):
    pairs: list[DuplicatePair]
    state: dict[str, Any]  # what the next pass over this group starts from (JSON)
    redone: bool  # whether every entry was tokenised (no usable state, or too much changed)


def group_pairs(
    texts: list[str],
    item_at: Callable[[int], Item],
    kept: Any,
    threshold: float = config.DUP_MIN_JACCARD,
) -> Found:
    """``find_pairs`` of one group's items, given their texts (``item_at(k)`` builds the
    k-th item, for the pairs only), from ``kept`` (a state this function returned before,
    or anything else: then from scratch)."""
    whole = dupregion.whole(texts)
    if whole is not None and type(kept) is dict and kept.get("whole") == whole:
        same = _same(item_at, texts, kept)  # one digest said it: not one per entry
        if same is not None:
            return same
    digests = dupregion.digests(texts)
    found = _update(item_at, texts, digests, kept, threshold, whole)
    return found if found is not None else _redo(item_at, texts, digests, threshold, whole)


def _same(item_at: Callable[[int], Item], texts: list[str], kept: dict[str, Any]) -> Found | None:
    """The kept pairs of the same texts, of the items as they are (lines may move); None
    if the state is not one this module wrote (it is kept again as it is)."""
    try:
        pairs = _read(kept)[4]
    except (KeyError, TypeError, ValueError):
        return None
    if kept["entries"] != len(texts):
        return None
    need = sorted({k for pair in pairs for k in pair})
    words = dict(zip(need, Vocabulary().sets([texts[k] for k in need]), strict=True))
    found = [pair_of(item_at(i), item_at(j), words[i], words[j]) for i, j in pairs]
    return Found(found, kept, False)


def _redo(
    item_at: Callable[[int], Item],
    texts: list[str],
    digests: bytes,
    threshold: float,
    whole: str | None,
) -> Found:
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
    state = _found(item_at, sets.__getitem__, pairs, digests, raw, common, len(members), True)
    state.state["whole"] = whole
    return state


def _found(
    item_at: Callable[[int], Item],
    words_of: Callable[[int], Words],
    pairs: list[tuple[int, int]],
    digests: bytes,
    raw: str,
    common: dict[str, int],
    size: int,
    redone: bool,
) -> Found:
    pairs.sort()
    found = [pair_of(item_at(i), item_at(j), words_of(i), words_of(j)) for i, j in pairs]
    state = {
        "format": FORMAT,
        "entries": len(digests) // dupregion.DIGEST,
        "digests": b2a_base64(digests, newline=False).decode("ascii"),
        "lines": raw,
        "common": common,
        "n": size,
        "pairs": [list(pair) for pair in pairs],
    }
    return Found(found, state, redone)


def _read(kept: Any) -> tuple[bytes, list[str], dict[str, int], int, list[Any]]:
    """The parts of a kept state; ValueError if it is not one this module wrote."""
    if type(kept) is not dict or kept.get("format") != FORMAT:
        raise ValueError("not a state")

    digests = b64decode(kept["digests"], validate=True)
    raw, common = kept["lines"], kept["common"]
    size, entries, pairs = kept["n"], kept["entries"], kept["pairs"]
    if not (type(raw) is str and type(common) is dict and type(pairs) is list):
        raise ValueError("not a state")
    if not (type(size) is int and type(entries) is int):
        raise ValueError("not a state")
    if len(digests) != entries * dupregion.DIGEST:
        raise ValueError("not a state")
    lines = raw.split("\n") if entries else []
    if len(lines) != entries or not all(type(n) is int for n in common.values()):
        raise ValueError("not a state")
    for pair in pairs:
        if not (type(pair) is list and len(pair) == 2 and all(type(k) is int for k in pair)):
            raise ValueError("not a state")
        if not 0 <= pair[0] < pair[1] < entries:
            raise ValueError("not a state")
    return digests, lines, dict(common), size, pairs


def _update(
    item_at: Callable[[int], Item],
    texts: list[str],
    digests: bytes,
    kept: Any,
    threshold: float,
    whole: str | None,
) -> Found | None:
    try:
        old_digests, lines, common, size, old_pairs = _read(kept)
    except (KeyError, TypeError, ValueError):
        return None
    start, old_stop, stop = dupregion.region(old_digests, digests)
    if start == old_stop == stop:  # the same texts (kept without their whole digest)
        same = _same(item_at, texts, kept)
        return None if same is None else Found(same.pairs, {**kept, "whole": whole}, False)
    if (old_stop - start) + (stop - start) > max(_FEW, len(texts) // _MOST):
        return None  # so much changed that redoing it all costs less
    added = Vocabulary().sets(texts[start:stop])
    left = sum(1 for line in lines[start:old_stop] if line != EMPTY)
    size += sum(1 for found in added if found) - left
    limit = common_limit(size)
    came = Counter(chain.from_iterable(added))
    for w in common:
        common[w] += came[w] - left  # every entry with words that left may have held w
    doubtful = [w for w, n in common.items() if n <= limit]
    if doubtful:
        counted = dupregion.carriers(texts, doubtful)
        if counted is None:
            return None
        common.update((w, len(ks)) for w, ks in counted.items())
        if any(len(ks) <= limit for ks in counted.values()):
            return None  # uncommon now: pairs between unchanged entries may appear
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
    found = _found(item_at, words.__getitem__, pairs, digests, raw, common, size, False)
    found.state["whole"] = whole
    return found


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
