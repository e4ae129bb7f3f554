"""An entry's words, as the duplicates pass compares them.

Its name and its description, lowercased, split on anything not a letter or digit,
with a small stop list dropped and a light suffix stemming (``tests`` -> ``test``,
``patching`` -> ``patch``). A pass over 50,000 entries works on all their texts at
once (``Vocabulary``), so that no Python code runs per word.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

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
