"""How ``search`` scores an entry against a query's words, over prepared folded text.

Split from vaultkeeper.search.rank so that the point-of-use recall hook
(vaultkeeper.recall.moment) ranks lessons exactly as ``search`` does while importing
nothing but ``re`` and ``bisect``: every entry's casefolded name, description and body
are joined, per field, into one string; a word is found with ``str.find`` over all
entries at once, and each find skips to the next entry, so the cost follows the number
of matching entries. An entry scores 100 per query word it holds, plus 6, 3 and 1 for
each of its name, description and body that holds it.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator, Sequence

WORD = re.compile(r"\w+")
# Name, description and body weights: a term in a name says more than one in prose.
WEIGHTS = (6, 3, 1)
SEP = "\x00"  # never in a query word, so no match spans two entries


def terms(query: str) -> list[str]:
    """The query's distinct words, casefolded, in order."""
    return list(dict.fromkeys(w.casefold() for w in WORD.findall(query)))


def starts_of(fields: Sequence[str]) -> list[int]:
    """Where each entry's field begins in ``SEP.join(fields)``."""
    starts, at = [], 0
    for text in fields:
        starts.append(at)
        at += len(text) + 1
    return starts


class Scorer:
    """Scores over ``texts[part]`` (each entry's folded field, joined by SEP) with the
    entries' start offsets ``starts[part]``, one pair per weight."""

    def __init__(self, texts: Sequence[str], starts: Sequence[list[int]]) -> None:
        self.text = list(texts)
        self.starts = list(starts)

    def matches(self, word: str, part: int) -> Iterator[int]:
        text, starts = self.text[part], self.starts[part]
        last = len(starts) - 1
        pos = text.find(word)
        while pos != -1:
            i = bisect_right(starts, pos) - 1
            yield i
            if i == last:
                return
            pos = text.find(word, starts[i + 1])

    def scores(self, words: list[str]) -> dict[int, int]:
        """Entry -> score: 100 per query word it holds, plus where each word is."""
        out: dict[int, int] = {}
        for word in words:
            here: dict[int, int] = {}
            for part, weight in enumerate(WEIGHTS):
                for i in self.matches(word, part):
                    here[i] = here.get(i, 0) + weight
            for i, weight in here.items():
                out[i] = out.get(i, 0) + 100 + weight
        return out
