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

The scan keeps each group's pairs in the derived store and compares a group again only
when its texts changed, the registry's only where its blocks changed (``cached_pairs``);
the pairs are always those ``find_pairs`` gives.
"""

from __future__ import annotations

import json
import math
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from hashlib import blake2b
from itertools import accumulate, chain, combinations, compress, groupby
from operator import attrgetter, not_
from typing import TYPE_CHECKING, Any, NamedTuple

from vaultkeeper import config

if TYPE_CHECKING:
    from vaultkeeper.registry.keptheads import Head
    from vaultkeeper.scan.cache import ScanCache
    from vaultkeeper.upkeep.decay import MemoryFacts


# -- an entry's words: a pass over 50,000 entries works on all their texts at once
# (``Vocabulary``), so that no Python code runs per word.

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

    def _sets(self, texts: list[str]) -> list[Words]:  # a batch: never empty
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

    def norm(self, word: str) -> str:
        """One raw word's normalised form (a lowercase ASCII token)."""
        raw = word.encode("ascii")
        if raw not in self.norms:
            self._learn({raw})
        return self.norms[raw]

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


# -- the pairs of one pass -----------------------------------------------------------------

BLOCK = "block"
MEMORY = "memory"


class Item(NamedTuple):
    """One live entry as the pass sees it; ``group`` keeps kinds and projects apart."""

    group: str  # "block", or "memory:<project>"
    name: str
    path: str  # vault-relative
    line: int  # the ### heading of a block; 1 for a file
    text: str  # name and description, as written

    @property
    def kind(self) -> str:
        return self.group.split(":", 1)[0]


class DuplicatePair(NamedTuple):
    """Two entries that may say the same thing; ``a`` comes first in the vault."""

    kind: str  # BLOCK | MEMORY
    a_name: str
    a_path: str
    a_line: int
    b_name: str
    b_path: str
    b_line: int
    similarity: float  # Jaccard, rounded to 2 places
    shared: tuple[str, ...]  # the words both carry, sorted

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

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "a": {"name": self.a_name, "path": self.a_path, "line": self.a_line},
            "b": {"name": self.b_name, "path": self.b_path, "line": self.b_line},
            "similarity": self.similarity,
            "shared": list(self.shared),
        }


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


def _group_pairs(sets: list[Words], threshold: float) -> list[tuple[int, int]]:
    """The AllPairs join: sets in order of size, each probing the index with its prefix
    (|x| - ceil(t|x|) + 1 words, rarest first) and then indexing a shorter one
    (|x| - ceil(2t/(1+t) |x|) + 1), which is enough for the larger sets still to come.
    Every pair at or above ``t`` meets at its rarest shared word; a word carried by more
    than the common limit is neither indexed nor probed. Returns (i, j) with i < j."""
    df = Counter(chain.from_iterable(sets))
    common = _common(len(sets))
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
            pairs += [(j, i) if j < i else (i, j) for j in seen if _meets(mine, sets[j], threshold)]
        for r in places[: size - math.ceil(mid * size - 1e-9) + 1]:
            index.setdefault(r, []).append(i)
    return sorted(pairs)


def _common(members: int) -> int:
    """How many entries of a group of ``members`` (with a word) a word may be in and
    still bring in pairs."""
    return max(config.DUP_COMMON_MIN, int(config.DUP_COMMON_SHARE * members))


def _meets(a: set[str], b: Words, threshold: float) -> bool:
    """Whether the Jaccard similarity of ``a`` and ``b`` reaches ``threshold``."""
    shared = len(a.intersection(b))
    return shared >= threshold * (len(a) + len(b) - shared) - 1e-9


# -- the pass as a scan runs it ------------------------------------------------------------
#
# A group's pairs are kept in the store (vaultkeeper.scan.cache) under a digest of its
# entries' texts, each pair with its entries' places in the group: while the texts are
# the same, so are the pairs, rebuilt with the entries' names, paths and lines as they
# are now (a count or a promotion moves lines, never words). A project none of whose
# memory files changed keeps its pairs without its entries being built; every other
# group whose texts changed is compared again, whole -- but the registry's blocks: there
# the blocks of the files read again are set against their old rows, and only the
# changed blocks are compared, with the blocks that hold one of their words (found in the
# group's lowercased text, not by splitting every block into words), and the kept pairs
# whose shared words' counts moved across the common limit are decided again. The pairs
# are always exactly those ``find_pairs`` gives (tests compare).


def duplicate_items(heads: Iterable[Head], facts: Iterable[MemoryFacts]) -> list[Item]:
    """Registry blocks (one group) and live memory files (a group per project), each
    group's entries together, groups in the order of their first entry."""
    items = [Item(BLOCK, h.name, h.rel, h.line, f"{h.name} {h.sentence()}") for h in heads]
    for group in project_items(facts, None).values():
        items += group or ()
    return items


def project_items(
    facts: Iterable[MemoryFacts], touched: set[str] | None
) -> dict[str, list[Item] | None]:
    """Each project's group, in the order of its first live entry, with its items; None
    instead for a project not in ``touched`` (None: all are), whose items are not built.
    The walk gives facts project by project, so the project is worked out again only
    where it changes."""
    out: dict[str, list[Item] | None] = {}
    prefix, group = "", ""
    bucket: list[Item] | None = None
    for f in facts:
        if not prefix or not f.rel.startswith(prefix):  # the next project
            project = f.rel.split("/", 2)[1]
            prefix, group = f"{config.PROJECTS_DIR}/{project}/", f"{MEMORY}:{project}"
            wanted = touched is None or project in touched
            bucket = out.get(group, [] if wanted else None)  # a project met again: its list
        if f.status == "archived":
            continue  # archived (or superseded) lessons are not served: nothing to merge
        if group not in out:
            out[group] = bucket
        if bucket is not None:
            bucket.append(Item(group, f.name, f.rel, 1, f"{f.name} {f.description}"))
    return out


def cached_pairs(
    heads: Sequence[Head], facts: Sequence[MemoryFacts], cache: ScanCache
) -> list[DuplicatePair]:
    """``find_pairs`` of the scan's items, group by group, from the pairs kept for a
    group whose texts are the same (when no file changed, without building any item)."""
    settings = f"{config.DUP_MIN_JACCARD} {config.DUP_COMMON_MIN} {config.DUP_COMMON_SHARE}"
    kept = _parsed(cache.unchanged_pairs(settings))
    if kept is not None:
        return [pair for pair, _ in kept]
    found: dict[str, list[tuple[DuplicatePair, list[int]]]] = {}
    keys: dict[str, str] = {}
    projects = project_items(facts, cache.touched_projects())  # all of them: None
    for group, items in projects.items():
        row = cache.group_entry(settings, group) if items is None else None
        reused = None if row is None else _parsed(row[1])
        if row is not None and reused is not None:
            keys[group], found[group] = row[0], reused
    if any(items is None and g not in found for g, items in projects.items()):
        projects = project_items(facts, None)  # one not kept (the settings changed): all built
    texts = {BLOCK: [f"{h.name} {h.sentence()}" for h in heads]} if heads else {}
    texts.update((g, [i.text for i in items]) for g, items in projects.items() if items is not None)

    def where(group: str, k: int) -> tuple[str, str, int]:
        if group == BLOCK:
            return heads[k].name, heads[k].rel, heads[k].line
        item = projects[group][k]  # type: ignore[index]
        return item.name, item.path, item.line

    again: dict[str, list[Item]] = {}  # the groups to compare again, all in one pass
    for group, group_texts in texts.items():
        key = keys[group] = _digest(group_texts)
        reused = _parsed(cache.group_pairs(settings, group, key), len(group_texts))
        if reused is None and group == BLOCK:
            delta = _blocks_changed(heads, group_texts, cache.group_entry(settings, group), cache)
            if delta is not None:
                found[group] = delta
                continue
        if reused is None:
            again[group] = duplicate_items(heads, ()) if group == BLOCK else projects[group] or []
            continue
        found[group] = [
            (_moved(p, where(group, i), where(group, j)), [i, j]) for p, (i, j) in reused
        ]
    if again:
        for group, pairs in pairs_by_group(list(chain.from_iterable(again.values()))).items():
            place = {(i.path, i.line): k for k, i in enumerate(again[group])} if pairs else {}
            found[group] = [
                (p, [place[p.a_path, p.a_line], place[p.b_path, p.b_line]]) for p in pairs
            ]
    out: list[DuplicatePair] = []
    for group in [*([BLOCK] if heads else []), *projects]:  # the registry, then each project
        rows = [[*pair[:8], list(pair.shared), at] for pair, at in found[group]]
        cache.keep_group(settings, group, keys[group], rows)
        out += [pair for pair, _ in found[group]]
    return out


def _blocks_changed(
    heads: Sequence[Head], texts: list[str], row: list[Any] | None, cache: ScanCache
) -> list[tuple[DuplicatePair, list[int]]] | None:
    """The registry blocks' pairs after some registry files changed, from the pairs kept
    before: only the changed blocks are compared, with the blocks that share a word with
    them, and the kept pairs a changed word's count can make or unmake. None when the
    blocks the kept pairs were found among cannot be told (the group is compared again)."""
    before = None if row is None else _before(heads, texts, cache)
    if row is None or before is None or _digest(before[0]) != row[0]:
        return None
    old, moved, fresh, gone = before
    kept = _parsed(row[1], len(old))
    words = Vocabulary()
    now = dict(zip(fresh, words.sets(texts[k] for k in fresh), strict=True))
    was = words.sets(old[k] for k in gone)
    delta = Counter(chain.from_iterable(now.values()))
    delta.subtract(chain.from_iterable(was))
    shifted = {w for w, d in delta.items() if d}
    grown = sum(map(bool, now.values())) - sum(map(bool, was))
    found = _holders(texts, words, len(fresh) + len(gone), grown)
    if kept is None or found is None:
        return None
    seek, limit = found

    def rare(word: str) -> bool:  # brings in pairs now
        return 1 < len(seek(word)) <= limit

    pairs = {
        (moved[i], moved[j])
        for pair, (i, j) in kept
        if min(moved[i], moved[j]) >= 0
        and (shifted.isdisjoint(pair.shared) or any(map(rare, pair.shared)))
    }
    maybe: set[tuple[int, int]] = set()  # a changed block and one that shares a rare word
    for c, mine in now.items():
        near = {y for w in mine if rare(w) for y in seek(w)} - {c}
        maybe.update((y, c) if y < c else (c, y) for y in near)
    for w in shifted:  # common before, rare now: the pairs it alone brings in
        if len(seek(w)) - delta[w] > limit and rare(w):
            maybe.update(combinations(sorted(seek(w)), 2))
    involved = sorted({k for pair in pairs | maybe for k in pair})
    sets = dict(zip(involved, words.sets(texts[k] for k in involved), strict=True))
    pairs.update(p for p in maybe if _meets(set(sets[p[0]]), sets[p[1]], config.DUP_MIN_JACCARD))

    def item(k: int) -> Item:
        return Item(BLOCK, heads[k].name, heads[k].rel, heads[k].line, texts[k])

    return [(pair_of(item(i), item(j), sets[i], sets[j]), [i, j]) for i, j in sorted(pairs)]


def _before(
    heads: Sequence[Head], texts: list[str], cache: ScanCache
) -> tuple[list[str], list[int], list[int], list[int]] | None:
    """The blocks' texts as the rows found say they were (a file read again: its old row),
    each old block's place now (-1: changed or gone), the changed blocks' places now and
    their places before; None for a row not as keptheads writes it."""
    from vaultkeeper.registry.keptheads import CachedHead

    old: list[str] = []
    moved: list[int] = []
    fresh: list[int] = []
    gone: list[int] = []
    at = 0
    for rel, same in groupby(heads, attrgetter("rel")):
        file = list(same)
        size = len(file)
        now = texts[at : at + size]
        if isinstance(file[0], CachedHead):  # unchanged since its row
            was = now
        else:
            kept = cache.registry_before(rel)
            if type(kept) is not list:
                return None
            if not all(
                type(b) is list and len(b) > 5 and type(b[0]) is type(b[5]) is str for b in kept
            ):
                return None
            was = [f"{b[0]} {b[5]}" for b in kept]
        both = min(len(was), size)
        head = next((k for k in range(both) if was[k] != now[k]), both)
        tail = next((k for k in range(both - head) if was[-1 - k] != now[-1 - k]), both - head)
        gone += range(len(old) + head, len(old) + len(was) - tail)
        fresh += range(at + head, at + size - tail)
        old += was
        moved += [*range(at, at + head), *[-1] * (len(was) - head - tail)]
        moved += range(at + size - tail, at + size)
        at += size
    return old, moved, fresh, gone


def _holders(
    texts: list[str], words: Vocabulary, changed: int, grown: int
) -> tuple[Callable[[str], list[int]], int] | None:
    """Which registry blocks hold a word, found in the group's lowercased text (no other
    block is split into words), at most ``limit + changed + 1`` of them: enough to tell
    whether the word brings in pairs, before the change and after; and the group's
    ``_common`` limit. None when a text holds the separator or the change moved the limit
    (``grown``: how many more blocks have a word)."""
    joined = _SEP.join(texts)
    lows = None if joined.isascii() else [t.lower() for t in texts]
    low = joined.lower() if lows is None else _SEP.join(lows)
    starts = [0, *accumulate(len(t) + 1 for t in lows or texts)]
    members = len(texts)
    if low.count(_SEP) != members - 1:
        return None
    if _common(members) > config.DUP_COMMON_MIN:  # the blocks with a word, then
        members -= len(_WORDLESS.findall(f"{_SEP}{low}{_SEP}"))
    limit = _common(members)
    if limit != _common(members - grown):
        return None

    @cache
    def seek(word: str) -> list[int]:
        found: dict[int, None] = {}
        # the raw words whose normal form can be ``word`` (the stemmer's suffixes)
        forms = rf"{word}(?:s|ing|ed|ings|eds)?" + (rf"|{word[:-1]}ies" if word[-1] == "y" else "")
        for m in re.finditer(rf"(?:{forms})(?![a-z0-9])", low):
            at = m.start()
            if (at and low[at - 1] in _ALNUM) or words.norm(m.group()) != word:
                continue
            found[bisect_right(starts, at) - 1] = None
            if len(found) > limit + changed:
                break
        return list(found)

    return seek, limit


_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
# a text between two separators with stop words alone: a block with no word
_WORDLESS = re.compile(
    rf"{_SEP}[^a-z0-9{_SEP}]*(?:(?:{'|'.join(sorted(STOP_WORDS, key=len, reverse=True))})"
    rf"(?![a-z0-9])[^a-z0-9{_SEP}]*)*(?={_SEP})"
)


def _digest(texts: list[str]) -> str:
    """One digest of a group's texts in order (as JSON if a text holds the separator)."""
    joined = "\x1f".join(texts)
    if joined.count("\x1f") != max(len(texts) - 1, 0):
        joined = json.dumps(texts)
    data = joined.encode("utf-8", "surrogatepass")
    return f"{len(texts)}:" + blake2b(data, digest_size=16).hexdigest()


def _moved(pair: DuplicatePair, a: tuple[str, str, int], b: tuple[str, str, int]) -> DuplicatePair:
    """A kept pair with its entries' names, paths and lines as they are now."""
    return pair._replace(
        a_name=a[0], a_path=a[1], a_line=a[2], b_name=b[0], b_path=b[1], b_line=b[2]
    )


def _parsed(
    kept: list[Any] | None, size: int | None = None
) -> list[tuple[DuplicatePair, list[int]]] | None:
    """Kept pairs (each the pair's fields, then its entries' places inside a group of
    ``size``); None when they are not as this version writes them (then the group is
    compared again)."""
    if type(kept) is not list or not all(
        type(p) is list and tuple(map(type, p)) == _KEPT for p in kept
    ):
        return None
    for p in kept:
        at = p[9]
        if not (len(at) == 2 and all(type(k) is int for k in at)):
            return None
        if not all(type(w) is str for w in p[8]):  # the shared words: text only
            return None
        if size is not None and not 0 <= at[0] < at[1] < size:
            return None
    return [(DuplicatePair._make([*p[:8], tuple(p[8])]), p[9]) for p in kept]


_KEPT = (str, str, str, int, str, str, int, float, list, list)  # a kept pair's fields' types
