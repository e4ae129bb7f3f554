"""The scanner lists memory files as the vault walk would (vault.walk_files).

memscan.memory_files reads each folder with one scandir instead of os.walk (a scan lists
thousands of files after every session); the files and their order must not change.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from vaultkeeper import config
from vaultkeeper.scan import memory as memscan
from vaultkeeper.store.vault import walk_files


def walked(vault: Path) -> Iterator[str]:
    """The plain way: every project's memory/ folder through walk_files."""
    projects = vault / config.PROJECTS_DIR
    for project in sorted(os.listdir(projects)):
        if project.startswith(".") or (projects / project).is_symlink():
            continue
        memory = projects / project / config.MEMORY_SUBDIR
        if memory.is_dir() and not memory.is_symlink():
            yield from (p for p in walk_files(vault, memory) if p.endswith(".md"))


def test_memory_files_are_the_walks_in_its_order(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "outside.md").write_text("x")
    files = [
        "projects/b/memory/z.md", "projects/b/memory/a.md", "projects/b/memory/B.md",
        "projects/b/memory/notes.txt", "projects/b/memory/.hidden.md",
        "projects/b/memory/sub/deeper/x.md", "projects/b/memory/sub/y.md",
        "projects/b/memory/.git/HEAD.md", "projects/b/memory/state/kept.md",
        "projects/a/memory/one.md", "projects/a/research/no.md", "projects/.h/memory/no.md",
        "projects/c/memory/dir.md/inside.md",  # a folder named like a note
    ]  # fmt: skip
    for rel in files:
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text("---\nname: x\n---\n")
    (vault / "projects/b/memory/linked").symlink_to(elsewhere)  # listed, never entered
    (vault / "projects/b/memory/link.md").symlink_to(vault / "projects/b/memory/a.md")
    (vault / "projects/b/memory/dangling.md").symlink_to(tmp_path / "gone.md")
    (vault / "projects/d").symlink_to(vault / "projects/a")  # a linked project: skipped
    got = list(memscan.memory_files(vault))
    assert got == list(walked(vault))
    assert [p[len(str(vault)) + 1 :] for p in got] == [
        "projects/a/memory/one.md",
        "projects/b/memory/B.md",
        "projects/b/memory/a.md",
        "projects/b/memory/link.md",  # dangling.md points out of the vault: left out
        "projects/b/memory/z.md",
        "projects/b/memory/state/kept.md",
        "projects/b/memory/sub/y.md",
        "projects/b/memory/sub/deeper/x.md",
        "projects/c/memory/dir.md/inside.md",
    ]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any folder")
def test_an_unreadable_folder_is_skipped_as_the_walk_skips_it(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    for rel in ("projects/a/memory/ok.md", "projects/a/memory/locked/no.md"):
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text("x")
    locked = vault / "projects/a/memory/locked"
    locked.chmod(0)
    try:
        assert (
            list(memscan.memory_files(vault))
            == list(walked(vault))
            == [str(vault / "projects/a/memory/ok.md")]
        )
    finally:
        locked.chmod(0o755)
