"""The link graph: VK3xx (broken and ambiguous links, orphans, the index's load budget)
and VK6xx (supersession chains that loop, lead nowhere, or live links to a superseded
entry, which an agent would take for current truth)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping

from vaultkeeper import config
from vaultkeeper.index.files import is_index_file
from vaultkeeper.index.headings import AnchorTable
from vaultkeeper.lint.codes import Finding
from vaultkeeper.store.links import (
    INNER,
    Link,
    Resolver,
    extract_links,
    parse_link,
)
from vaultkeeper.store.model import Note
from vaultkeeper.upkeep.supersession import newest, superseded_by, supersedes

Said = tuple[tuple[str, ...], tuple[str, str, str] | None]  # targets, (code, what, why)


class LinkCheck(Resolver):
    """The vault's name table and VK301 / VK302 / VK305 on a note's links. A link means
    the same from every note unless a path from the note's folder or a name several
    files share is in it: each such link is judged once for the whole vault (tens of
    thousands of links, a few thousand distinct), the rest once per folder."""

    def __init__(
        self, rel_paths: Iterable[str], enabled: Callable[[str], bool], anchors: AnchorTable | None
    ) -> None:
        super().__init__(rel_paths)
        self.enabled = enabled
        self.anchors = anchors  # None: VK305 does not run
        self._plain: dict[str, Said] = {}  # link text -> what it says from any note
        self._near: dict[tuple[str, str], Said] = {}  # (link text, folder or note) -> same
        self._candidates: dict[str, tuple[str, ...] | None] = {}  # a target's, any folder

    def said(self, inner: str, source: str) -> Said:
        """Where ``[[inner]]`` in note ``source`` leads, and the finding it gets (or None)."""
        if inner in self._plain:
            return self._plain[inner]
        target, subpath, _ = parse_link(inner)
        key = (inner, source.rpartition("/")[0] if target else source)
        if key in self._near:
            return self._near[key]
        if target and target not in self._candidates:
            self._candidates[target] = self.candidates(target)
        some = self._candidates[target] if target else None
        targets = self.near(some, target, source) if target else (source,)
        said = targets, self._judge(target, subpath, targets)
        if some is not None and len(some) <= 1:
            self._plain[inner] = said  # no folder changes what it means
        else:
            self._near[key] = said
        return said

    def _judge(
        self, target: str, subpath: str, targets: tuple[str, ...]
    ) -> tuple[str, str, str] | None:
        if len(targets) == 1:
            why = self.anchors.missing(targets[0], subpath) if self.anchors else None
            return None if why is None else ("VK305", "broken", f"{targets[0]} has {why}")
        if not targets:
            why = f"no file named {target!r} in the vault"
            return ("VK301", "broken", why) if self.enabled("VK301") else None
        shown = ", ".join(targets[:3]) + (", ..." if len(targets) > 3 else "")
        why = f"{len(targets)} files match ({shown}); write more of the path"
        return ("VK302", "ambiguous", why) if self.enabled("VK302") else None

    def suspects(self, rel: str, text: str) -> set[str]:
        """The distinct ``[[...]]`` texts in note ``rel`` that may give a finding, wherever
        they stand (code or not): a note with none needs no closer look."""
        plain = self._plain
        return {
            inner
            for inner in set(INNER.findall(text))
            if (plain[inner] if inner in plain else self.said(inner, rel))[1] is not None
        }

    def check(self, rel: str, links: Iterable[Link], edges: set[str]) -> Iterator[Finding]:
        """The findings of ``rel``'s links; resolved targets are added to ``edges``."""
        for link in links:
            targets, said = self.said(link.raw[2 + link.embed : -2], rel)
            if len(targets) == 1:
                edges.add(targets[0])
            if said is not None:
                code, what, why = said
                yield Finding(rel, link.line, link.col, code, f"{what} link {link.raw}: {why}")


def check_orphans(entries: Iterable[str], edges: Mapping[str, set[str]]) -> Iterator[Finding]:
    """VK303: entries the index does not reach, directly or through other notes."""
    seen = {config.INDEX_FILE}
    queue = deque(seen)
    while queue:
        for target in edges.get(queue.popleft(), set()) - seen:
            seen.add(target)
            queue.append(target)
    why = f"orphan: not reachable from {config.INDEX_FILE} by links (run `vaultkeeper index`)"
    yield from (Finding(rel, 1, 1, "VK303", why) for rel in entries if rel not in seen)


def check_budget(text: str) -> Iterator[Finding]:
    """VK304: the file an agent loads first must fit the agent's load budget."""
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    size = len(text.encode("utf-8"))
    split = "(`vaultkeeper index` splits it into sub-indexes)"
    if lines > (most := config.INDEX_MAX_LINES):
        why = f"{lines} lines, over the load budget of {most}: agents stop reading here {split}"
        yield Finding(config.INDEX_FILE, most + 1, 1, "VK304", why)
    if size > config.INDEX_MAX_BYTES:
        why = f"{size} bytes, over the load budget of {config.INDEX_MAX_BYTES} {split}"
        yield Finding(config.INDEX_FILE, 1, 1, "VK304", why)


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
            why = f"{config.SUPERSEDED_BY_KEY} [[{target}]] points at {what}: name the newer "
            why += "entry by its path, or `apply reactivate` this one"
            yield Finding(note.rel, _line(note), 1, "VK602", why)
    if not by:
        return
    if enabled("VK601"):
        for note in notes:
            if note.rel in by:
                _, chain = newest(note.rel, by.get)
                if chain[-1] == note.rel and len(chain) > 1:
                    why = f"supersession chain loops: {' -> '.join(chain)}"
                    yield Finding(note.rel, _line(note), 1, "VK601", why)
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
