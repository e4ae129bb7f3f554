"""`new_entry(..., body=...)`: the note's text under its title replaces the template's."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.conftest import MakeVault, snapshot
from vaultkeeper.entries.create import new_entry
from vaultkeeper.errors import UsageError

TODAY = dt.date(2026, 12, 1)


def test_body_replaces_the_template_prose_and_keeps_the_frontmatter(make_vault: MakeVault) -> None:
    vault = make_vault()
    result = new_entry(
        vault, "memory", "retry-once", "Retry once", project="api", today=TODAY,
        body="\n\nFirst line \u2014 with a dash.\r\n\n## Why\n\nBecause.\n\n",
    )  # fmt: skip
    text = (vault / result.path).read_text()
    front, body = text.split("\n---\n", 1)
    assert 'holdout_until: "2026-12-08"' in front and "status: held_out" in front
    assert body == "\n# retry-once\n\nFirst line -- with a dash.\n\n## Why\n\nBecause.\n"


@pytest.mark.parametrize(
    ("kind", "body", "why"),
    [
        ("memory", "caf\u00e9", "line 1, column 4"),
        ("memory", "ok\nbell \x07", "line 2, column 6"),
        ("memory", "  \n ", "must not be empty"),
        ("pattern", "text", "not a body"),
    ],
)
def test_a_bad_body_is_refused_and_nothing_is_written(
    make_vault: MakeVault, kind: str, body: str, why: str
) -> None:
    vault = make_vault()
    before = snapshot(vault)
    with pytest.raises(UsageError, match=why):
        new_entry(vault, kind, "x-entry", "d", project="api", today=TODAY, body=body)
    assert snapshot(vault) == before
