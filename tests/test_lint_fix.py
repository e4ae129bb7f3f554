"""lint --fix: a fixed heading never lands on another block's name."""

from __future__ import annotations

from tests.conftest import MakeVault
from vaultkeeper.lint.run import lint_vault


def _block(name: str, extra: str = "") -> str:
    return f"### {name}\nBody.\n\n**success count:** 1\n**last used:** 2026-01-01\n{extra}\n"


def test_fix_never_renames_a_heading_onto_another_block(make_vault: MakeVault) -> None:
    blocks = [_block("a \u2014 b"), _block("a -- b"), _block("c \u2192 d")]
    registry = "# Pattern registry\n\n" + "".join(blocks)
    vault = make_vault({"patterns/registry.md": registry})
    result = lint_vault(vault, select=["VK101", "VK4"], fix=True)
    text = (vault / "patterns/registry.md").read_text()
    assert "### a \u2014 b\n" in text and "### a -- b\n" in text  # left for a person
    assert "### c -> d\n" in text  # no clash: fixed
    assert result.fixed == 1
    # "a — b" and "a -- b" are one link target too (VK402)
    assert sorted(f.code for f in result.findings) == ["VK101", "VK402"]
