"""The scan cache on disk (base + delta) and the block-level reuse inside a changed
registry file: each is only a shortcut, so every test compares against a scan that
reads everything."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import MakeVault
from tests.test_scan_cache import NOW, run, uncached
from tests.test_scan_classify import spec_files
from vaultkeeper import config
from vaultkeeper.registry import blocks as registry
from vaultkeeper.scan import cache as scancache
from vaultkeeper.scan import cachefile as scancachefile

STATE = Path(config.STATE_DIR)
BASE, DELTA = STATE / config.SCAN_CACHE_FILE, STATE / config.SCAN_CACHE_DELTA_FILE
MEM = "projects/p/memory/"


@pytest.fixture(autouse=True)
def no_racy_window(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scancache, "RACY_NS", 0)


@pytest.fixture
def deltas(monkeypatch: pytest.MonkeyPatch) -> None:
    """Deltas for a small cache too (a real one needs a base of 256 KiB)."""
    monkeypatch.setattr(scancachefile, "DELTA_MIN_BASE", 0)
    monkeypatch.setattr(scancachefile, "DELTA_SHARE", 10.0)


def many_files(n: int) -> dict[str, str]:
    files = spec_files(NOW.date())
    for i in range(n):
        files[f"{MEM}lesson-{i}.md"] = (
            f"---\nname: lesson-{i}\ndescription: word{i} other{i} thing{i}\n"
            'status: active\nlast_validated: "2026-08-01"\n---\nbody\n'
        )
    return files


def add_lessons(files: dict[str, str], project: str, description: str) -> None:
    """Three lessons in ``project`` whose descriptions ({i}: which one) make them alike."""
    for i in range(3):
        files[f"projects/{project}/memory/{project}-{i}.md"] = (
            f"---\nname: {project}-{i}\ndescription: {description.format(i=i)}\n---\nbody\n"
        )


def test_a_small_change_writes_a_delta_and_the_base_stays(
    make_vault: MakeVault, deltas: None
) -> None:
    vault = make_vault(many_files(20))
    run(vault)
    base = (vault / BASE).read_bytes()
    assert not (vault / DELTA).exists()
    due = vault / MEM / "lesson-3.md"
    due.write_text(due.read_text().replace("word3", "changed3"))
    (vault / MEM / "lesson-4.md").unlink()
    after = run(vault)
    assert after == uncached(vault)
    assert (vault / BASE).read_bytes() == base  # not rewritten
    delta = json.loads((vault / DELTA).read_text())
    assert delta["base"] == json.loads(base)["id"]
    assert set(delta["memory"]) == {MEM + "lesson-3.md", MEM + "lesson-4.md"}
    assert delta["memory"][MEM + "lesson-4.md"] is None  # gone since the base
    assert delta["registry"] == {}
    # the next scan reads base and delta together: nothing is read again, nothing written
    cache = scancachefile.load(vault)
    assert run(vault) == after
    assert MEM + "lesson-4.md" not in cache._memory
    assert not scancachefile.save(vault, cache) or cache.changed()


def test_a_delta_for_another_base_or_a_bad_one_is_ignored(
    make_vault: MakeVault, deltas: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = make_vault(many_files(5))
    run(vault)
    path = vault / MEM / "lesson-1.md"
    path.write_text(path.read_text().replace("word1", "new1"))
    expected = run(vault)
    good = (vault / DELTA).read_text()
    reads: list[str] = []
    real = scancache.ScanCache.memory

    def counting(self: Any, rel: str, full: str) -> Any:
        found = real(self, rel, full)
        if found[0] is None:
            reads.append(rel)
        return found

    monkeypatch.setattr(scancache.ScanCache, "memory", counting)
    for bad in (
        good.replace('"base":"', '"base":"x'),  # another base's
        "{not json",
        json.dumps({"format": 1, "memory": {}, "registry": {}}),
    ):
        (vault / DELTA).write_text(bad)
        reads.clear()
        assert run(vault) == expected
        assert reads == [MEM + "lesson-1.md"]  # only what the delta held is read again
        assert json.loads((vault / DELTA).read_text())["memory"][MEM + "lesson-1.md"]


def test_a_big_delta_makes_a_new_base_and_retires_the_delta(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scancachefile, "DELTA_MIN_BASE", 0)
    monkeypatch.setattr(scancachefile, "DELTA_SHARE", 0.1)
    vault = make_vault(many_files(20))
    run(vault)
    one = vault / MEM / "lesson-0.md"
    one.write_text(one.read_text().replace("word0", "new0"))
    run(vault)
    assert (vault / DELTA).exists()
    first_id = json.loads((vault / BASE).read_text())["id"]
    for i in range(20):  # more than a tenth of the cache changes
        path = vault / MEM / f"lesson-{i}.md"
        path.write_text(path.read_text().replace(f"thing{i}", f"other-thing{i}"))
    assert run(vault) == uncached(vault)
    assert not (vault / DELTA).exists()
    data = json.loads((vault / BASE).read_text())
    assert data["id"] != first_id and MEM + "lesson-0.md" in data["memory"]


def test_a_small_cache_is_always_written_whole(make_vault: MakeVault) -> None:
    vault = make_vault(many_files(3))
    run(vault)
    path = vault / MEM / "lesson-1.md"
    path.write_text(path.read_text().replace("word1", "new1"))
    run(vault)
    assert not (vault / DELTA).exists()
    kept = json.loads((vault / BASE).read_text())["memory"][MEM + "lesson-1.md"]
    assert "new1" in kept[1][0][1]


@pytest.mark.parametrize("intro", ["Intro.", "Caf\u00e9 notes \u2014 ok."])
def test_a_changed_registry_file_reuses_its_unchanged_blocks(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch, intro: str
) -> None:
    vault = make_vault(spec_files(NOW.date()))
    first = run(vault)
    hashed: list[str] = []
    real = registry.block_hash

    def counting(text: str) -> str:
        hashed.append(text.split("\n", 1)[0])
        return real(text)

    monkeypatch.setattr(registry, "block_hash", counting)
    path = vault / "patterns/registry.md"
    text = path.read_text()
    # one block's count moves; a line put in above the others moves all their lines
    text = text.replace("# Pattern registry\n", f"# Pattern registry\n\n{intro}\n", 1)
    text = text.replace("### once\n", "### once\n\nA note.\n", 1)
    at = text.index("### bar\n")
    text = text[:at] + text[at:].replace("**success count:** 0", "**success count:** 7", 1)
    path.write_text(text)
    after = run(vault)
    assert hashed == ["### bar"]  # now a promote candidate: its text changed
    assert after == uncached(vault)
    assert [c["line"] for c in after["prune"]] != [c["line"] for c in first["prune"]]
    assert "bar" in [c["name"] for c in after["promote"]]


def test_a_just_written_registry_is_read_again_but_its_blocks_are_reused(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session-end scan runs right after the session moved a count: the registry file
    is too new to trust by its key (it is read again next time), but its blocks' kept
    values serve the next scan's reading of the blocks that did not change."""
    from vaultkeeper.store import model

    vault = make_vault(spec_files(NOW.date()))
    monkeypatch.setattr(scancache, "RACY_NS", 10**18)  # every file is "just written"
    first = run(vault)
    kept = json.loads((vault / BASE).read_text())["registry"]["patterns/registry.md"]
    assert kept[0] is None and [h[0] for h in kept[1]][:2] == ["foo", "bar"]
    opened: list[str] = []
    real_read, real_hash = model.read_regular, registry.block_hash
    monkeypatch.setattr(model, "read_regular", lambda p: opened.append(str(p)) or real_read(p))
    hashed: list[str] = []
    monkeypatch.setattr(registry, "block_hash", lambda t: hashed.append(t[:7]) or real_hash(t))
    assert run(vault) == first
    assert str(vault / "patterns/registry.md") in opened  # never trusted by its key
    assert hashed == []  # every block as it was: sentences and hashes from the cache


def test_a_delta_holds_only_the_duplicates_groups_that_changed(
    make_vault: MakeVault, deltas: None
) -> None:
    files = many_files(6)
    add_lessons(files, "q", "retry flaky network calls {i}")
    vault = make_vault(files)
    first = run(vault)
    assert len(first["duplicates"]) == 3
    path = vault / "projects/q/memory/q-2.md"
    path.write_text(path.read_text().replace("retry flaky network calls", "parse dates"))
    after = run(vault)
    assert after == uncached(vault) and len(after["duplicates"]) == 1
    delta = json.loads((vault / DELTA).read_text())
    assert list(delta["pairs"]["groups"]) == ["memory:q"]
    assert run(vault) == after  # base and delta read together


def test_a_project_none_of_whose_files_changed_keeps_its_pairs_unbuilt(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultkeeper.upkeep import dup_pairs as duppairs

    files = spec_files(NOW.date())
    for project in ("p", "q"):
        add_lessons(files, project, "retry flaky network calls")
    vault = make_vault(files)
    first = run(vault)
    assert len(first["duplicates"]) == 6
    compared: list[set[str]] = []
    real = duppairs.pairs_by_group
    monkeypatch.setattr(
        duppairs,
        "pairs_by_group",
        lambda items: compared.append({i.group for i in items}) or real(items),
    )
    path = vault / "projects/q/memory/q-2.md"
    path.write_text(path.read_text().replace("retry flaky network calls", "parse dates"))
    after = run(vault)
    assert compared == [{"memory:q"}]  # project p's lessons were not even built
    assert after == uncached(vault) and len(after["duplicates"]) == 4
    assert [d["a"]["path"][:10] for d in after["duplicates"]] == [
        d["a"]["path"][:10] for d in first["duplicates"] if "q-2" not in d["b"]["path"]
    ]  # the same order: p's group, then q's
    (vault / "projects/p/memory/p-0.md").unlink()  # a kept file gone: p is compared again
    compared.clear()
    assert run(vault) == uncached(vault)
    assert compared == [{"memory:p"}]


CACHE = Path(config.STATE_DIR) / config.SCAN_CACHE_FILE


def test_a_fifo_where_the_cache_goes_does_not_hang_the_scan(make_vault: MakeVault) -> None:
    """load opens the cache with O_RDONLY and no O_NONBLOCK: on a FIFO the open waits
    for a writer for ever (the session-end hook hangs until it is killed)."""
    import subprocess
    import sys

    vault = make_vault(spec_files(NOW.date()))
    os.mkfifo(vault / CACHE)
    code = (
        "import sys; from vaultkeeper.scan import cachefile as scancachefile; "
        "scancachefile.load(sys.argv[1])"
    )
    try:
        done = subprocess.run([sys.executable, "-c", code, str(vault)], timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail("loading a FIFO as the scan cache blocked")
    assert done.returncode == 0
