"""The duplicates pass redone for changed entries only gives what a fresh pass gives."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultkeeper import config
from vaultkeeper.upkeep import duplicates as dupdelta
from vaultkeeper.upkeep.duplicates import Item, find_pairs

_VOCAB = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "iota", "kappa"]


@pytest.fixture(autouse=True)
def small_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    # tiny groups that still have common words, a limit that moves with the group's
    # size, and a region of a few entries already too many to update: every path is taken
    monkeypatch.setattr(config, "DUP_COMMON_MIN", 2)
    monkeypatch.setattr(config, "DUP_COMMON_SHARE", 0.25)
    monkeypatch.setattr(dupdelta, "_FEW", 4)


def _items(entries: list[tuple[int, str]]) -> list[Item]:
    return [
        Item("block", f"n{key}", "r.md", line, text) for line, (key, text) in enumerate(entries)
    ]


def _step(entries: list[tuple[int, str]], kept: object) -> dupdelta.Found:
    items = _items(entries)
    texts = [item.text for item in items]
    found = dupdelta.group_pairs(texts, items.__getitem__, json.loads(json.dumps(kept)))
    assert found.pairs == find_pairs(items)
    return found


_TEXT = st.lists(
    st.sampled_from([*_VOCAB, "the", "Tests", "test", "K\u212a", "k", "caf\u00e9"]), max_size=6
).map(" ".join)
_EDIT = st.tuples(st.sampled_from(["set", "add", "drop"]), st.integers(0, 40), _TEXT)


@settings(max_examples=200, deadline=None)
@given(st.lists(_TEXT, max_size=24), st.lists(st.lists(_EDIT, min_size=1, max_size=3), max_size=6))
def test_after_any_edits_the_pairs_are_those_of_a_fresh_pass(
    texts: list[str], turns: list[list[tuple[str, int, str]]]
) -> None:
    entries = list(enumerate(texts))
    found = _step(entries, None)
    fresh = len(entries)
    for edits in turns:
        for kind, at, text in edits:
            at = at % (len(entries) + 1)
            if kind == "add" or not entries:
                entries.insert(at, (fresh, text))
                fresh += 1
            elif kind == "set":
                entries[at % len(entries)] = (entries[at % len(entries)][0], text)
            else:
                del entries[at % len(entries)]
        found = _step(entries, found.state)


def test_random_edits_mostly_take_the_short_path() -> None:
    rng = random.Random(13)
    vocab = [f"w{k}" for k in range(60)]
    weights = [1 / (k + 1) for k in range(60)]  # a few words common, most not, some near

    def text() -> str:
        return " ".join(rng.choices(vocab, weights, k=rng.choice((0, 3, 4, 5))))

    entries = [(n, text()) for n in range(120)]
    found = _step(entries, None)
    short = 0
    for turn in range(300):
        at = rng.randrange(len(entries))
        if turn % 3 == 0:
            entries.insert(at, (1000 + turn, text()))
        elif turn % 3 == 1 and len(entries) > 60:
            del entries[at]
        else:
            entries[at] = (entries[at][0], text())
        found = _step(entries, found.state)
        short += not found.redone
    assert short > 150  # the check above is of the update, not of redoing it all


def test_a_state_not_as_written_is_redone_not_trusted() -> None:
    entries = [(0, "alpha beta gamma"), (1, "alpha beta gamma"), (2, "delta eps")]
    found = _step(entries, None)
    assert len(found.pairs) == 1
    for broken in (
        {**found.state, "pairs": [[0, 9]]},
        {**found.state, "lines": "alpha"},
        {**found.state, "format": 0},
        {**found.state, "common": {"alpha": "many"}},
        {**found.state, "digests": "not base64!"},
        {**found.state, "digests": found.state["digests"][:12]},
        {**found.state, "n": "3"},
        [],
    ):
        again = _step(entries, broken)
        assert again.redone


def test_a_common_words_count_worn_down_by_edits_is_counted_again_not_redone() -> None:
    # "alpha" is in 4 of 7 entries (the limit is 2); each edit of another entry lowers
    # what is known of its count by one, until it is counted again
    entries = [(k, f"alpha w{k}") for k in range(4)] + [(k, f"w{k}") for k in range(4, 7)]
    found = _step(entries, None)
    assert found.state["common"] == {"alpha": 4}
    for turn in range(2):  # 3 known, then 2: no more than the limit, so counted
        entries[5] = (5, f"w5 e{turn}")
        found = _step(entries, found.state)
        assert not found.redone
    assert found.state["common"] == {"alpha": 4}  # counted again, exactly, on the way


def test_the_same_texts_give_the_kept_pairs_of_the_items_as_they_are_now() -> None:
    entries = [(0, "alpha beta gamma"), (1, "delta eps"), (2, "alpha beta gamma")]
    found = _step(entries, None)
    moved = [Item("block", f"m{k}", "s.md", 100 + k, text) for k, text in entries]
    again = dupdelta.group_pairs([i.text for i in moved], moved.__getitem__, found.state)
    assert again.pairs == find_pairs(moved) and len(again.pairs) == 1
    assert (again.pairs[0].a_name, again.pairs[0].b_line) == ("m0", 102)
    assert not again.redone and again.state is found.state  # nothing to write again


def test_the_same_texts_are_known_by_one_digest_not_one_per_entry(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from vaultkeeper.upkeep import duplicates as dupregion

    entries = [(0, "alpha beta gamma"), (1, "alpha beta gamma"), (2, "delta eps")]
    found = _step(entries, None)
    calls: list[int] = []
    real = dupregion.entry_digests
    monkeypatch.setattr(dupregion, "entry_digests", lambda texts: calls.append(1) or real(texts))
    moved = [(k + 5, text) for k, text in entries]  # the same texts at other lines
    again = _step(moved, found.state)
    assert calls == [] and not again.redone and [p.a_name for p in again.pairs] == ["n5"]
    entries[2] = (2, "delta eps zeta")
    assert _step(entries, again.state).pairs == found.pairs and calls == [1]
    sep = [(0, "alpha\x1fbeta"), (1, "alpha beta")]  # a separator inside: no whole digest
    assert (
        dupdelta.group_pairs(["a\x1fb", "c"], _items(sep).__getitem__, None).state["whole"] is None
    )
