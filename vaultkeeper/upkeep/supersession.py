"""Supersession: a newer entry replaces an older one without deleting it.

An old entry carries ``superseded_by: "[[path/of/newer]]"`` and the newer one lists it
under ``supersedes``. A superseded entry stays in the vault and in the index (marked),
but is never served as current truth: the brief, recall and search leave it out unless
asked, through ``is_superseded``. Chains (a superseded by b superseded by c) end at the
entry to read instead: ``newest``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from vaultkeeper import config
from vaultkeeper.store.links import parse_link
from vaultkeeper.store.model import Note


def _meta(entry: Note | Mapping[str, Any]) -> Mapping[str, Any]:
    return entry.meta if isinstance(entry, Note) else entry


def link_target(value: object) -> str | None:
    """``"[[projects/a/memory/new|alias]]"`` -> ``projects/a/memory/new``; a bare path too.

    A one-element list (``superseded_by: ["[[new]]"]``, as Obsidian's list property
    writes it) is the same link: read as live, an old entry would be served as current.
    """
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text.startswith("[[") and text.endswith("]]"):
        text = text[2:-2]
    target = parse_link(text)[0]
    return target or None


def superseded_by(entry: Note | Mapping[str, Any]) -> str | None:
    """The link target of the newer entry, as written (resolve it with links.Resolver)."""
    return link_target(_meta(entry).get(config.SUPERSEDED_BY_KEY))


def is_superseded(entry: Note | Mapping[str, Any]) -> bool:
    """True when the entry names a newer one: never serve it as current truth."""
    return superseded_by(entry) is not None


def supersedes(entry: Note | Mapping[str, Any]) -> list[str]:
    """Link targets of the entries this one replaces (a string or a list of them)."""
    value = _meta(entry).get(config.SUPERSEDES_KEY)
    items = value if isinstance(value, list) else [value]
    return [t for t in (link_target(v) for v in items) if t is not None]


def wikilink(rel_path: str) -> str:
    """The link a supersession writes: the vault path without ``.md``, never ambiguous."""
    return f"[[{rel_path.removesuffix('.md')}]]"


def newest(start: str, next_of: Callable[[str], str | None]) -> tuple[str, list[str]]:
    """Follow ``next_of`` from ``start``: (the last entry reached, the chain walked).

    A chain that comes back to an entry already walked stops there; the caller sees the
    loop as ``chain[-1]`` appearing earlier in ``chain``.
    """
    chain, seen = [start], {start}
    while (following := next_of(chain[-1])) is not None:
        chain.append(following)
        if following in seen:
            return chain[-2], chain
        seen.add(following)
    return chain[-1], chain


def recorded_value(lines: str, key: str) -> Any:
    """What a key's journaled lines hold (``superseded_by: ""`` -> ``""``); None for
    lines that no longer parse (a journal edited by hand)."""
    from vaultkeeper.store.frontmatter import load_yaml
    from vaultkeeper.store.model import ParseError

    try:
        data = load_yaml(lines)
    except ParseError:
        return None
    return data.get(key) if isinstance(data, dict) else None
