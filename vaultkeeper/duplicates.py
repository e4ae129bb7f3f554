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
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from vaultkeeper import config

_WORD = re.compile(r"[a-z0-9]+")
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)")
# fmt: off
STOP_WORDS = frozenset((
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "for", "with", "by", "at", "from",
    "as", "is", "are", "was", "be", "been", "it", "its", "this", "that", "these", "those",
    "into", "onto", "than", "then", "so", "via", "per",
))
# fmt: on
BLOCK = "block"
MEMORY = "memory"


def stem(word: str) -> str:
    """A light, predictable suffix stemming: plurals and -ing / -ed forms."""
    if len(word) > 5 and word.endswith("ing"):
        return word[:-3]
    if len(word) > 4 and word.endswith("ed"):
        return word[:-2]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def words(text: str, _cache: dict[str, str | None] = {}) -> frozenset[str]:  # noqa: B006
    """The normalised word set of ``text`` (see the module docstring)."""
    out = set()
    for raw in _WORD.findall(text.lower()):
        norm = _cache.get(raw, "")
        if norm == "":
            norm = None if raw in STOP_WORDS else stem(raw)
            if len(_cache) < 200_000:  # a vault's vocabulary; ids like b123 are not cached
                _cache[raw] = norm
        if norm is not None:
            out.add(norm)
    return frozenset(out)


def first_sentence(text: str) -> str:
    """A registry block's description: its first paragraph's first sentence."""
    m = _SENTENCE_END.search(text)
    return text if m is None else text[: m.start() + 1]


@dataclass(frozen=True)
class Item:
    """One live entry as the pass sees it; ``group`` keeps kinds and projects apart."""

    group: str  # "block", or "memory:<project>"
    name: str
    path: str  # vault-relative
    line: int  # the ### heading of a block; 1 for a file
    text: str  # name and description, as written

    @property
    def kind(self) -> str:
        return self.group.split(":", 1)[0]


@dataclass(frozen=True)
class DuplicatePair:
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
    items: Iterable[Item], threshold: float = config.DUP_MIN_JACCARD
) -> list[DuplicatePair]:
    """Every pair of one group at or above ``threshold`` that shares an uncommon word."""
    groups: dict[str, list[tuple[Item, frozenset[str]]]] = {}
    for item in items:
        found = words(item.text)
        if found:
            groups.setdefault(item.group, []).append((item, found))
    out: list[DuplicatePair] = []
    for members in groups.values():
        if len(members) > 1:
            out.extend(_group_pairs(members, threshold))
    return out


def _group_pairs(
    members: list[tuple[Item, frozenset[str]]], threshold: float
) -> list[DuplicatePair]:
    df: Counter[str] = Counter()
    for _, found in members:
        df.update(found)
    common = max(config.DUP_COMMON_MIN, int(config.DUP_COMMON_SHARE * len(members)))
    rank = {w: (n, w) for w, n in df.items()}
    index: dict[str, list[int]] = {}
    candidates: set[tuple[int, int]] = set()
    for i, (_, found) in enumerate(members):
        ordered = sorted(found, key=rank.__getitem__)
        prefix = len(ordered) - math.ceil(threshold * len(ordered) - 1e-9) + 1
        for word in ordered[:prefix]:
            if df[word] > common:
                break  # rarest first: every later word is as common
            seen = index.setdefault(word, [])
            candidates.update((j, i) for j in seen)
            seen.append(i)
    out: list[DuplicatePair] = []
    for i, j in sorted(candidates):
        (a, wa), (b, wb) = members[i], members[j]
        score = similarity(wa, wb)
        if score + 1e-9 >= threshold:
            out.append(
                DuplicatePair(
                    kind=a.kind,
                    a_name=a.name,
                    a_path=a.path,
                    a_line=a.line,
                    b_name=b.name,
                    b_path=b.path,
                    b_line=b.line,
                    similarity=round(score, 2),
                    shared=tuple(sorted(wa & wb)),
                )
            )
    return out
