"""An entry's words: the tokenizer against the one it replaced, kept here as reference."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultkeeper.upkeep import duplicates as dupwords
from vaultkeeper.upkeep.duplicates import STOP_WORDS, _stem_lines

# The tokenizer as it was before its ASCII-bytes rewrite, kept as the reference the
# rewrite must match word for word (a regex findall over the lowered text per pass).
_REF_TOKEN = re.compile(r"[a-z0-9]+|\x01")


def _reference_sets(texts: list[str]) -> list[frozenset[str]]:
    if not texts:
        return []
    joined = "\x01".join(text.replace("\x01", " ") for text in texts)
    tokens = _REF_TOKEN.findall(joined.lower())
    norms = {w: w for w in set(tokens)}
    cut = [w for w in norms if w.endswith(("s", "ed", "ing"))]
    if cut:
        norms.update(zip(cut, _stem_lines("\n".join(cut)).split("\n"), strict=True))
    norms.update((w, "") for w in STOP_WORDS.intersection(norms))
    norms["\x01"] = "\x01"
    chunks = " ".join(norms[t] for t in tokens).split("\x01")
    return [frozenset(chunk.split()) for chunk in chunks]


_TEXT_PARTS = st.sampled_from(
    ["Tests", "patching", "retries", "the", "A", "of", "bytes", "is", "b12", "x", "Settings",
     "K\u212a", "\u0130stanbul", "caf\u00e9", "stra\u00dfe", "\u03a3\u03a3", "\x01", " ", "-", ".",
     "\n", "[[p#q-b7]]", "\x1f", "ING", "sing", "used"]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(st.lists(_TEXT_PARTS, max_size=8).map("".join), st.text(max_size=12)),
        max_size=9,
    ),
    st.integers(min_value=1, max_value=4),
)
def test_the_tokenizer_gives_the_reference_word_sets(texts: list[str], batch: int) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(dupwords, "_BATCH", batch)  # several batches share one vocabulary
        got = dupwords.Vocabulary().sets(texts)
    assert [frozenset(found) for found in got] == _reference_sets(texts)
    assert all(len(found) == len(set(found)) for found in got)
