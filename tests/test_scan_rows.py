"""The scan's rows in the derived store (scan/cache.py): only the rows that changed are
written, a changed registry file reuses its unchanged blocks, and the database may go at
any moment. Each is only a shortcut, so every test compares against a scan that reads
everything."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import MakeVault
from tests.test_scan_cache import NOW, rows, run, uncached
from tests.test_scan_classify import spec_files
from vaultkeeper import config
from vaultkeeper.registry import blocks as registry
from vaultkeeper.scan import cache as scancache
from vaultkeeper.scan.classify import classify

DB = Path(config.STATE_DIR) / config.DB_FILE
MEM = "projects/p/memory/"


@pytest.fixture(autouse=True)
def no_racy_window(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scancache, "RACY_NS", 0)


def rowids(vault: Path, table: str, column: str = "path") -> dict[str, int]:
    """Each row's rowid: INSERT OR REPLACE gives a rewritten row a new one."""
    conn = sqlite3.connect(vault / DB)
    try:
        return dict(conn.execute(f"SELECT {column}, rowid FROM {table}").fetchall())
    finally:
        conn.close()


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


def test_only_the_rows_of_changed_files_are_written(make_vault: MakeVault) -> None:
    vault = make_vault(many_files(20))
    run(vault)
    before = rowids(vault, "scan_memory")
    due = vault / MEM / "lesson-3.md"
    due.write_text(due.read_text().replace("word3", "changed3"))
    (vault / MEM / "lesson-4.md").unlink()
    after = run(vault)
    assert after == uncached(vault)
    now = rowids(vault, "scan_memory")
    assert MEM + "lesson-4.md" not in now  # its file is gone
    assert now[MEM + "lesson-3.md"] != before[MEM + "lesson-3.md"]  # rewritten
    assert "changed3" in rows(vault)["memory"][MEM + "lesson-3.md"][1][0][1]
    same = {p: i for p, i in now.items() if p != MEM + "lesson-3.md"}
    assert same == {p: i for p, i in before.items() if p in same}  # left as they were
    # nothing changed since: nothing read again, nothing written
    assert run(vault) == after
    cache = scancache.load(vault)
    classify(vault, NOW, cache)
    assert cache.misses == 0 and not cache.changed()
    assert not scancache.save(vault, cache)


def test_deleting_the_database_between_scans_loses_nothing(make_vault: MakeVault) -> None:
    files = many_files(6)
    add_lessons(files, "q", "retry flaky network calls {i}")
    vault = make_vault(files)
    first = run(vault)
    for name in os.listdir(vault / DB.parent):
        if name.startswith(config.DB_FILE):
            os.unlink(vault / DB.parent / name)
    assert run(vault) == first == uncached(vault)
    assert set(rows(vault)["memory"]) >= {MEM + "lesson-0.md", "projects/q/memory/q-1.md"}


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
    kept = rows(vault)["registry"]["patterns/registry.md"]
    assert kept[2] is not None and [h[0] for h in kept[1]][:2] == ["foo", "bar"]  # racy
    opened: list[str] = []
    real_read, real_hash = model.read_regular, registry.block_hash
    monkeypatch.setattr(model, "read_regular", lambda p: opened.append(str(p)) or real_read(p))
    hashed: list[str] = []
    monkeypatch.setattr(registry, "block_hash", lambda t: hashed.append(t[:7]) or real_hash(t))
    assert run(vault) == first
    assert str(vault / "patterns/registry.md") in opened  # never trusted by its key
    assert hashed == []  # every block as it was: sentences and hashes from the cache


def test_only_the_duplicates_groups_that_changed_are_written(make_vault: MakeVault) -> None:
    files = many_files(6)
    add_lessons(files, "q", "retry flaky network calls {i}")
    vault = make_vault(files)
    first = run(vault)
    assert len(first["duplicates"]) == 3
    before = rowids(vault, "scan_pairs", "grp")
    path = vault / "projects/q/memory/q-2.md"
    path.write_text(path.read_text().replace("retry flaky network calls", "parse dates"))
    after = run(vault)
    assert after == uncached(vault) and len(after["duplicates"]) == 1
    now = rowids(vault, "scan_pairs", "grp")
    assert [g for g in now if now[g] != before.get(g)] == ["memory:q"]
    assert run(vault) == after


def test_a_project_none_of_whose_files_changed_keeps_its_pairs_unbuilt(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultkeeper.upkeep import duplicates as duppairs

    files = spec_files(NOW.date())
    for project in ("p", "q"):
        add_lessons(files, project, "retry flaky network calls")
    vault = make_vault(files)
    first = run(vault)
    assert len(first["duplicates"]) == 6
    compared: list[set[str]] = []
    real = duppairs.pairs_by_group

    def noting(items: Any, *threshold: float) -> Any:
        if not threshold:  # the scan's pass (find_pairs, for the uncached run, passes it)
            compared.append({i.group for i in items})
        return real(items, *threshold)

    monkeypatch.setattr(duppairs, "pairs_by_group", noting)
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


def test_a_fifo_where_the_database_goes_is_refused_without_hanging(
    make_vault: MakeVault,
) -> None:
    """SQLite would open a FIFO and wait for a writer for ever (the session-end hook
    hanging until killed): the scan refuses it in one line instead."""
    vault = make_vault(spec_files(NOW.date()))
    (vault / DB).parent.mkdir(exist_ok=True)
    os.mkfifo(vault / DB)
    command = [sys.executable, "-m", "vaultkeeper", "--vault", str(vault), "scan", "--force"]
    try:
        done = subprocess.run(command, timeout=60, capture_output=True, text=True)
    except subprocess.TimeoutExpired:
        pytest.fail("a FIFO as the derived store blocked the scan")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert f"state/{config.DB_FILE}: not a regular file; refused" in done.stderr
