"""take_off: an earlier edit taken back off a file changed since, or refused where they meet."""

from __future__ import annotations

import pytest

from vaultkeeper.apply.trash import take_off
from vaultkeeper.errors import GateRefused

BACK = "a\nb\n**success count:** 2\n**last used:** 2026-10-03\nc\n"
BASE = "a\nb\n**success count:** 5\n**last used:** 2026-11-18\n\n#### Merged from x\nx\nc\n"


def test_unchanged_since_gives_back_the_original() -> None:
    assert take_off(BASE, BACK, BASE, "f") == BACK


def test_a_use_since_keeps_its_count_and_day() -> None:
    now = BASE.replace("count:** 5", "count:** 7").replace("2026-11-18", "2026-12-01")
    assert take_off(BASE, BACK, now, "f") == BACK.replace("count:** 2", "count:** 4").replace(
        "2026-10-03", "2026-12-01"
    )


def test_an_edit_elsewhere_is_kept() -> None:
    assert take_off(BASE, BACK, "z\n" + BASE + "end\n", "f") == "z\n" + BACK + "end\n"


@pytest.mark.parametrize(
    "now",
    [
        BASE.replace("\nx\n", "\nx edited\n"),  # inside what the edit added
        BASE.replace("#### Merged from x\nx\n", "#### Merged from x\nnew\nx\n"),  # inserted in it
        BASE.replace("count:** 5", "count:** 1"),  # below what the edit added
        BASE.replace("count:** 5", "count:** many"),  # no count at all
    ],
)
def test_an_edit_where_the_edit_wrote_is_refused(now: str) -> None:
    with pytest.raises(GateRefused, match="f: line .* was edited since"):
        take_off(BASE, BACK, now, "f")


def test_both_inserting_at_one_place_is_refused() -> None:
    with pytest.raises(GateRefused):
        take_off("a\nc\n", "a\nb\nc\n", "a\nz\nc\n", "f")
