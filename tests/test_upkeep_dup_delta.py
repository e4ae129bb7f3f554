"""The duplicates pass as a scan runs it, from the pairs it kept, gives what a fresh pass gives."""

from __future__ import annotations

import json
from pathlib import Path
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
    assert compared == [] and kept["groups"]["block"][1][0][3] == 11
    _pass([*moved[:2], moved[2]._replace(text="alpha beta gamma delta")], [], kept, [])
    assert compared == [1]  # a text changed: the group is compared again


def test_rows_not_as_this_version_writes_them_are_compared_again() -> None:
    heads = [_Head(f"n{k}", "r.md", k + 1, "alpha beta gamma delta") for k in range(2)]
    kept = _pass(heads, [], None, [])
    digest, pairs = kept["groups"]["block"]
    assert len(pairs) == 1
    cases: list[Any] = [
        [["block"]],
        [[*pairs[0][:9], [0, 9]]],
        [[*pairs[0][:9], 1]],
        [[*pairs[0][:7], "0.5", *pairs[0][8:]]],
        {},
    ]
    for broken in cases:
        forged = {**kept, "groups": {"block": [digest, broken]}}
        _pass(heads, [], forged, [])


# -- the registry blocks from real files: the scan's rows, a file read again ----------------

_BLOCK_TEXT = st.lists(
    st.sampled_from(
        [*_VOCAB[:6], "the", "a", "Tests", "test", "policies", "policy", "K\u212a", "caf\u00e9"]
    ),
    max_size=5,
).map(" ".join)
_BLOCK_EDIT = st.tuples(
    st.sampled_from(["set", "set", "add", "drop", "move"]), st.integers(0, 60), _BLOCK_TEXT
)


def _heads_pass(vault: Path, rows: dict[str, Any], kept: Any) -> tuple[list[Any], ScanCache]:
    """A scan's registry heads and duplicates pass from the rows a scan before kept; its
    pairs checked against a fresh pass."""
    from vaultkeeper.registry.keptheads import load_heads

    cache = ScanCache(registry=dict(rows), pairs=json.loads(json.dumps(kept)))
    cache.limit = 1 << 62  # every file settled: an unchanged one comes from its row
    heads, _ = load_heads(vault, cache)
    got = dup.cached_pairs(heads, [], cache)
    assert got == dup.find_pairs(dup.duplicate_items(heads, []))
    return heads, cache


def _write_registry(vault: Path, files: list[list[tuple[str, str]]]) -> None:
    for n, blocks in enumerate(files):
        path = vault / config.PATTERNS_DIR / f"r{n}.md"
        text = "".join(f"### {name}\n{words}.\n\n" for name, words in blocks)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")


@settings(max_examples=120, deadline=None)
@given(
    st.lists(st.lists(_BLOCK_TEXT, max_size=14), min_size=1, max_size=3),
    st.lists(
        st.lists(st.tuples(st.integers(0, 2), _BLOCK_EDIT), min_size=1, max_size=3), max_size=5
    ),
)
def test_after_edits_of_registry_files_the_blocks_pairs_are_those_of_a_fresh_pass(
    tmp_path_factory: pytest.TempPathFactory,
    texts: list[list[str]],
    turns: list[list[tuple[int, tuple[str, int, str]]]],
) -> None:
    vault = tmp_path_factory.mktemp("vault")
    (vault / config.PATTERNS_DIR).mkdir()
    names = iter(f"{w}{k}" if k % 7 else "the" for k, w in enumerate(_VOCAB * 100))
    files = [[(next(names), t) for t in file] for file in texts]
    _write_registry(vault, files)
    _, cache = _heads_pass(vault, {}, None)
    for edits in turns:
        for at_file, (kind, at, text) in edits:
            blocks = files[at_file % len(files)]
            at %= len(blocks) + 1
            if kind == "add" or not blocks:
                blocks.insert(at, (next(names), text))
            elif kind == "set":
                blocks[at % len(blocks)] = (blocks[at % len(blocks)][0], text)
            elif kind == "drop":
                del blocks[at % len(blocks)]
            else:
                blocks.insert(0, blocks.pop(at % len(blocks)))
        _write_registry(vault, files)
        _, cache = _heads_pass(vault, cache.kept_registry, cache.kept_pairs)


def test_a_blocks_new_sentence_compares_that_block_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(config, "DUP_COMMON_MIN", 20)
    (tmp_path / config.PATTERNS_DIR).mkdir()
    words = ["alpha beta gamma delta", "alpha beta gamma eps", "zeta eta theta iota"]
    files = [[(f"b{k}", words[k % 3]) for k in range(30)], [("c0", "kappa zeta eta")]]
    _write_registry(tmp_path, files)
    _, cache = _heads_pass(tmp_path, {}, None)
    compared: list[int] = []
    real = dup.pairs_by_group

    def noting(items: Any, *threshold: float) -> Any:
        compared.extend([] if threshold else [len(items)])  # find_pairs (the check) passes one
        return real(items, *threshold)

    monkeypatch.setattr(dup, "pairs_by_group", noting)
    files[1][0] = ("c0", "zeta eta theta iota")  # now a duplicate of every third block
    _write_registry(tmp_path, files)
    _, cache = _heads_pass(tmp_path, cache.kept_registry, cache.kept_pairs)
    pairs = cache.kept_pairs["groups"]["block"][1]
    assert compared == [] and sum(p[4] == "c0" for p in pairs) == 10
    files[0][4] = ("b4", "omega")  # a block of the other file: no pair is left to it
    _write_registry(tmp_path, files)
    _, cache = _heads_pass(tmp_path, cache.kept_registry, cache.kept_pairs)
    pairs = cache.kept_pairs["groups"]["block"][1]
    assert compared == [] and all("b4" not in (p[1], p[4]) for p in pairs)
