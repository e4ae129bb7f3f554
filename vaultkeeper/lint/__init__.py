"""``vaultkeeper lint``: format (VK1xx), schema (VK2xx), links (VK3xx), registry (VK4xx),
secrets (VK5xx), supersession (VK6xx)."""

from __future__ import annotations

from vaultkeeper.lint.run import find_lint_vault, lint_vault

__all__ = ["find_lint_vault", "lint_vault"]
