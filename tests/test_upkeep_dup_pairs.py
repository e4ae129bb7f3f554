"""Which entries the duplicates pass compares, group by group (vaultkeeper/upkeep/duplicates.py)."""

from __future__ import annotations

from vaultkeeper.upkeep.decay import MemoryFacts
from vaultkeeper.upkeep.duplicates import duplicate_items, project_items


def fact(rel: str, status: str = "active") -> MemoryFacts:
    name = rel.rsplit("/", 1)[1][:-3]
    return MemoryFacts(rel, name, f"about {name}", status, None, None, None)


def test_a_project_met_again_keeps_every_entry_in_its_one_group() -> None:
    facts = [
        fact("projects/p/memory/a.md"),
        fact("projects/q/memory/b.md"),
        fact("projects/p/memory/c.md"),
        fact("projects/q/memory/d.md", status="archived"),
    ]
    groups = project_items(facts, None)
    assert {g: [i.path for i in items or ()] for g, items in groups.items()} == {
        "memory:p": ["projects/p/memory/a.md", "projects/p/memory/c.md"],
        "memory:q": ["projects/q/memory/b.md"],
    }
    assert [i.path for i in duplicate_items((), facts)] == [
        "projects/p/memory/a.md",
        "projects/p/memory/c.md",
        "projects/q/memory/b.md",
    ]
    untouched = project_items(facts, {"q"})
    assert untouched["memory:p"] is None and untouched["memory:q"] is not None
