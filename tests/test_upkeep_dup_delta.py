"""The duplicates pass as a scan runs it, from the pairs it kept, gives what a fresh pass gives."""

from __future__ import annotations

import json
from typing import Any, NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultkeeper import config
from vaultkeeper.scan.cache import ScanCache
from vaultkeeper.upkeep import duplicates as dup
from vaultkeeper.upkeep.decay import MemoryFacts

_VOCAB = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "iota", "kappa"]


class _Head(NamedTuple):
    name: str
    rel: str
    line: int
    text: str

    def sentence(self) -> str:
        return self.text


@pytest.fixture(autouse=True)
def small_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    # tiny groups that still have common words, and a limit that moves with their size
    monkeypatch.setattr(config, "DUP_COMMON_MIN", 2)
    monkeypatch.setattr(config, "DUP_COMMON_SHARE", 0.25)


def _pass(heads: list[_Head], facts: list[MemoryFacts], kept: Any, touched: list[str]) -> Any:
    """One scan's pass from ``kept`` (as the store gives it back), the files in
    ``touched`` read again; its pairs checked against a fresh pass, and what it kept."""
    cache = ScanCache(pairs=json.loads(json.dumps(kept)))
    cache.misses, cache.missed = 1, touched
    got = dup.cached_pairs(heads, facts, cache)  # type: ignore[arg-type]
    assert got == dup.find_pairs(dup.duplicate_items(heads, facts))  # type: ignore[arg-type]
    return cache.kept_pairs


def _fact(project: str, n: int, text: str, status: str = "active") -> MemoryFacts:
    rel = f"projects/{project}/memory/m{n}.md"
    return MemoryFacts(rel, f"m{n}", text, status, None, None, None)


_TEXT = st.lists(
    st.sampled_from([*_VOCAB, "the", "Tests", "test", "K\u212a", "k", "caf\u00e9"]), max_size=6
).map(" ".join)
_EDIT = st.tuples(
    st.sampled_from(["set", "add", "drop", "move", "lesson", "archive"]), st.integers(0, 40), _TEXT
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_TEXT, max_size=24), st.lists(st.lists(_EDIT, min_size=1, max_size=3), max_size=6))
def test_after_any_edits_the_pairs_are_those_of_a_fresh_pass(
    texts: list[str], turns: list[list[tuple[str, int, str]]]
) -> None:
    blocks = [(f"n{k}", text) for k, text in enumerate(texts)]
    lessons = {(p, n): (text, "active") for n, text in enumerate(texts) for p in "ab"[n % 2 :][:1]}

    def state() -> tuple[list[_Head], list[MemoryFacts]]:
        heads = [_Head(name, "r.md", 3 * k + 1, text) for k, (name, text) in enumerate(blocks)]
        facts = [_fact(p, n, text, status) for (p, n), (text, status) in sorted(lessons.items())]
        return heads, facts

    kept = _pass(*state(), None, [])
    for edits in turns:
        touched: list[str] = []
        for kind, at, text in edits:
            at %= len(blocks) + 1
            if kind == "add" or not blocks:
                blocks.insert(at, (f"x{len(blocks)}{text}", text))
            elif kind == "set":
                blocks[at % len(blocks)] = (blocks[at % len(blocks)][0], text)
            elif kind == "drop":
                del blocks[at % len(blocks)]
            elif kind == "move":  # lines move, no word changes: the kept pairs, moved
                blocks.insert(0, blocks.pop(at % len(blocks)))
            else:
                key = ("ab"[at % 2], at % 5)
                lessons[key] = (text, "archived" if kind == "archive" else "active")
                touched.append(_fact(*key, text).rel)
        kept = _pass(*state(), kept, touched)


def test_a_count_or_a_moved_line_keeps_the_pairs_without_comparing_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts = ["alpha beta gamma delta"] * 2 + ["eta"]
    heads = [_Head(f"n{k}", "r.md", k + 1, t) for k, t in enumerate(texts)]
    kept = _pass(heads, [], None, [])
    compared: list[int] = []
    real = dup.pairs_by_group

    def noting(items: Any, *threshold: float) -> Any:
        compared.extend([] if threshold else [1])  # find_pairs (the check) passes one
        return real(items, *threshold)

    monkeypatch.setattr(dup, "pairs_by_group", noting)
    moved = [h._replace(line=h.line + 10) for h in heads]
    kept = _pass(moved, [], kept, [])
    assert compared == [] and kept["groups"]["block"][1][0]["a"]["line"] == 11
    _pass([*moved[:2], moved[2]._replace(text="alpha beta gamma delta")], [], kept, [])
    assert compared == [1]  # a text changed: the group is compared again


def test_rows_not_as_this_version_writes_them_are_compared_again() -> None:
    heads = [_Head(f"n{k}", "r.md", k + 1, "alpha beta gamma delta") for k in range(2)]
    kept = _pass(heads, [], None, [])
    digest, pairs = kept["groups"]["block"]
    assert len(pairs) == 1
    cases: list[Any] = [
        [{"kind": "block"}],
        [{**pairs[0], "at": [0, 9]}],
        [{**pairs[0], "at": 1}],
        {},
    ]
    for broken in cases:
        forged = {**kept, "groups": {"block": [digest, broken]}}
        _pass(heads, [], forged, [])
