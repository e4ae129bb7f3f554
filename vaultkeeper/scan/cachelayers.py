"""The scan cache's two layers: a base, and the changes written since (scancachefile).

``overlay`` reads a section as base + changes (an entry, or None for one gone);
``changes`` is its inverse, what a scan writes when it writes only a delta. The
duplicates section is layered per group (``PAIR_PARTS``), so a session that changes one
project's lessons writes that project's pairs, not the registry's kept words.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def overlay(base: dict[str, Any], delta: dict[str, Any]) -> dict[str, Any]:
    merged = {**base, **delta}
    for rel, entry in delta.items():
        if entry is None:
            del merged[rel]
    return merged


def changes(base: dict[str, Any], kept: dict[str, Any]) -> dict[str, Any]:
    """The entries of ``kept`` that ``base`` lacks or holds otherwise, None for those gone
    (overlay's inverse). Entries read from the base are the very objects it holds, so
    most are told apart by identity, not compared."""
    changed = {k: v for k, v in kept.items() if base.get(k) is not v and base.get(k) != v}
    changed.update((k, None) for k in base.keys() - kept.keys())
    return changed


PAIR_PARTS = ("groups", "words")  # per group: its pairs; a big group's words (dupdelta)


def pairs_overlay(base: dict[str, Any], delta: Any) -> dict[str, Any]:
    """The duplicates section: the base's, with the delta's groups over it."""
    if not isinstance(delta, dict):
        return {}
    merged = {k: v for k, v in delta.items() if k not in PAIR_PARTS}
    for part in PAIR_PARTS:
        kept, changed = base.get(part), delta.get(part)
        if not isinstance(changed, dict):
            return {}
        merged[part] = overlay(kept if isinstance(kept, dict) else {}, changed)
    return merged
