"""Possible duplicates: live entries of one kind whose names and descriptions say the same.

An entry's words are its name and its description (a memory file's ``description``; a
registry block's first sentence), lowercased, split on anything not a letter or digit,
with a small stop list dropped and a light suffix stemming (``tests`` -> ``test``,
``patching`` -> ``patch``). Two entries of the same group (registry blocks together;
memory files of one project together) are possible duplicates when the Jaccard
similarity of their word sets, |A & B| / |A | B|, is at least ``config.DUP_MIN_JACCARD``.

No pair is compared blind. Within a group, words are ordered rarest first; two sets can
reach the threshold only if their first ``|A| - ceil(t|A|) + 1`` words share one (the
prefix filter of set-similarity joins), so only pairs sharing such a word are compared.
A word carried by more than ``max(DUP_COMMON_MIN, DUP_COMMON_SHARE x group size)``
entries of a group says nothing distinctive and brings in no pairs by itself (it still
counts in the similarity).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from itertools import chain, compress
from operator import not_
from typing import Any, NamedTuple

from vaultkeeper import config
from vaultkeeper.upkeep.dup_words import STOP_WORDS as STOP_WORDS  # the words, from dupwords
from vaultkeeper.upkeep.dup_words import Vocabulary, Words
from vaultkeeper.upkeep.dup_words import stem as stem
from vaultkeeper.upkeep.dup_words import words as words

BLOCK = "block"
MEMORY = "memory"


class _ItemFields(NamedTuple):
    group: str  # "block", or "memory:<project>"
    name: str
    path: str  # vault-relative
    line: int  # the ### heading of a block; 1 for a file
    text: str  # name and description, as written


class Item(_ItemFields):
    """One live entry as the pass sees it; ``group`` keeps kinds and projects apart.

    A named tuple: the scan makes one per entry, and a frozen dataclass costs several
    times more to build.
    """

    __slots__ = ()

    @property
    def kind(self) -> str:
        return self.group.split(":", 1)[0]


class _PairFields(NamedTuple):
    kind: str  # BLOCK | MEMORY
    a_name: str
    a_path: str
    a_line: int
    b_name: str
    b_path: str
    b_line: int
    similarity: float  # Jaccard, rounded to 2 places
    shared: tuple[str, ...]  # the words both carry, sorted


class DuplicatePair(_PairFields):
    """Two entries that may say the same thing; ``a`` comes first in the vault."""

    __slots__ = ()

    def target(self, side: str) -> str:
        """What `apply merge` takes: a block's name, a memory file's path."""
        name, path = (self.a_name, self.a_path) if side == "a" else (self.b_name, self.b_path)
        return name if self.kind == BLOCK else path

    def line_text(self) -> str:
        return (
            f"duplicate {self.target('a')} ~ {self.target('b')} -- {self.kind}s, "
            f"similarity {self.similarity:.2f} (shared: {' '.join(self.shared)}) -- "
            f"{self.a_path}:{self.a_line}, {self.b_path}:{self.b_line}"
        )

    def texts(self) -> list[str]:
        """Every text field (names, paths, shared words), for serving."""
        return [self.kind, self.a_name, self.a_path, self.b_name, self.b_path, *self.shared]

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "a": {"name": self.a_name, "path": self.a_path, "line": self.a_line},
            "b": {"name": self.b_name, "path": self.b_path, "line": self.b_line},
            "similarity": self.similarity,
            "shared": list(self.shared),
        }

    @classmethod
    def from_dict(cls, data: Any) -> DuplicatePair:
        a, b = data["a"], data["b"]
        return cls(
            kind=str(data["kind"]),
            a_name=str(a["name"]),
            a_path=str(a["path"]),
            a_line=int(a["line"]),
            b_name=str(b["name"]),
            b_path=str(b["path"]),
            b_line=int(b["line"]),
            similarity=float(data["similarity"]),
            shared=tuple(str(w) for w in data["shared"]),
        )


def capped(pairs: Sequence[DuplicatePair]) -> list[DuplicatePair]:
    """What the report lists of ``pairs``: for each entry its DUP_PAIRS_PER_ENTRY most
    similar pairs (a pair stays while both its entries have room), at most
    DUP_MAX_PAIRS in all, the most similar first kept; in their order. A hundred
    near-identical entries make 4,950 pairs, and a person reads only the first few."""
    if len(pairs) <= config.DUP_PAIRS_PER_ENTRY:
        return list(pairs)
    best = sorted(range(len(pairs)), key=lambda k: -pairs[k].similarity)  # stable: ties in order
    per_entry = config.DUP_PAIRS_PER_ENTRY
    taken: Counter[tuple[str, str]] = Counter()
    keep: list[int] = []
    for k in best:
        pair = pairs[k]
        a, b = (pair.a_path, pair.a_name), (pair.b_path, pair.b_name)
        if max(taken[a], taken[b]) < per_entry:
            taken[a] += 1
            taken[b] += 1
            keep.append(k)
            if len(keep) == config.DUP_MAX_PAIRS:
                break
    return [pairs[k] for k in sorted(keep)]


def similarity(a: frozenset[str], b: frozenset[str]) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def find_pairs(
    items: Sequence[Item], threshold: float = config.DUP_MIN_JACCARD
) -> list[DuplicatePair]:
    """Every pair of one group at or above ``threshold`` that shares an uncommon word."""
    return list(chain.from_iterable(pairs_by_group(items, threshold).values()))


def pairs_by_group(
    items: Sequence[Item], threshold: float = config.DUP_MIN_JACCARD
) -> dict[str, list[DuplicatePair]]:
    """``find_pairs``, group by group: every group of ``items`` in the order of its first
    entry, with its pairs (one pass over the words of all: a vocabulary learnt once)."""
    groups: dict[str, list[int]] = {}
    sets = Vocabulary().sets(item.text for item in items)
    for n, item in enumerate(items):
        members = groups.setdefault(item.group, [])
        if sets[n]:
            members.append(n)
    out: dict[str, list[DuplicatePair]] = {}
    for group, members in groups.items():
        found = out[group] = []
        if len(members) < 2:
            continue
        for i, j in _group_pairs([sets[n] for n in members], threshold):
            m, n = members[i], members[j]
            found.append(pair_of(items[m], items[n], sets[m], sets[n]))
    return out


def pair_of(a: Item, b: Item, words_a: Words, words_b: Words) -> DuplicatePair:
    """The pair of ``a`` and ``b`` (``a`` first in the vault), given their word sets."""
    wa, wb = set(words_a), set(words_b)
    return DuplicatePair(
        kind=a.kind,
        a_name=a.name,
        a_path=a.path,
        a_line=a.line,
        b_name=b.name,
        b_path=b.path,
        b_line=b.line,
        similarity=round(len(wa & wb) / len(wa | wb), 2),
        shared=tuple(sorted(wa & wb)),
    )


def common_limit(size: int) -> int:
    """A word carried by more entries than this, in a group of ``size``, is common."""
    return max(config.DUP_COMMON_MIN, int(config.DUP_COMMON_SHARE * size))


def _group_pairs(
    sets: list[Words], threshold: float, df: Counter[str] | None = None
) -> list[tuple[int, int]]:
    """The AllPairs join: sets in order of size, each probing the index with its prefix
    (|x| - ceil(t|x|) + 1 words, rarest first) and then indexing a shorter one
    (|x| - ceil(2t/(1+t) |x|) + 1), which is enough for the larger sets still to come.
    Every pair at or above ``t`` meets at its rarest shared word; a word carried by more
    than the common limit is neither indexed nor probed. Returns (i, j) with i < j;
    ``df``, each word's count of entries, if the caller has it."""
    df = Counter(chain.from_iterable(sets)) if df is None else df
    common = common_limit(len(sets))
    # Each uncommon word's place, rarest first. Common words never bring in a pair and
    # come after every uncommon one; a word of one entry only could pair nothing.
    uncommon = sorted([(n, w) for w, n in df.items() if 1 < n <= common])
    rank = {w: k for k, (_, w) in enumerate(uncommon)}
    sizes = list(map(len, sets))
    mid = 2 * threshold / (1 + threshold)
    index: dict[int, list[int]] = {}
    pairs: list[tuple[int, int]] = []
    ranked = set(rank)
    # only the sets with an uncommon word (picked by C calls alone), smallest first
    some = compress(range(len(sets)), map(not_, map(ranked.isdisjoint, sets)))
    for i in sorted(some, key=sizes.__getitem__):
        size = sizes[i]
        # the words of one entry only would come first; leaving them out probes (and
        # indexes) a few more words than needed, never fewer
        places = sorted(map(rank.__getitem__, ranked.intersection(sets[i])))
        least = threshold * size - 1e-9
        seen: set[int] = set()
        for r in places[: size - math.ceil(least) + 1]:
            found = index.get(r)
            if found is not None:
                seen.update(j for j in found if sizes[j] >= least)
        if seen:
            mine = set(sets[i])
            for j in seen:
                shared = len(mine.intersection(sets[j]))
                if shared >= threshold * (size + sizes[j] - shared) - 1e-9:
                    pairs.append((j, i) if j < i else (i, j))
        for r in places[: size - math.ceil(mid * size - 1e-9) + 1]:
            index.setdefault(r, []).append(i)
    return sorted(pairs)
