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
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import chain

from vaultkeeper import config
from vaultkeeper.lazyre import lazy

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing itself costs a scan more than it gives at run time
    from typing import Any, NamedTuple

_WORD = lazy(r"[a-z0-9]+")
# fmt: off
STOP_WORDS = frozenset((
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "for", "with", "by", "at", "from",
    "as", "is", "are", "was", "be", "been", "it", "its", "this", "that", "these", "those",
    "into", "onto", "than", "then", "so", "via", "per",
))
# fmt: on
BLOCK = "block"
MEMORY = "memory"


# Light suffix stemming, applied to many words at once (one per line) by three regex
# passes: -ies -> -y (5+ letters); a plural -s cut (4+, not -ss/-us/-is); then -ing (6+)
# and -ed (5+) cut. So "settings", "setting" and "set" stay apart but the first two meet.
_IES = lazy(r"^([a-z0-9]{2,})ies$", re.M)
_PLURAL = lazy(r"^([a-z0-9]{2,}[a-hj-rtv-z0-9])s$", re.M)
_ING_ED = lazy(r"^([a-z0-9]{3,})(?:ing|ed)$", re.M)
_SUFFIXES = ("s", "ed", "ing")  # a word ending otherwise is its own stem


def _stem_lines(text: str) -> str:
    return _ING_ED.sub(r"\1", _PLURAL.sub(r"\1", _IES.sub(r"\1y", text)))


def stem(word: str) -> str:
    """``tests`` -> ``test``, ``patching`` -> ``patch``, ``retries`` -> ``retry``."""
    return _stem_lines(word)


_SEP = "\x01"  # between two texts of a pass; no word holds it
# One entry's distinct words: a tuple, not a set (a 50,000-entry vault's sets alone took
# about 35 MiB); a set is built only for an entry that has a word worth probing.
Words = tuple[str, ...]
_BATCH = 2048  # texts tokenised at once: big enough for C-speed calls, small in memory
_TOKEN = lazy(r"[a-z0-9]+|\x01")


class Vocabulary:
    """Raw word -> its normalised form ("" for a stop word), worked out once per word.

    A whole pass is tokenised at once: the texts joined, one findall, one map through
    the table, joined again and split back per text, so no Python code runs per word
    and only two C calls per text (split, set). The distinct new words are stemmed
    together.
    """

    def __init__(self) -> None:
        self.norms: dict[str, str] = {_SEP: _SEP}

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
        joined = _SEP.join(texts)
        if joined.count(_SEP) != len(texts) - 1:  # a text holding the separator itself
            joined = _SEP.join(text.replace(_SEP, " ") for text in texts)
        tokens = _TOKEN.findall(joined.lower())
        new = set(tokens).difference(self.norms)
        self.norms.update(zip(new, new, strict=True))
        # only words with a suffix the stemmer cuts go through it (names such as b123 don't)
        cut = [w for w in new if w.endswith(_SUFFIXES)]
        if cut:  # "".split("\n") would give one empty word
            self.norms.update(zip(cut, _stem_lines("\n".join(cut)).split("\n"), strict=True))
        self.norms.update((w, "") for w in STOP_WORDS.intersection(new))
        # stop words map to "", which split() drops; each text's words, space-separated
        chunks = " ".join(map(self.norms.__getitem__, tokens)).split(_SEP)
        return [tuple(set(chunk.split())) for chunk in chunks]


def words(text: str) -> frozenset[str]:
    """The normalised word set of ``text`` (see the module docstring)."""
    return frozenset(Vocabulary().sets([text])[0])


def first_sentence(text: str) -> str:
    """A registry block's description: its first paragraph's first sentence (up to the
    first ``.``, ``!`` or ``?`` followed by a blank; str.find, not a regex: it runs once
    per block in every scan)."""
    cut = len(text)
    for mark in (". ", "! ", "? "):
        at = text.find(mark, 0, cut)
        if at != -1:
            cut = at + 1
    return text[:cut]


if TYPE_CHECKING:

    class _ItemFields(NamedTuple):
        group: str  # "block", or "memory:<project>"
        name: str
        path: str  # vault-relative
        line: int  # the ### heading of a block; 1 for a file
        text: str  # name and description, as written

else:
    from collections import namedtuple

    _ItemFields = namedtuple("_ItemFields", ("group", "name", "path", "line", "text"))


class Item(_ItemFields):
    """One live entry as the pass sees it; ``group`` keeps kinds and projects apart.

    A named tuple: the scan makes one per entry, and a frozen dataclass costs several
    times more to build.
    """

    __slots__ = ()

    @property
    def kind(self) -> str:
        return self.group.split(":", 1)[0]


if TYPE_CHECKING:

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

else:
    from collections import namedtuple

    _PairFields = namedtuple(
        "_PairFields", "kind a_name a_path a_line b_name b_path b_line similarity shared"
    )


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


def similarity(a: frozenset[str], b: frozenset[str]) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def find_pairs(
    items: Sequence[Item], threshold: float = config.DUP_MIN_JACCARD
) -> list[DuplicatePair]:
    """Every pair of one group at or above ``threshold`` that shares an uncommon word."""
    groups: dict[str, list[int]] = {}  # in the order of each group's first entry
    sets = Vocabulary().sets(item.text for item in items)
    for n, item in enumerate(items):
        members = groups.setdefault(item.group, [])
        if sets[n]:
            members.append(n)
    out: list[DuplicatePair] = []
    for members in groups.values():
        if len(members) < 2:
            continue
        for i, j in _group_pairs([sets[n] for n in members], threshold):
            a, b = items[members[i]], items[members[j]]
            wa, wb = set(sets[members[i]]), set(sets[members[j]])
            out.append(
                DuplicatePair(
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
            )
    return out


def _group_pairs(sets: list[Words], threshold: float) -> list[tuple[int, int]]:
    """The AllPairs join: sets in order of size, each probing the index with its prefix
    (|x| - ceil(t|x|) + 1 words, rarest first) and then indexing a shorter one
    (|x| - ceil(2t/(1+t) |x|) + 1), which is enough for the larger sets still to come.
    Every pair at or above ``t`` meets at its rarest shared word; a word carried by more
    than the common limit is neither indexed nor probed. Returns (i, j) with i < j."""
    df = Counter(chain.from_iterable(sets))
    common = max(config.DUP_COMMON_MIN, int(config.DUP_COMMON_SHARE * len(sets)))
    # Each uncommon word's place, rarest first. Common words never bring in a pair and
    # come after every uncommon one; a word of one entry only could pair nothing.
    uncommon = sorted((w for w, n in df.items() if 1 < n <= common), key=lambda w: (df[w], w))
    rank = {w: k for k, w in enumerate(uncommon)}
    sizes = [len(found) for found in sets]
    mid = 2 * threshold / (1 + threshold)
    index: dict[int, list[int]] = {}
    pairs: list[tuple[int, int]] = []
    ranked = set(rank)
    for i in sorted(range(len(sets)), key=sizes.__getitem__):
        if ranked.isdisjoint(sets[i]):
            continue  # no uncommon word shared with anything
        size = sizes[i]
        # the words of one entry only would come first; leaving them out probes (and
        # indexes) a few more words than needed, never fewer
        mine = set(sets[i])
        places = sorted(map(rank.__getitem__, ranked.intersection(mine)))
        least = threshold * size - 1e-9
        seen: set[int] = set()
        for r in places[: size - math.ceil(least) + 1]:
            for j in index.get(r, ()):
                if sizes[j] >= least:
                    seen.add(j)
        for j in seen:
            shared = len(mine.intersection(sets[j]))
            if shared >= threshold * (size + sizes[j] - shared) - 1e-9:
                pairs.append((j, i) if j < i else (i, j))
        for r in places[: size - math.ceil(mid * size - 1e-9) + 1]:
            index.setdefault(r, []).append(i)
    return sorted(pairs)
