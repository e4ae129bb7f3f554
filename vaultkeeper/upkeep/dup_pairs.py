"""The duplicates pass as a scan runs it: from the scan cache wherever it can be.

A group's pairs are kept (vaultkeeper.scan.cache) under a digest of its entries; a
project none of whose memory files changed keeps its pairs without its entries being
built; a big group (the registry) is redone for its changed entries only (upkeep/dup_delta.py).
Whatever is kept, the pairs are exactly those ``find_pairs`` gives (tests compare).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from hashlib import blake2b
from typing import TYPE_CHECKING, Any

from vaultkeeper import config
from vaultkeeper.upkeep.duplicates import BLOCK, MEMORY, DuplicatePair, Item, pairs_by_group

if TYPE_CHECKING:
    from vaultkeeper.registry.keptheads import Head
    from vaultkeeper.scan.cache import ScanCache
    from vaultkeeper.upkeep.decay import MemoryFacts


def duplicate_items(heads: Iterable[Head], facts: Iterable[MemoryFacts]) -> list[Item]:
    """Registry blocks (one group) and live memory files (a group per project), each
    group's entries together, groups in the order of their first entry."""
    items = [Item(BLOCK, h.name, h.rel, h.line, f"{h.name} {h.sentence()}") for h in heads]
    for group in project_items(facts, None).values():
        items += group or ()
    return items


def project_items(
    facts: Iterable[MemoryFacts], touched: set[str] | None, only: set[str] | None = None
) -> dict[str, list[Item] | None]:
    """Each project's group, in the order of its first live entry, with its items; None
    instead for a project not in ``touched`` (None: all are), whose items are not built.
    With ``only``, just those groups. The walk gives facts project by project, so the
    project is worked out again only where it changes."""
    out: dict[str, list[Item] | None] = {}
    prefix, group = "", ""
    bucket: list[Item] | None = None
    for f in facts:
        if not prefix or not f.rel.startswith(prefix):  # the next project
            project = f.rel.split("/", 2)[1]
            prefix, group = f"{config.PROJECTS_DIR}/{project}/", f"{MEMORY}:{project}"
            wanted = (touched is None or project in touched) and (only is None or group in only)
            bucket = out.get(group, [] if wanted else None)  # a project met again: its list
        if f.status == "archived":
            continue  # archived (or superseded) lessons are not served: nothing to merge
        if group not in out and (only is None or group in only):
            out[group] = bucket
        if bucket is not None:
            bucket.append(Item(group, f.name, f.rel, 1, f"{f.name} {f.description}"))
    return out


def cached_pairs(
    heads: Sequence[Head], facts: Sequence[MemoryFacts], cache: ScanCache
) -> list[DuplicatePair]:
    """find_pairs of the scan's items, group by group, or the pairs kept for a group
    whose entries and settings are exactly as they were: when no file changed, without
    even building the items. Pairs never cross groups, so a group's pairs are its own."""
    settings = f"{config.DUP_MIN_JACCARD} {config.DUP_COMMON_MIN} {config.DUP_COMMON_SHARE}"
    kept = _kept_pairs(cache.unchanged_pairs(settings))
    if kept is not None:
        return kept

    found: dict[str, list[DuplicatePair]] = {}
    keys: dict[str, str] = {}
    kept_words: dict[str, Any] = {}
    if len(heads) >= config.DUP_DELTA_MIN:  # the registry's items built for its pairs only
        texts = [f"{h.name} {h.sentence()}" for h in heads]
        blocks = heads

        def block(k: int) -> Item:
            h = blocks[k]
            return Item(BLOCK, h.name, h.rel, h.line, texts[k])

        found[BLOCK], kept_words[BLOCK] = _big(cache, settings, BLOCK, texts, block)
        keys[BLOCK], heads = "", ()
    groups: dict[str, list[Item]] = {}
    for item in duplicate_items(heads, ()):
        groups.setdefault(item.group, []).append(item)
    projects = project_items(facts, cache.touched_projects())  # all of them: None
    if None in projects.values():  # a project none of whose files changed: its kept pairs
        for group, items in projects.items():
            entry = None if items is not None else cache.group_entry(settings, group)
            reused = None if entry is None else _kept_pairs(entry[1])
            if entry is not None and reused is not None:
                found[group], keys[group] = reused, entry[0]
                kept_words[group] = cache.group_words(settings, group)  # a big group's
        missing = {g for g, items in projects.items() if items is None and g not in found}
        if missing:  # none kept (the settings changed): built after all
            projects.update(project_items(facts, None, missing))
    groups.update((g, items) for g, items in projects.items() if items is not None)
    again: list[Item] = []  # the small groups to compare again, all in one pass
    for group, items in groups.items():
        if len(items) >= config.DUP_DELTA_MIN:
            found[group], kept_words[group] = _big(
                cache, settings, group, [i.text for i in items], items.__getitem__
            )
            keys[group] = ""
            continue
        # every field an item has (a moved line changes what the pairs say), joined by
        # two separators; as JSON (twice slower) if some value holds one, so that no two
        # lists of items can read the same
        raw = "\x1f".join([f"{i.name}\x1e{i.path}\x1e{i.line}\x1e{i.text}" for i in items])
        if raw.count("\x1e") != 3 * len(items) or raw.count("\x1f") != len(items) - 1:
            raw = json.dumps(items)  # each a named tuple: an array of its fields
        data = raw.encode("utf-8", "surrogatepass")
        key = keys[group] = blake2b(data, digest_size=16).hexdigest()
        pairs = _kept_pairs(cache.group_pairs(settings, group, key))
        if pairs is None:
            again += items
        else:
            found[group] = pairs
    if again:
        found.update(pairs_by_group(again))
    out: list[DuplicatePair] = []
    order = [BLOCK] if BLOCK in keys else []
    for group in [*order, *projects]:  # the registry, then each project as duplicate_items has them
        pairs = found[group]
        dicts = [p.to_dict() for p in pairs]
        cache.keep_group(settings, group, keys[group], dicts, kept_words.get(group))
        out += pairs
    return out


def _big(
    cache: ScanCache, settings: str, group: str, texts: list[str], item_at: Any
) -> tuple[list[DuplicatePair], Any]:
    """A big group's pairs, from what was kept of its words (redone for the entries
    that changed: upkeep/dup_delta.py); no digest of the whole group is needed first."""
    from vaultkeeper.upkeep import (
        dup_delta as dupdelta,  # only for a big group, when some file changed
    )

    delta = dupdelta.group_pairs(texts, item_at, cache.group_words(settings, group))
    return delta.pairs, delta.state


def _kept_pairs(kept: list[Any] | None) -> list[DuplicatePair] | None:
    if kept is None:
        return None
    try:
        return [DuplicatePair.from_dict(p) for p in kept]
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError):
        return None  # not as this version writes them: look again
