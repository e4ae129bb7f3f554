"""bench/sequence.py: the order it runs commands in holds every ordered pair."""

from __future__ import annotations

import sys

import pytest

from tests.conftest import REPO

sys.path.insert(0, str(REPO / "bench"))
from sequence import ALL, de_bruijn  # noqa: E402


@pytest.mark.parametrize("k", [1, 2, 3, len(ALL)])
def test_every_ordered_pair_follows_once_per_round(k: int) -> None:
    order = de_bruijn(k)
    assert len(order) == k * k
    twice = order + order  # two rounds: the wrap from the last to the first counts too
    pairs = {(twice[i], twice[i + 1]) for i in range(len(twice) - 1)}
    assert pairs == {(a, b) for a in range(k) for b in range(k)}
