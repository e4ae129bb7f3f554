"""The registry's lint codes: VK401 a repeated counter line, VK402 names one link target apart."""

from __future__ import annotations

from tests.conftest import MakeVault
from vaultkeeper.lint.run import lint_vault


def _block(name: str, extra: str = "") -> str:
    return f"### {name}\nBody.\n\n**success count:** 1\n**last used:** 2026-01-01\n{extra}\n"


def test_names_differing_only_in_unicode_form_are_duplicates(make_vault: MakeVault) -> None:
    registry = "# Pattern registry\n\n" + _block("caf\u00e9") + _block("Cafe\u0301")
    vault = make_vault({"patterns/registry.md": registry})
    found = [(f.line, f.code) for f in lint_vault(vault, select=["VK402"]).findings]
    assert found == [(9, "VK402")]


def test_a_second_success_count_line_is_an_error(make_vault: MakeVault) -> None:
    registry = "# Pattern registry\n\n" + _block("twice", "**success count:** 7\n")
    vault = make_vault({"patterns/registry.md": registry})
    findings = lint_vault(vault, select=["VK401"]).findings
    assert [(f.line, f.code, f.severity) for f in findings] == [(8, "VK401", "error")]
    assert "a second **success count:** line" in findings[0].message
