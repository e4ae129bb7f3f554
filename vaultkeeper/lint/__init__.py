"""``vaultkeeper lint``: format (VK1xx), schema (VK2xx), links (VK3xx), registry (VK4xx),
secrets (VK5xx), supersession (VK6xx)."""

from __future__ import annotations

from vaultkeeper.lint.codes import CODES, Finding, Selection
from vaultkeeper.lint.run import LintResult, find_lint_vault, lint_vault
from vaultkeeper.store.obsidian import is_ours

__all__ = [
    "CODES",
    "Finding",
    "LintResult",
    "Selection",
    "find_lint_vault",
    "is_ours",
    "lint_vault",
]
