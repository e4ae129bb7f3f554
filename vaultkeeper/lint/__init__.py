"""``vaultkeeper lint``: format (VK1xx), schema (VK2xx), links (VK3xx), registry (VK4xx).

The names below are loaded when first asked for (PEP 562): ``status`` reads the last
lint's figures (lint/summary.py) without importing every rule.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_WHERE = {
    "CODES": "vaultkeeper.lint.codes",
    "Finding": "vaultkeeper.lint.codes",
    "Selection": "vaultkeeper.lint.codes",
    "LintResult": "vaultkeeper.lint.run",
    "find_lint_vault": "vaultkeeper.lint.run",
    "lint_vault": "vaultkeeper.lint.run",
    "is_ours": "vaultkeeper.store.obsidian",
}


def __getattr__(name: str) -> Any:

    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_WHERE[name]), name)
