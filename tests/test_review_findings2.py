"""Second review of the scan path's shortcuts: each test shows a cached scan (or a
registry file read again only where it changed) giving otherwise than reading
everything, or a cache content a scan crashed on."""

from __future__ import annotations

import json
import os
import random
import time
from typing import Any

import pytest

from tests.conftest import MakeVault
from tests.test_registry_delta import check
from tests.test_scan_cache import CACHE, NOW, run, uncached
from tests.test_scan_classify import memory, spec_files
from vaultkeeper.registry import delta as registrydelta
from vaultkeeper.scan import cache as scancache
from vaultkeeper.scan import cachefile as scancachefile


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
    from vaultkeeper import config
    from vaultkeeper.upkeep import dup_delta as dupdelta

    monkeypatch.setattr(config, "DUP_DELTA_MIN", 4)
    redone: list[bool] = []
    real = dupdelta.group_pairs

    def noting(*args: Any) -> Any:
        found = real(*args)
        redone.append(found.redone)
        return found

    monkeypatch.setattr(dupdelta, "group_pairs", noting)
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


# -- a random-edit run: scan after scan over a small vault, each against a fresh scan --

_BLOCK_LINES = [
    *("### alpha", "### beta", "### alpha\r", "## Section", "#### deeper", "```", "~~~"),
    *("**success count:** 0", "**success count:** 3", "**success count:** x", "---", "..."),
    *("**last used:** 2026-01-02", "**last used:** 2026-08-30", "**last used:** someday"),
    *("**promoted:** 2026-01-03 -> [[skills/a/SKILL]]", "", "plain", "**success count:** 5\r"),
    *("Retry flaky network calls. More.", "Caf\u00e9 \u2014 retry flaky calls."),
]
_DESCRIPTIONS = ["retry flaky network calls with backoff", "caf\u00e9 retry flaky network", "x"]
_DATES = ['"2026-08-01"', '"2099-01-01"', "2026-08-01", "2026-08-01 10:30:00", '"soon"', None]


def _lesson(rng: random.Random, name: str) -> str:
    extra = {}
    if rng.random() < 0.3:  # a date, a quoted one, a datetime (which the cache cannot keep)
        extra["last_validated"] = rng.choice(["2026-01-01", '"2026-01-01"', "2025-12-31T10:00:00"])
    status = rng.choice(["active", "held_out", "archived", None])
    text = memory(name, rng.choice(_DATES), status=status, **extra)
    return text.replace("description: a lesson", "description: " + rng.choice(_DESCRIPTIONS))


def _edit_registry(rng: random.Random, text: str) -> str:
    lines = text.split("\n")
    for _ in range(rng.randint(1, 3)):  # lines in, out or replaced
        at = rng.randrange(len(lines) + 1)
        if rng.random() < 0.4:
            lines.insert(at, rng.choice(_BLOCK_LINES))
        elif at < len(lines):
            lines[at : at + 1] = [] if rng.random() < 0.5 else [rng.choice(_BLOCK_LINES)]
    text = "\n".join(lines)
    for _ in range(rng.randint(0, 2)):  # a character in or out: lines join and split
        at = rng.randrange(len(text) + 1)
        if rng.random() < 0.5:
            text = text[:at] + rng.choice("\n#` *~-a\u00e9\r") + text[at:]
        else:
            text = text[:at] + text[at + 1 :]
    if rng.random() < 0.1:
        text = text.replace("\n", "\r\n")
    return rng.choice(["---\n", "---\nx: 1\n---\n", ""]) + text if rng.random() < 0.1 else text


@pytest.mark.parametrize("seed", range(3))
def test_scan_after_scan_of_random_edits_reports_what_a_fresh_scan_does(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """Registry and memory files edited, added and deleted across projects, with the
    cache written as deltas, small pages (the region logic on small texts) and now and
    then a scan for which the files just edited are in the racy window."""
    monkeypatch.setattr(scancachefile, "DELTA_MIN_BASE", 0)
    monkeypatch.setattr(scancachefile, "DELTA_SHARE", 100)
    monkeypatch.setattr(registrydelta, "PAGE", 8)
    real_ns = time.time_ns
    limit: list[int | None] = [None]
    monkeypatch.setattr(time, "time_ns", lambda: limit[0] or real_ns())  # scancache's clock
    rng = random.Random(seed)
    files = spec_files(NOW.date())
    for p in "pqr":
        files.update({f"projects/{p}/memory/l{n}.md": _lesson(rng, f"l{n}") for n in range(3)})
    files["patterns/second.md"] = "\n".join(rng.choices(_BLOCK_LINES, k=30))
    vault = make_vault(files)
    tick = 1_700_000_000 * 10**9

    def write(rel: str, text: str) -> None:
        nonlocal tick
        path = vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
        tick += 10**9  # an mtime of its own: an edit within one clock tick is the window's
        os.utime(path, ns=(tick, tick))

    for step in range(15):
        assert run(vault) == uncached(vault), step
        mark = real_ns() + 1  # files changed from now on are in the next scan's window
        while real_ns() < mark:
            pass
        limit[0] = mark if rng.random() < 0.35 else None
        for _ in range(rng.randint(1, 3)):
            roll = rng.random()
            registries = sorted(p.name for p in (vault / "patterns").glob("*.md"))
            lessons = sorted((vault / "projects").glob("*/memory/*.md"))
            if roll < 0.45 and registries:
                rel = "patterns/" + rng.choice(registries)
                write(rel, _edit_registry(rng, (vault / rel).read_bytes().decode()))
            elif roll < 0.8 and lessons:
                path = rng.choice(lessons)
                if rng.random() < 0.2:
                    path.unlink()
                else:
                    write(str(path.relative_to(vault)), _lesson(rng, path.stem))
            elif roll < 0.85:
                rel = rng.choice(["patterns/second.md", "patterns/third.md"])
                if (vault / rel).exists() and rng.random() < 0.5:
                    (vault / rel).unlink()
                else:
                    write(rel, "\n".join(rng.choices(_BLOCK_LINES, k=rng.randint(0, 30))))
            else:
                write(f"projects/{rng.choice('pqrs')}/memory/n{step}.md", _lesson(rng, f"n{step}"))
