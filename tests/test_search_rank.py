"""search: ranked hits over live entries, with path, line, snippet and what to cite."""

from __future__ import annotations

import os

import pytest

from tests.conftest import MakeVault
from vaultkeeper.index.build import build_index
from vaultkeeper.search.rank import Searcher, inert, terms

NOTE = """---
name: {name}
description: {description}
type: {type}
status: {status}
label: fact
---

# {name}

{body}
"""


def note(
    name: str, description: str, body: str, status: str = "active", kind: str = "memory"
) -> str:
    return NOTE.format(name=name, description=description, body=body, status=status, type=kind)


REGISTRY = """# Pattern registry

### pin-test-clock
Inject `now` into date logic instead of sleeping in tests.

**success count:** 2
**last used:** 2026-10-03
"""


def test_name_beats_description_beats_body_and_more_words_beat_fewer(make_vault: MakeVault) -> None:
    vault = make_vault({
        "projects/a/memory/cache-keys.md": note("cache-keys", "How keys are built", "plain"),
        "projects/a/memory/keys.md": note("keys", "About the cache layer", "plain"),
        "projects/a/memory/other.md": note("other", "Nothing", "we talk about cache here"),
        "projects/a/memory/both.md": note("both", "x", "cache and keys in one line"),
    })  # fmt: skip
    hits = Searcher(vault).search("cache keys", project="a")
    assert [h.name for h in hits][:1] == ["cache-keys"]  # both words, one in the name
    assert {h.name for h in hits[:3]} == {"cache-keys", "keys", "both"}
    assert hits[-1].name == "other"  # one word, in the body only


def test_hit_points_at_the_line_and_says_what_to_cite(make_vault: MakeVault) -> None:
    vault = make_vault({
        "projects/web/memory/grid.md": note("grid", "Layout", "first line\nuse css grid here"),
        "patterns/registry.md": REGISTRY,
    })  # fmt: skip
    searcher = Searcher(vault)
    grid = searcher.search("grid")[0]
    lines = (vault / grid.path).read_text().splitlines()
    assert grid.path == "projects/web/memory/grid.md"
    assert "css grid" in lines[grid.line - 1] or lines[grid.line - 1] == "# grid"
    body = searcher.search("css")[0]
    assert lines[body.line - 1] == "use css grid here" and body.snippet == "use css grid here"
    assert body.cite == "projects/web/memory/grid.md"
    assert body.link == "[[projects/web/memory/grid]]"
    pattern = searcher.search("sleeping", kind="pattern")[0]
    assert (pattern.kind, pattern.cite) == ("pattern", "pin-test-clock")
    assert pattern.link == "[[patterns/registry#pin-test-clock]]"
    reg = (vault / "patterns/registry.md").read_text().splitlines()
    assert "sleeping" in reg[pattern.line - 1]


def test_a_line_added_above_a_block_moves_its_hit_and_keeps_its_row(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A promote adds one line to a block: the blocks below keep their full-text rows
    (not made anew) and their hits point at their lines as the file is now."""
    from vaultkeeper.search import index as lookup
    from vaultkeeper.store import db

    monkeypatch.setattr(lookup, "RACY_NS", 0)
    second = "\n### retry-backoff\nBack off exponentially when retrying flaky calls.\n"
    vault = make_vault({"patterns/registry.md": REGISTRY + second})
    searcher = Searcher(vault)
    assert searcher.search("exponentially")[0].name == "retry-backoff"
    with db.connect(vault) as conn:
        ids = dict(conn.execute("SELECT name, id FROM search_entries"))
    path = vault / "patterns/registry.md"
    path.write_text(path.read_text().replace("2026-10-03\n", "2026-10-03\n**promoted:** x\n"))
    hit = searcher.search("exponentially")[0]
    lines = path.read_text().splitlines()
    assert lines[hit.line - 1] == "Back off exponentially when retrying flaky calls."
    with db.connect(vault) as conn:
        now = dict(conn.execute("SELECT name, id FROM search_entries"))
    assert now["retry-backoff"] == ids["retry-backoff"]  # the row kept, its line moved
    assert now["pin-test-clock"] != ids["pin-test-clock"]  # the changed block made anew


def test_archived_and_superseded_only_when_asked(make_vault: MakeVault) -> None:
    vault = make_vault({
        "projects/a/memory/old.md": note("old", "webpack setup", "b", status="archived"),
        "projects/a/memory/gone.md": note("gone", "webpack too", "b", status="superseded"),
        "projects/a/memory/replaced.md": note("replaced", "webpack again", "b").replace(
            "label: fact", 'label: fact\nsuperseded_by: "[[projects/a/memory/new]]"'
        ),
        "projects/a/memory/new.md": note("new", "vite setup", "b"),
    })  # fmt: skip
    searcher = Searcher(vault)
    assert searcher.search("webpack") == []
    found = {h.name: h for h in searcher.search("webpack", include_archived=True)}
    assert set(found) == {"old", "gone", "replaced"}
    assert found["replaced"].superseded_by == "projects/a/memory/new"
    assert found["replaced"].status == "active"  # its own status, as written
    assert [h.name for h in searcher.search("setup")] == ["new"]


def test_kind_and_project_filters(make_vault: MakeVault) -> None:
    vault = make_vault({
        "projects/a/memory/x.md": note("x", "retry rule", "b"),
        "projects/b/memory/y.md": note("y", "retry decision", "b", kind="decision"),
    })  # fmt: skip
    searcher = Searcher(vault)
    assert [h.name for h in searcher.search("retry", project="b")] == ["y"]
    assert [h.name for h in searcher.search("retry", kind="memory")] == ["x"]


def test_a_changed_file_is_read_again_and_a_removed_one_is_gone(make_vault: MakeVault) -> None:
    vault = make_vault({"projects/a/memory/x.md": note("x", "alpha", "b")})
    searcher = Searcher(vault)
    assert searcher.search("alpha")
    path = vault / "projects/a/memory/x.md"
    stat = path.stat()
    path.write_text(note("x", "bravo", "b"))  # same size, so only the mtime tells
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert searcher.search("alpha") == [] and searcher.search("bravo")
    path.unlink()
    assert searcher.search("bravo") == []


def test_an_edit_keeping_size_and_mtime_is_read_again(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index keeps each file's rows under the scan cache's key: ctime moves on every
    write, so putting the size and mtime back does not hide an edit."""
    from vaultkeeper.search import index as lookup

    monkeypatch.setattr(lookup, "RACY_NS", 0)  # the file counts as settled at once
    vault = make_vault({"projects/a/memory/x.md": note("x", "alpha", "b")})
    searcher = Searcher(vault)
    assert searcher.search("alpha")
    path = vault / "projects/a/memory/x.md"
    before = path.stat()
    path.write_text(note("x", "bravo", "b"))  # same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # and the mtime put back
    assert path.stat().st_mtime_ns == before.st_mtime_ns
    assert searcher.search("alpha") == [] and searcher.search("bravo")


def test_a_file_read_within_the_racy_window_is_read_again(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultkeeper.search import index as lookup

    monkeypatch.setattr(lookup, "RACY_NS", 3600 * 10**9)  # every file "just written"
    vault = make_vault({"projects/a/memory/x.md": note("x", "alpha", "b")})
    searcher = Searcher(vault)
    reads: list[str] = []
    real = lookup._entries
    monkeypatch.setattr(lookup, "_entries", lambda v, rel, t: reads.append(rel) or real(v, rel, t))
    searcher.search("alpha")
    searcher.search("alpha")
    assert [r for r in reads if r.startswith("projects/")] == ["projects/a/memory/x.md"] * 2


def test_snippets_are_inert_and_short(make_vault: MakeVault) -> None:
    long = "word " * 100 + "needle \x1b[31mred\x1b[0m \u202eevil " + "word " * 100
    vault = make_vault({"projects/a/memory/x.md": note("x", "d", long)})
    hit = Searcher(vault).search("needle")[0]
    assert "\x1b" not in hit.snippet and "\u202e" not in hit.snippet
    # escape sequences and bidi controls are stripped (secrets.served, before masking)
    assert "needle red evil" in hit.snippet and "\\u001b" not in hit.snippet
    assert len(hit.snippet) < 200


def test_unreadable_files_and_notes_without_frontmatter_are_not_entries(
    make_vault: MakeVault,
) -> None:
    vault = make_vault({
        "projects/a/memory/bad.md": b"---\nname: [x\n---\nzebra\n",
        "projects/a/memory/latin.md": b"\xe9 zebra",
        "projects/a/notes.md": "zebra without frontmatter\n",
        "projects/a/memory/ok.md": note("ok", "zebra", "b"),
    })  # fmt: skip
    assert [h.name for h in Searcher(vault).search("zebra")] == ["ok"]


def test_query_words_and_inert() -> None:
    assert terms("Cache, cache KEYS!") == ["cache", "keys"]
    assert terms("  ") == []
    assert inert("a\tb\nc\x07\u2066") == "a\tb\nc\\u0007\\u2066"


def test_the_index_files_are_not_hits(make_vault: MakeVault) -> None:
    vault = make_vault({"projects/a/memory/x.md": note("x", "zqxv summary", "b")})
    build_index(vault)
    assert "zqxv" in (vault / "_index.md").read_text()
    hits = Searcher(vault).search("zqxv")
    assert [h.path for h in hits] == ["projects/a/memory/x.md"]


def test_searches_from_several_threads_while_files_change(make_vault: MakeVault) -> None:
    from concurrent.futures import ThreadPoolExecutor

    vault = make_vault(
        {f"projects/a/memory/n{i}.md": note(f"n{i}", "quux", "b") for i in range(40)}
    )
    searcher = Searcher(vault)

    def search_and_write(i: int) -> list[str]:
        (vault / f"projects/a/memory/extra{i}.md").write_text(note(f"extra{i}", "quux", "b"))
        return [h.path for h in searcher.search("quux", limit=50)]

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(search_and_write, range(8)))
    for paths in results:  # every hit a real entry holding the word, none twice
        assert len(paths) == len(set(paths)) >= 40
        assert all("quux" in (vault / p).read_text() for p in paths)
    assert len(searcher.search("quux", limit=50)) == 48
