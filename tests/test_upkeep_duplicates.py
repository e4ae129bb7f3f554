"""Possible duplicates: the word sets, the measure, and the prefix filter against all pairs."""

from __future__ import annotations

import datetime as dt
import itertools
from collections import Counter
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import MakeVault
from tests.reference import words
from vaultkeeper import config
from vaultkeeper.registry.blocks import first_sentence
from vaultkeeper.scan.classify import classify
from vaultkeeper.upkeep.duplicates import Item, find_pairs

NOW = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.timezone.utc)


def similarity(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard, written out: the brute force the pass is held to."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def test_words_lowercase_split_stop_list_and_light_stemming() -> None:
    got = words("Pin the clock in Tests: patching `time.time` is flaky; retries")
    assert got == {"pin", "clock", "test", "patch", "time", "flaky", "retry"}


def test_first_sentence_is_a_blocks_description() -> None:
    assert first_sentence("Use UTC. Always.") == "Use UTC."
    assert first_sentence("See v1.2 notes") == "See v1.2 notes"


def test_a_pair_at_the_threshold_is_found_and_one_below_is_not() -> None:
    # 3 shared of 5 words: 0.6, exactly the threshold; 3 of 6: 0.5
    a = Item("block", "a", "patterns/registry.md", 1, "alpha beta gamma delta")
    b = Item("block", "b", "patterns/registry.md", 9, "alpha beta gamma epsilon")
    c = Item("block", "c", "patterns/registry.md", 20, "alpha beta gamma zeta eta")
    assert config.DUP_MIN_JACCARD == 0.6
    pairs = find_pairs([a, b, c])
    assert [(p.a_name, p.b_name, p.similarity) for p in pairs] == [("a", "b", 0.6)]
    assert pairs[0].shared == ("alpha", "beta", "gamma")


def test_groups_are_never_compared_with_each_other() -> None:
    text = "retry a flaky ci job once"
    items = [
        Item("block", "x", "patterns/registry.md", 1, text),
        Item("memory:api", "y", "projects/api/memory/y.md", 1, text),
        Item("memory:web", "z", "projects/web/memory/z.md", 1, text),
    ]
    assert find_pairs(items) == []


_WORDS = st.sampled_from([f"w{i}" for i in range(12)])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(_WORDS, min_size=1, max_size=7), min_size=2, max_size=10))
def test_the_prefix_filter_finds_exactly_what_comparing_all_pairs_finds(
    texts: list[list[str]],
) -> None:
    # no more entries than DUP_COMMON_MIN: no word is common, so the result must be exact
    items = [Item("block", f"n{i}", "r.md", i, " ".join(t)) for i, t in enumerate(texts)]
    brute = {
        (a.name, b.name)
        for a, b in itertools.combinations(items, 2)
        if similarity(words(a.text), words(b.text)) >= config.DUP_MIN_JACCARD
    }
    assert {(p.a_name, p.b_name) for p in find_pairs(items)} == brute


def test_a_word_most_entries_carry_brings_in_no_pairs_by_itself() -> None:
    # 200 entries share "common"; each pair shares nothing else, so none is compared
    items = [Item("block", f"n{i}", "r.md", i, f"common u{i}") for i in range(200)]
    items += [Item("block", "twin", "r.md", 999, "common u7")]
    pairs = find_pairs(items)
    assert [(p.a_name, p.b_name) for p in pairs] == [("n7", "twin")]


def test_the_scan_reports_block_and_memory_pairs_but_not_archived_or_cross_project(
    make_vault,
) -> None:
    reg = (
        "# Registry\n\n### pin-test-clock\nInject now into date logic in tests. More text.\n\n"
        "**success count:** 1\n**last used:** 2026-11-01\n\n"
        "### pin-the-test-clock\nInject now into the date logic of tests.\n\n"
        "**success count:** 0\n**last used:** 2026-11-02\n"
    )

    def memory(name: str, desc: str, status: str = "active") -> str:
        return (
            f"---\nname: {name}\ndescription: {desc}\ntype: memory\nstatus: {status}\n"
            f'label: rule\nholdout_until: "2026-11-01"\n---\nbody\n'
        )

    vault = make_vault(
        {
            "patterns/registry.md": reg,
            "projects/api/memory/retry-once.md": memory("retry-once", "Retry a flaky CI job once"),
            "projects/api/memory/retry-flaky-once.md": memory(
                "retry-flaky-once", "Retry flaky CI jobs once"
            ),
            "projects/api/memory/old.md": memory("old", "Retry a flaky CI job once", "archived"),
            "projects/web/memory/retry-once.md": memory("retry-once", "Retry a flaky CI job once"),
        }
    )
    report = classify(vault, NOW)
    got = {(p.kind, p.target("a"), p.target("b")) for p in report.duplicates}
    assert got == {
        ("block", "pin-test-clock", "pin-the-test-clock"),
        (
            "memory",
            "projects/api/memory/retry-flaky-once.md",
            "projects/api/memory/retry-once.md",
        ),
    }
    assert report.summary() == (
        f"{config.SUMMARY_PREFIX} prune candidates 0 | promote eligible 0 | held-out due 0"
    )


def test_the_sample_vault_shows_its_duplicate_pair(sample: Path) -> None:
    report = classify(sample, NOW)
    assert [(p.target("a"), p.target("b")) for p in report.duplicates] == [
        ("pin-test-clock", "pin-the-clock-in-tests")
    ]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(_WORDS, min_size=1, max_size=7), min_size=2, max_size=25))
def test_with_common_words_the_result_is_every_pair_sharing_an_uncommon_word(
    texts: list[list[str]],
) -> None:
    import pytest

    cap = 3
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(config, "DUP_COMMON_MIN", cap)
        items = [Item("block", f"n{i}", "r.md", i, " ".join(t)) for i, t in enumerate(texts)]
        sets = {i.name: words(i.text) for i in items}
        df = {w: sum(w in s for s in sets.values()) for w in set().union(*sets.values())}
        brute = {
            (a.name, b.name)
            for a, b in itertools.combinations(items, 2)
            if similarity(sets[a.name], sets[b.name]) >= config.DUP_MIN_JACCARD
            and any(df[w] <= cap for w in sets[a.name] & sets[b.name])
        }
        assert {(p.a_name, p.b_name) for p in find_pairs(items)} == brute


def test_entries_without_words_and_an_empty_vault_give_no_pairs() -> None:
    assert find_pairs([]) == []
    assert find_pairs([Item("block", "x", "r.md", 1, "the a of --")] * 2) == []


def test_a_text_holding_the_pass_separator_is_still_one_text() -> None:
    items = [
        Item("block", "a", "r.md", 1, "alpha\x01beta gamma"),
        Item("block", "b", "r.md", 2, "alpha beta gamma"),
    ]
    [pair] = find_pairs(items)
    assert (pair.a_name, pair.b_name, pair.similarity) == ("a", "b", 1.0)


def _registry(blocks: int, group: int) -> str:
    out = ["# Pattern registry\n"]
    for i in range(blocks):
        words = " ".join(f"w{i // group}x{k}" for k in range(8))
        counters = "**success count:** 1\n**last used:** 2026-11-01\n"
        out.append(f"\n### p{i}\n{words} v{i}.\n\n{counters}")
    return "".join(out)


def test_near_identical_groups_list_each_entry_s_best_pairs_only(make_vault: MakeVault) -> None:
    """Groups of near-identical blocks made every pair of each group (10,000 blocks in
    groups of 100: 495,000 pairs, a 121 MB report); here 300 in groups of 10: 1,350."""
    vault = make_vault({"patterns/registry.md": _registry(300, 10)})
    pairs = classify(vault, NOW).duplicates
    assert len(pairs) <= config.DUP_PAIRS_PER_ENTRY * 300
    seen = Counter(n for p in pairs for n in (p.a_name, p.b_name))
    assert set(seen) == {f"p{i}" for i in range(300)}  # every entry keeps its best pairs
    assert max(seen.values()) <= config.DUP_PAIRS_PER_ENTRY
    assert all(int(p.a_name[1:]) < int(p.b_name[1:]) for p in pairs)  # in the vault's order
