"""VK6xx: supersession links -- chains that loop, links to nothing, live links to the old.

A superseded entry is kept for history; what must not happen is an agent following a
live note's link to it and taking it for current truth (VK603 names the newer entry),
or a ``superseded_by`` that leads nowhere (VK602) or round in a circle (VK601).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from vaultkeeper import config
from vaultkeeper.index.files import is_index_file
from vaultkeeper.lint.codes import Finding
from vaultkeeper.store.links import Resolver, extract_links
from vaultkeeper.store.model import Note
from vaultkeeper.upkeep.supersession import newest, superseded_by, supersedes


def _line(note: Note) -> int:
    fm = note.frontmatter
    return 1 if fm is None else fm.key_lines.get(config.SUPERSEDED_BY_KEY, 1)


def check_supersession(
    notes: Iterable[Note], resolver: Resolver, enabled: Callable[[str], bool]
) -> Iterator[Finding]:
    notes = list(notes)
    by: dict[str, str | None] = {}  # superseded entry -> the newer one (None: unresolved)
    for note in notes:
        target = superseded_by(note)
        if target is None:
            continue
        found = resolver.resolve(target, note.rel)
        by[note.rel] = found.resolved
        if found.resolved is None and enabled("VK602"):
            what = "nothing" if found.broken else f"{len(found.targets)} files (ambiguous)"
            yield Finding(
                note.rel,
                _line(note),
                1,
                "VK602",
                f"{config.SUPERSEDED_BY_KEY} [[{target}]] points at {what}: name the newer "
                "entry by its path, or `apply reactivate` this one",
            )
    if not by:
        return
    if enabled("VK601"):
        for note in notes:
            if note.rel in by:
                _, chain = newest(note.rel, by.get)
                if chain[-1] == note.rel and len(chain) > 1:
                    yield Finding(
                        note.rel,
                        _line(note),
                        1,
                        "VK601",
                        f"supersession chain loops: {' -> '.join(chain)}",
                    )
    if enabled("VK603"):
        yield from _live_links(notes, resolver, by)


def _live_links(
    notes: list[Note], resolver: Resolver, by: dict[str, str | None]
) -> Iterator[Finding]:
    for note in notes:
        if (
            not note.is_entry
            or note.rel in by
            or is_index_file(note.rel)
            or note.get_str("status") == "archived"
        ):
            continue
        listed = set(supersedes(note))  # the newer entry names what it replaces: fine
        for link in extract_links(note):
            if link.in_frontmatter and link.target in listed:
                continue
            target = resolver.resolve(link.target, note.rel).resolved
            if target is None or target not in by:
                continue
            last, chain = newest(target, by.get)
            if chain[-1] in chain[:-1]:
                continue  # a loop: VK601 says so at the entries themselves
            newer = (
                f"superseded by {last.removesuffix('.md')}: link the newer entry"
                if last != target
                else "superseded (its newer entry cannot be found)"
            )
            yield Finding(note.rel, link.line, link.col, "VK603", f"links to {target}, {newer}")
