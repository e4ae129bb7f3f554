"""Where a big duplicates group changed, and who in it carries a word (for upkeep/dup_delta.py).

Each entry's text has a digest (blake2b, 8 bytes: two different texts read the same
once in 2**64); the digests of a group, concatenated, are compared with those kept:
the entries alike at the start and at the end leave one changed region between them,
found in a few comparisons of whole byte strings (a binary search), not one per entry.

``carriers`` answers, exactly, which entries carry a word without tokenising them all:
every raw form of a normalised word starts with the word less its last letter (the
stemmer only cuts endings, and turns ``-ies`` into ``-y``), so only the texts holding
that prefix, lowercased, are tokenised.
"""

from __future__ import annotations

import re
from bisect import bisect
from collections.abc import Callable, Iterable
from hashlib import blake2b

from vaultkeeper.upkeep.dup_words import Vocabulary

DIGEST = 8  # bytes of an entry's digest


def digests(texts: list[str]) -> bytes:
    """Each text's digest, in order, concatenated."""

    return b"".join(
        [blake2b(t.encode("utf-8", "surrogatepass"), digest_size=DIGEST).digest() for t in texts]
    )


def whole(texts: list[str]) -> str | None:
    """One digest of a group's texts in order, when the separator between them is in
    none of them (else None: two lists could then join alike)."""
    joined = "\x1f".join(texts)
    if joined.count("\x1f") != len(texts) - 1:
        return None

    data = joined.encode("utf-8", "surrogatepass")
    return f"{len(texts)}:" + blake2b(data, digest_size=16).hexdigest()


def region(old: bytes, new: bytes) -> tuple[int, int, int]:
    """``(start, old_stop, stop)``: entries ``start:old_stop`` of the old list became
    ``start:stop`` of the new one; those before and after are the same texts."""
    count_old, count_new = len(old) // DIGEST, len(new) // DIGEST
    start = _alike(count_old, count_new, lambda n: old[: n * DIGEST] == new[: n * DIGEST])
    most = min(count_old, count_new) - start
    end = _alike(most, most, lambda n: old[len(old) - n * DIGEST :] == new[len(new) - n * DIGEST :])
    return start, count_old - end, count_new - end


def _alike(a: int, b: int, same: Callable[[int], bool]) -> int:
    """The largest n <= min(a, b) for which ``same(n)`` (true up to some n, false after)."""
    low, high = 0, min(a, b)
    while low < high:
        mid = (low + high + 1) // 2
        if same(mid):
            low = mid
        else:
            high = mid - 1
    return low


def carriers(texts: list[str], words: Iterable[str]) -> dict[str, list[int]] | None:
    """Each word's entries (the places in ``texts`` whose word sets hold it); None if a
    text holds the separator (then the places cannot be told apart this way)."""

    joined = "\x01".join(texts)
    if joined.count("\x01") != max(len(texts) - 1, 0):
        return None
    lowered = joined.lower()  # as the tokenizer lowers; it keeps every separator
    cuts = [found.start() for found in re.finditer("\x01", lowered)]
    places: dict[str, set[int]] = {}
    for word in words:
        prefix = word[:-1] or word
        places[word] = {bisect(cuts, at.start()) for at in re.finditer(re.escape(prefix), lowered)}
    order = sorted(set().union(*places.values()))
    found = dict(zip(order, Vocabulary().sets([texts[k] for k in order]), strict=True))
    return {w: sorted(k for k in ks if w in found[k]) for w, ks in places.items()}
