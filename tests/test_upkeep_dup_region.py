"""Where a group changed, and who carries a word: both against working it out entry by entry."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from vaultkeeper.upkeep import duplicates as dupregion
from vaultkeeper.upkeep.duplicates import Vocabulary

_TEXTS = st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=12)


@settings(max_examples=300, deadline=None)
@given(_TEXTS, _TEXTS)
def test_the_region_is_what_lies_between_the_longest_alike_ends(
    old: list[str], new: list[str]
) -> None:
    start, old_stop, stop = dupregion.changed_region(
        dupregion.entry_digests(old), dupregion.entry_digests(new)
    )
    assert old[:start] == new[:start] and old[old_stop:] == new[stop:]
    assert start <= old_stop and start <= stop
    assert len(old) - old_stop == len(new) - stop
    # neither end could reach one entry further
    if start < min(len(old), len(new)):
        assert old[start] != new[start]
    end = len(old) - old_stop
    if start + end < min(len(old), len(new)):
        assert old[old_stop - 1] != new[stop - 1]


_PARTS = st.sampled_from(
    ["Retries", "retry", "RETRYING", "tested", "Tests", "test", "lock", "clock", "Block",
     "K\u212a", "k", "\u0130t", "it", "ies", "y", "sing", "x", " ", ".", "-", "caf\u00e9"]
)  # fmt: skip
_WORD_TEXTS = st.lists(st.lists(_PARTS, max_size=6).map(" ".join), max_size=10)


@settings(max_examples=300, deadline=None)
@given(_WORD_TEXTS, st.lists(st.sampled_from(["retry", "test", "lock", "k", "y", "sing", "i"])))
def test_carriers_are_every_entry_whose_words_hold_the_word(
    texts: list[str], words: list[str]
) -> None:
    sets = Vocabulary().sets(texts)
    expected = {w: [k for k, found in enumerate(sets) if w in found] for w in words}
    assert dupregion.carriers(texts, words) == expected


def test_a_text_holding_the_separator_leaves_the_count_to_a_full_pass() -> None:
    assert dupregion.carriers(["a\x01b", "a"], ["a"]) is None
