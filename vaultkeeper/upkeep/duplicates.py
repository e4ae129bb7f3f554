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

The scan runs the pass from its rows wherever it can (``cached_pairs``), and a big group
(the registry) only for its changed entries (``group_pairs``); the pairs are always
exactly those ``find_pairs`` gives.
"""

from __future__ import annotations

import json
import math
import re
from base64 import b64decode  # only for a kept state; its Error is a ValueError
from binascii import b2a_base64
from bisect import bisect
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from hashlib import blake2b
from itertools import chain, compress, filterfalse
from operator import not_
from typing import TYPE_CHECKING, Any, NamedTuple

from vaultkeeper import config

if TYPE_CHECKING:
    from vaultkeeper.registry.keptheads import Head
    from vaultkeeper.scan.cache import ScanCache
    from vaultkeeper.upkeep.decay import MemoryFacts


# -- an entry's words ----------------------------------------------------------------------
#
# An entry's words, as the duplicates pass compares them.
#
# Its name and its description, lowercased, split on anything not a letter or digit,
# with a small stop list dropped and a light suffix stemming (``tests`` -> ``test``,
# ``patching`` -> ``patch``). A pass over 50,000 entries works on all their texts at
# once (``Vocabulary``), so that no Python code runs per word.

_WORD = re.compile(r"[a-z0-9]+")
# fmt: off
STOP_WORDS = frozenset((
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "for", "with", "by", "at", "from",
    "as", "is", "are", "was", "be", "been", "it", "its", "this", "that", "these", "those",
    "into", "onto", "than", "then", "so", "via", "per",
))
# fmt: on
_STOP_BYTES = frozenset(w.encode() for w in STOP_WORDS)


# Light suffix stemming, applied to many words at once (one per line) by three regex
# passes: -ies -> -y (5+ letters); a plural -s cut (4+, not -ss/-us/-is); then -ing (6+)
# and -ed (5+) cut. So "settings", "setting" and "set" stay apart but the first two meet.
_IES = re.compile(r"^([a-z0-9]{2,})ies$", re.M)
_PLURAL = re.compile(r"^([a-z0-9]{2,}[a-hj-rtv-z0-9])s$", re.M)
_ING_ED = re.compile(r"^([a-z0-9]{3,})(?:ing|ed)$", re.M)
_CUT = re.compile(r"^[a-z0-9]*(?:s|ed|ing)$", re.M)  # a word ending otherwise is its own stem


def _stem_lines(text: str) -> str:
    return _ING_ED.sub(r"\1", _PLURAL.sub(r"\1", _IES.sub(r"\1y", text)))


def stem(word: str) -> str:
    """``tests`` -> ``test``, ``patching`` -> ``patch``, ``retries`` -> ``retry``."""
    return _stem_lines(word)


_SEP = "\x01"  # between two texts of a pass; no word holds it
_GAP = " \x01 "  # the separator as a word of its own
# One entry's distinct words: a tuple, not a set (a 50,000-entry vault's sets alone took
# about 35 MiB); a set is built only for an entry that has a word worth probing.
Words = tuple[str, ...]
_BATCH = 2048  # texts tokenised at once: big enough for C-speed calls, small in memory
# ASCII byte -> itself lowercased if a letter or digit, the separator kept, else a blank
# fmt: off
_BYTES = bytes(
    c + 32 if 65 <= c <= 90 else c if 48 <= c <= 57 or 97 <= c <= 122 or c == 1 else 32
    for c in range(256)
)
# fmt: on


def _plain(text: str) -> str:
    """A text's words, space-separated, in ASCII: for a text that is not ASCII (lowered
    as a whole first: a few non-ASCII letters lowercase to ASCII ones, the Kelvin sign
    to ``k``) or that holds the separator."""
    return " ".join(_WORD.findall(text.lower()))


class Vocabulary:
    """Raw word -> its normalised form ("" for a stop word), worked out once per word.

    A whole pass is tokenised at once: the texts joined, encoded to ASCII bytes, one
    translate (lowercase, every other byte a blank) and one split, one map through the
    table, joined again and split back per text, so no Python code runs per word and
    only two C calls per text (split, set). The distinct new words are stemmed together.
    """

    def __init__(self) -> None:
        self.norms: dict[bytes, str] = {_SEP.encode(): _SEP}

    def sets(self, texts: Iterable[str]) -> list[Words]:
        """Each text's normalised word set, worked out a batch of texts at a time (one
        batch of 50,000 entries made the joined text and its token list the scan's peak
        memory, about 100 MiB on top of the rest)."""
        texts = list(texts)
        out: list[Words] = []
        for start in range(0, len(texts), _BATCH):
            out += self._sets(texts[start : start + _BATCH])
        return out

    def _sets(self, texts: list[str]) -> list[Words]:
        if not texts:
            return []
        joined = _GAP.join(texts)
        if not joined.isascii() or joined.count(_SEP) != len(texts) - 1:
            joined = _GAP.join([t if t.isascii() and _SEP not in t else _plain(t) for t in texts])
        tokens = joined.encode("ascii").translate(_BYTES).split()
        norms = self.norms
        new = set(tokens).difference(norms)
        if new:
            self._learn(new)
        # stop words map to "", which split() drops; each text's words, space-separated
        chunks = " ".join(map(norms.__getitem__, tokens)).split(_SEP)
        return [tuple(set(chunk.split())) for chunk in chunks]

    def _learn(self, new: set[bytes]) -> None:
        raw = list(new)
        forms = b" ".join(raw).decode("ascii").split(" ")  # C calls, none per word
        self.norms.update(zip(raw, forms, strict=True))
        # only words with a suffix the stemmer cuts go through it (names such as b123 don't)
        cut = _CUT.findall("\n".join(forms))
        if cut:  # "".split("\n") would give one empty word
            stems = _stem_lines("\n".join(cut)).split("\n")
            self.norms.update(zip([w.encode("ascii") for w in cut], stems, strict=True))
        self.norms.update((w, "") for w in _STOP_BYTES.intersection(new))


def words(text: str) -> frozenset[str]:
    """The normalised word set of ``text`` (see the module docstring)."""
    return frozenset(Vocabulary().sets([text])[0])


# -- the pairs of one pass -----------------------------------------------------------------

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


# -- the pass as a scan runs it ------------------------------------------------------------
#
# The duplicates pass as a scan runs it: from the scan cache wherever it can be.
#
# A group's pairs are kept (vaultkeeper.scan.cache) under a digest of its entries; a
# project none of whose memory files changed keeps its pairs without its entries being
# built; a big group (the registry) is redone for its changed entries only (``group_pairs`` below).
# Whatever is kept, the pairs are exactly those ``find_pairs`` gives (tests compare).


def duplicate_items(heads: Iterable[Head], facts: Iterable[MemoryFacts]) -> list[Item]:
    """Registry blocks (one group) and live memory files (a group per project), each
    group's entries together, groups in the order of their first entry."""
    items = [Item(BLOCK, h.name, h.rel, h.line, f"{h.name} {h.sentence()}") for h in heads]
    for group in project_items(facts, None).values():
        items += group or ()
    return items


def project_items(
    facts: Iterable[MemoryFacts], touched: set[str] | None, only: set[str] | None = None
) -> dict[str, list[Item] | None]:
    """Each project's group, in the order of its first live entry, with its items; None
    instead for a project not in ``touched`` (None: all are), whose items are not built.
    With ``only``, just those groups. The walk gives facts project by project, so the
    project is worked out again only where it changes."""
    out: dict[str, list[Item] | None] = {}
    prefix, group = "", ""
    bucket: list[Item] | None = None
    for f in facts:
        if not prefix or not f.rel.startswith(prefix):  # the next project
            project = f.rel.split("/", 2)[1]
            prefix, group = f"{config.PROJECTS_DIR}/{project}/", f"{MEMORY}:{project}"
            wanted = (touched is None or project in touched) and (only is None or group in only)
            bucket = out.get(group, [] if wanted else None)  # a project met again: its list
        if f.status == "archived":
            continue  # archived (or superseded) lessons are not served: nothing to merge
        if group not in out and (only is None or group in only):
            out[group] = bucket
        if bucket is not None:
            bucket.append(Item(group, f.name, f.rel, 1, f"{f.name} {f.description}"))
    return out


def cached_pairs(
    heads: Sequence[Head], facts: Sequence[MemoryFacts], cache: ScanCache
) -> list[DuplicatePair]:
    """find_pairs of the scan's items, group by group, or the pairs kept for a group
    whose entries and settings are exactly as they were: when no file changed, without
    even building the items. Pairs never cross groups, so a group's pairs are its own."""
    settings = f"{config.DUP_MIN_JACCARD} {config.DUP_COMMON_MIN} {config.DUP_COMMON_SHARE}"
    kept = _kept_pairs(cache.unchanged_pairs(settings))
    if kept is not None:
        return kept

    found: dict[str, list[DuplicatePair]] = {}
    keys: dict[str, str] = {}
    kept_words: dict[str, Any] = {}
    if len(heads) >= config.DUP_DELTA_MIN:  # the registry's items built for its pairs only
        texts = [f"{h.name} {h.sentence()}" for h in heads]
        blocks = heads

        def block(k: int) -> Item:
            h = blocks[k]
            return Item(BLOCK, h.name, h.rel, h.line, texts[k])

        found[BLOCK], kept_words[BLOCK] = _big(cache, settings, BLOCK, texts, block)
        keys[BLOCK], heads = "", ()
    groups: dict[str, list[Item]] = {}
    for item in duplicate_items(heads, ()):
        groups.setdefault(item.group, []).append(item)
    projects = project_items(facts, cache.touched_projects())  # all of them: None
    if None in projects.values():  # a project none of whose files changed: its kept pairs
        for group, items in projects.items():
            entry = None if items is not None else cache.group_entry(settings, group)
            reused = None if entry is None else _kept_pairs(entry[1])
            if entry is not None and reused is not None:
                found[group], keys[group] = reused, entry[0]
                kept_words[group] = cache.group_words(settings, group)  # a big group's
        missing = {g for g, items in projects.items() if items is None and g not in found}
        if missing:  # none kept (the settings changed): built after all
            projects.update(project_items(facts, None, missing))
    groups.update((g, items) for g, items in projects.items() if items is not None)
    again: list[Item] = []  # the small groups to compare again, all in one pass
    for group, items in groups.items():
        if len(items) >= config.DUP_DELTA_MIN:
            found[group], kept_words[group] = _big(
                cache, settings, group, [i.text for i in items], items.__getitem__
            )
            keys[group] = ""
            continue
        # every field an item has (a moved line changes what the pairs say), joined by
        # two separators; as JSON (twice slower) if some value holds one, so that no two
        # lists of items can read the same
        raw = "\x1f".join([f"{i.name}\x1e{i.path}\x1e{i.line}\x1e{i.text}" for i in items])
        if raw.count("\x1e") != 3 * len(items) or raw.count("\x1f") != len(items) - 1:
            raw = json.dumps(items)  # each a named tuple: an array of its fields
        data = raw.encode("utf-8", "surrogatepass")
        key = keys[group] = blake2b(data, digest_size=16).hexdigest()
        pairs = _kept_pairs(cache.group_pairs(settings, group, key))
        if pairs is None:
            again += items
        else:
            found[group] = pairs
    if again:
        found.update(pairs_by_group(again))
    out: list[DuplicatePair] = []
    order = [BLOCK] if BLOCK in keys else []
    for group in [*order, *projects]:  # the registry, then each project as duplicate_items has them
        pairs = found[group]
        dicts = [p.to_dict() for p in pairs]
        cache.keep_group(settings, group, keys[group], dicts, kept_words.get(group))
        out += pairs
    return out


def _big(
    cache: ScanCache, settings: str, group: str, texts: list[str], item_at: Any
) -> tuple[list[DuplicatePair], Any]:
    """A big group's pairs, from what was kept of its words (redone for the entries
    that changed: ``group_pairs``); no digest of the whole group is needed first."""

    delta = group_pairs(texts, item_at, cache.group_words(settings, group))
    return delta.pairs, delta.state


def _kept_pairs(kept: list[Any] | None) -> list[DuplicatePair] | None:
    if kept is None:
        return None
    try:
        return [DuplicatePair.from_dict(p) for p in kept]
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError):
        return None  # not as this version writes them: look again


# -- where a big group changed -------------------------------------------------------------
#
# Where a big duplicates group changed, and who in it carries a word (for ``group_pairs``).
#
# Each entry's text has a digest (blake2b, 8 bytes: two different texts read the same
# once in 2**64); the digests of a group, concatenated, are compared with those kept:
# the entries alike at the start and at the end leave one changed region between them,
# found in a few comparisons of whole byte strings (a binary search), not one per entry.
#
# ``carriers`` answers, exactly, which entries carry a word without tokenising them all:
# every raw form of a normalised word starts with the word less its last letter (the
# stemmer only cuts endings, and turns ``-ies`` into ``-y``), so only the texts holding
# that prefix, lowercased, are tokenised.

DIGEST = 8  # bytes of an entry's digest


def entry_digests(texts: list[str]) -> bytes:
    """Each text's digest, in order, concatenated."""

    return b"".join(
        [blake2b(t.encode("utf-8", "surrogatepass"), digest_size=DIGEST).digest() for t in texts]
    )


def whole_digest(texts: list[str]) -> str | None:
    """One digest of a group's texts in order, when the separator between them is in
    none of them (else None: two lists could then join alike)."""
    joined = "\x1f".join(texts)
    if joined.count("\x1f") != len(texts) - 1:
        return None

    data = joined.encode("utf-8", "surrogatepass")
    return f"{len(texts)}:" + blake2b(data, digest_size=16).hexdigest()


def changed_region(old: bytes, new: bytes) -> tuple[int, int, int]:
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


# -- a big group redone for its changed entries --------------------------------------------
#
# The duplicates pass of a big group redone for its changed entries only.
#
# A registry of 25,000 blocks is one group: tokenising and joining all of it again because
# one block's first sentence gained a word cost a scan about 250 ms. The pairs are exactly
# those of a fresh ``find_pairs``: Jaccard >= t and a shared word carried by at most
# ``common_limit(n)`` entries of the group (n: the entries that have words). So this pass
# keeps, per group, what it needs to redo only the part that changed:
#
# - each entry's text digest (``entry_digests``): the entries alike at both ends bound the one
#   region that changed;
# - each entry's words that are not common (``EMPTY`` for an entry without words), a line
#   each: the exact count of every such word, and who carries it;
# - each common word with a lower bound of its count (its count when it was counted, less
#   every entry with words that left since, plus those that came with it);
# - n and the pairs, as (i, j) entry places.
#
# When the region changes, its old lines leave and its new texts are tokenised. A common
# word whose lower bound no longer clears the limit is counted again, exactly (only the
# texts that could hold it are tokenised); if it has become uncommon, pairs between
# unchanged entries could appear through it, and the whole group is redone. A word
# counted above the limit moves to the common ones. A kept pair outside the region
# stays if one of its shared words is still uncommon; each new entry probes the lines for
# the entries sharing an uncommon word with it, and each of those is checked on its words.

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
    whole = whole_digest(texts)
    if whole is not None and type(kept) is dict and kept.get("whole") == whole:
        same = _same(item_at, texts, kept)  # one digest said it: not one per entry
        if same is not None:
            return same
    digests = entry_digests(texts)
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
        "entries": len(digests) // DIGEST,
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
    if len(digests) != entries * DIGEST:
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
    start, old_stop, stop = changed_region(old_digests, digests)
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
        counted = carriers(texts, doubtful)
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
