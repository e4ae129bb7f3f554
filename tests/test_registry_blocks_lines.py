"""heads_name rules a registry file out only when no line of it can head a block of that name."""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultkeeper.registry.blocks import RegistryBlock, heads_name, parse_blocks


@pytest.mark.parametrize(
    "text",
    [
        "### alpha\n",
        "### alpha",
        "###\talpha \t\r\n",
        "  ### alpha ##\n",
        "# x\n\n### alpha #\nbody\n",
        "see alpha-two\n### alpha\n",
    ],
)
def test_a_heading_of_that_name_is_seen(text: str) -> None:
    assert [h.name for h in parse_heads_of(text)] == ["alpha"]
    assert heads_name(text, "alpha")


@pytest.mark.parametrize(
    "text", ["### alpha-two\n", "[[alpha]]\n", "### alphabet\n", "alpha\n", "### xalpha\n", ""]
)
def test_a_file_without_one_is_ruled_out(text: str) -> None:
    assert "alpha" not in [h.name for h in parse_heads_of(text)]
    assert not heads_name(text, "alpha")


def parse_heads_of(text: str) -> list[RegistryBlock]:
    return parse_blocks(Path("r.md"), "r.md", text)
