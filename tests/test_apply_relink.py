"""Links to a merged-away entry follow it to KEEP, in notes whose frontmatter is unparseable too."""

from __future__ import annotations

import datetime as dt

import pytest
from conftest import snapshot

from vaultkeeper.apply.batch import apply_decision
from vaultkeeper.apply.decision import Decision
from vaultkeeper.index.build import build_index

NOW = dt.datetime(2026, 12, 1, 9, 30, tzinfo=dt.timezone.utc)
KEEP = "### keep\nInject now.\n\n**success count:** 2\n**last used:** 2026-10-03\n"
DROP = "### drop\nPin the clock.\n\n**success count:** 1\n**last used:** 2026-11-18\n"
BROKEN = {
    "bad yaml": (
        "---\nname: [unclosed\nrelated: [[patterns/registry#drop]]\n---\n"
        "see [[patterns/registry#drop]]\n"
    ),
    "never closed": "---\nname: n\nsee [[patterns/registry#drop|the pattern]]\n",
    "a list, not a mapping": "---\n- a\n- b\n---\nbody [[patterns/registry#drop]] here\n",
}


@pytest.mark.parametrize("form", BROKEN, ids=list(BROKEN))
def test_links_in_a_note_with_unparseable_frontmatter_are_rewritten(make_vault, form: str) -> None:
    text = BROKEN[form]
    vault = make_vault(
        {"patterns/registry.md": "# R\n\n" + KEEP + "\n" + DROP, "projects/p/research/n.md": text}
    )
    build_index(vault)
    before = snapshot(vault)
    decision = Decision("merge", "keep", "https://x.org/1", drop="drop")
    done = apply_decision(vault, decision, NOW, confirm=lambda plan: True)
    assert done.outcome == "act", done.reason
    after = (vault / "projects/p/research/n.md").read_text()
    assert after == text.replace("registry#drop", "registry#keep")
    assert apply_decision(vault, Decision("restore", str(done.id)), NOW).outcome == "act"
    assert snapshot(vault) == before


# Links the store's names (before parsing) must never miss: every case, form and place a
# link to DROP can take, and notes that only look like they might hold one.
MEMORY = "---\nname: {n}\ndescription: d\ntype: memory\nstatus: active\n---\n{body}\n"
LINKING = {
    "projects/p/memory/keep.md": "plain text, no link",
    "projects/p/memory/drop.md": "its own [[drop]] stays",
    "projects/p/research/upper.md": "see [[DROP]] and [[Drop.md|the old one]]",
    "projects/p/research/path.md": "see [[projects/p/memory/drop#Heading]] once",
    "projects/p/memory/same.md": "see [[./drop]], ![[../memory/drop]] and `[[drop]]`",
    "projects/p/memory/drop/inside.md": "the folder's own [[./]] leads there",
    "projects/p/research/cafe.md": "a non-ASCII note: caf\u00e9 [[drop]]",
    "projects/p/research/table.md": "| a | [[drop\\|alias]] |\n| b | [[other]] |",
    "projects/p/research/fm.md": '---\nrelated: "[[drop]]"\n---\nbody [[dRoP]]\n',
    "projects/p/research/none.md": "drop without brackets, [[other]] elsewhere",
    "projects/q/memory/drop.md": "another drop: [[drop]] is ambiguous, [[q/memory/drop]] not",
    "projects/p/research/suffix.md": "see [[p/memory/drop]] and [[memory/DROP.md]]",
}


def _relinked_all(vault, monkeypatch, drop_rel: str, block: str | None, keep: str):
    """rewrite_links with the store's rows made, then read from it, is what it is with
    every note parsed, every link resolved, every path named."""
    from vaultkeeper.apply import merge as relink
    from vaultkeeper.store import db
    from vaultkeeper.store.links import Resolver, extract_links

    monkeypatch.setattr(db, "RACY_NS", -(10**12))  # every note settled: its row is kept
    found: dict = {}
    count = relink.rewrite_links(vault, drop_rel, block, keep, found)
    with db.connect(vault) as conn:
        assert conn.execute("SELECT count(*) FROM link_names").fetchone()[0] >= 3
    again: dict = {}
    assert relink.rewrite_links(vault, drop_rel, block, keep, again) == count  # from the rows
    with monkeypatch.context() as m:
        m.setattr(relink, "_may_link", lambda vault, files, *_: list(range(len(files))))
        m.setattr(relink, "_naming", lambda note, wants: extract_links(note))
        m.setattr(relink, "_resolver", lambda rels, wants: Resolver(rels))
        everything: dict = {}
        assert relink.rewrite_links(vault, drop_rel, block, keep, everything) == count
    texts = {r: t for r, (_, t) in everything.items()}
    for got in (found, again):
        assert {r: t for r, (_, t) in got.items()} == texts
        assert list(got) == list(everything)  # the diff lists the files in the same order
    return count, found


def test_the_stored_link_names_find_every_link_to_a_file(make_vault, monkeypatch) -> None:
    files = {
        r: (MEMORY.format(n=r, body=t) if not t.startswith("---") else t)
        for r, t in LINKING.items()
    }
    vault = make_vault(files)
    count, found = _relinked_all(
        vault, monkeypatch, "projects/p/memory/drop.md", None, "projects/p/memory/keep"
    )
    assert count >= 5  # [[drop]] alone is ambiguous: another drop.md exists
    assert "projects/p/research/none.md" not in found
    assert "projects/p/memory/drop/inside.md" in found


def test_the_stored_link_names_find_every_link_to_a_block(make_vault, monkeypatch) -> None:
    registry = "# R\n\n" + KEEP + "\n" + DROP + "\nsee [[#DROP]] and [[#drop|it]]\n"
    vault = make_vault(
        {
            "patterns/registry.md": registry,
            "projects/p/research/a.md": "see [[registry#Drop]] and [[patterns/registry#drop]]",
            "projects/p/research/b.md": "see [[registry#keep]] only, and drop in words",
            "projects/p/research/c.md": "caf\u00e9: [[registry#DROP]]",
        }
    )
    count, found = _relinked_all(vault, monkeypatch, "patterns/registry.md", "drop", "x#keep")
    assert count == 5
    assert sorted(found) == [
        "patterns/registry.md", "projects/p/research/a.md", "projects/p/research/c.md"
    ]  # fmt: skip


def test_a_regeneration_of_the_index_keeps_what_a_merge_asks_of_every_note(
    make_vault, monkeypatch
) -> None:
    """The index reads every note once: it keeps what the note's links name, so the
    first merge after it reads no note whose key is unchanged, and finds the same."""
    from vaultkeeper.apply import merge as relink
    from vaultkeeper.index import linknames, rows
    from vaultkeeper.store import db

    monkeypatch.setattr(db, "RACY_NS", -(10**12))  # every note settled: its row is kept
    monkeypatch.setattr(rows, "RACY_NS", -(10**12))
    files = {
        r: (MEMORY.format(n=r, body=t) if not t.startswith("---") else t)
        for r, t in LINKING.items()
    }
    vault = make_vault(files)
    build_index(vault)
    with monkeypatch.context() as m:
        m.setattr(linknames, "read_names", lambda *_: pytest.fail("a note was read"))
        found: dict = {}
        count = relink.rewrite_links(
            vault, "projects/p/memory/drop.md", None, "projects/p/memory/keep", found
        )
    base = db.path_of(vault)
    for name in (base.name, base.name + "-wal", base.name + "-shm"):
        (base.parent / name).unlink(missing_ok=True)  # no store: every note read
    everything: dict = {}
    assert count == relink.rewrite_links(
        vault, "projects/p/memory/drop.md", None, "projects/p/memory/keep", everything
    )
    assert {r: t for r, (_, t) in found.items()} == {r: t for r, (_, t) in everything.items()}
