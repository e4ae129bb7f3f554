"""Second review of the scan path's shortcuts: each test shows a cached scan (or a
registry file read again only where it changed) giving otherwise than reading
everything, or a cache content a scan crashed on."""

from __future__ import annotations

import json

import pytest

from tests.conftest import MakeVault
from tests.test_registrydelta import check
from tests.test_scan import spec_files
from tests.test_scancache import CACHE, NOW, run, uncached
from vaultkeeper import registrydelta, scancache


@pytest.fixture(autouse=True)
def no_racy_window(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scancache, "RACY_NS", 0)


@pytest.mark.parametrize("page", [1, 8])
@pytest.mark.parametrize(
    "closing",
    [
        lambda old: old + "---\n",  # an opening --- that never closed, closed at the end
        lambda old: old + "...\n",
        lambda old: old.replace("### b\n", "---\n### b\n"),  # or before the last block
    ],
    ids=["dashes-at-end", "dots-at-end", "dashes-before-last"],
)
def test_a_frontmatter_closed_only_now_hides_the_blocks_kept_before_it(
    page: int, closing: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file opening with --- and no closing line has no frontmatter: its blocks count.
    A closing line written further down makes all above it frontmatter, though the
    text before the change, and so the blocks kept from it, is as it was."""
    monkeypatch.setattr(registrydelta, "PAGE", page)
    old = "---\n### a\n**success count:** 1\n\n### c\nsome text here\n\n### b\nx\n"
    assert callable(closing)
    check(old, closing(old))


def test_a_cached_memory_entry_named_outside_any_project_is_ignored(
    make_vault: MakeVault,
) -> None:
    """A memory entry whose name holds no project (a forged or foreign cache's) crashed
    the duplicates pass when a file had changed: its project was looked up by index."""
    vault = make_vault(spec_files(NOW.date()))
    run(vault)
    data = json.loads((vault / CACHE).read_text())
    data["memory"]["stray"] = [[1, 2, 3, 4, 5], None]
    (vault / CACHE).write_text(json.dumps(data))
    due = vault / "projects/p/memory/due.md"
    due.write_text(due.read_text() + "\nMore.\n")
    assert run(vault) == uncached(vault)


def test_a_big_project_left_alone_keeps_its_words(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A big project's group whose files did not change keeps its pairs without its
    entries being built; its words (what redoing only its changed entries needs) were
    dropped with it, so its next edit redid the whole group."""
    from vaultkeeper import config, dupdelta

    monkeypatch.setattr(config, "DUP_DELTA_MIN", 4)
    redone: list[bool] = []
    real = dupdelta.group_pairs
    monkeypatch.setattr(
        dupdelta, "group_pairs", lambda *a: redone.append((f := real(*a)).redone) or f
    )
    lesson = "---\nname: {0}\nstatus: active\ndescription: {1}\n---\n"
    big = "projects/big/memory/"
    files = {f"{big}l{k}.md": lesson.format(f"l{k}", f"retry flaky call {k}") for k in range(6)}
    files["projects/small/memory/a.md"] = lesson.format("a", "one thing")
    vault = make_vault(files)
    run(vault)
    (vault / "projects/small/memory/a.md").write_text(lesson.format("a", "another thing"))
    run(vault)  # the big project left alone
    assert list(json.loads((vault / CACHE).read_text())["pairs"]["words"]) == ["memory:big"]
    (vault / big / "l2.md").write_text(lesson.format("l2", "retry flaky call 4"))
    redone.clear()
    assert run(vault) == uncached(vault)
    assert redone == [False]  # its changed entry compared again, not the whole group
