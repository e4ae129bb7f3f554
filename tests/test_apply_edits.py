"""Planned changes: unified diffs, BOM-preserving writes, and no lock file on a dry run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import MakeVault
from vaultkeeper import config
from vaultkeeper.apply.decision import Decision
from vaultkeeper.apply.edits import Change, carry, locked, read_source, unified_diff, write
from vaultkeeper.index import rows
from vaultkeeper.index.build import build_index


def test_diff_of_an_edit_a_creation_and_a_removal(tmp_path: Path) -> None:
    diff = unified_diff(
        [
            Change(tmp_path / "a.md", "a.md", "one\ntwo\n", "one\nTWO\n"),
            Change(tmp_path / "b.md", "b.md", None, "new\n"),
            Change(tmp_path / "c.md", "c.md", "gone", None),
        ]
    )
    assert diff == (
        "--- a/a.md\n+++ b/a.md\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n"
        "--- /dev/null\n+++ b/b.md\n@@ -0,0 +1 @@\n+new\n"
        "--- a/c.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n\\ No newline at end of file\n"
    )


def test_read_and_write_keep_the_bom_and_crlf(tmp_path: Path) -> None:
    path = tmp_path / "x.md"
    path.write_bytes(b"\xef\xbb\xbfa\r\nb\r\n")
    source = read_source(path, "x.md")
    assert (source.text, source.bom) == ("a\r\nb\r\n", True)
    write(Change(path, "x.md", source.text, source.text.replace("b", "c"), source.bom))
    assert path.read_bytes() == b"\xef\xbb\xbfa\r\nc\r\n"


def test_dry_run_takes_no_lock(tmp_path: Path) -> None:
    with locked(tmp_path, dry_run=True):
        pass
    assert not (tmp_path / "state").exists()
    from vaultkeeper.store.fsio import outside_lock

    lock = outside_lock(tmp_path)
    assert lock is not None
    with locked(tmp_path, dry_run=False):
        assert os.path.exists(lock)  # the lock is taken, and the vault gets no state/ for it
    assert not (tmp_path / "state").exists()


def test_a_long_files_diff_names_the_lines_a_full_comparison_would(tmp_path: Path) -> None:
    """Only the part between the lines kept at both ends is compared; the hunks still
    say where in the whole file they are, as difflib over every line says."""
    import difflib

    old = [f"line {i}\n" for i in range(1000)]
    cases = [
        [*old[:500], "inserted\n", *old[500:]],
        [*old[:10], *old[11:700], "changed\n", *old[701:]],
        [*old[:998]],
        ["first\n", *old],
    ]
    for new in cases:
        got = unified_diff([Change(tmp_path / "r.md", "r.md", "".join(old), "".join(new))])
        assert got == "".join(difflib.unified_diff(old, new, "a/r.md", "b/r.md"))


def test_a_long_files_diff_keeps_three_lines_of_context_on_each_side(tmp_path: Path) -> None:
    """A line repeated next to the change cannot slide the context kept at an end: with
    two lines before and three after, `git apply` refused the diff a dry run showed."""
    old = [f"line {i}\n" for i in range(300)]
    old[150] = "same\n"
    new = [*old[:151], "same\n", *old[151:]]
    got = unified_diff([Change(tmp_path / "r.md", "r.md", "".join(old), "".join(new))])
    body = " line 148\n line 149\n same\n+same\n line 151\n line 152\n line 153\n"
    assert got == f"--- a/r.md\n+++ b/r.md\n@@ -149,6 +149,7 @@\n{body}"


def test_an_unlisted_edit_of_a_file_changed_since_it_was_planned_is_listed_again(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A change says its edit changes no index line, but the file is no longer the text
    it was planned on: what the index lists of it is read again, not taken as it was."""
    monkeypatch.setattr(rows, "RACY_NS", 0)  # files just written count as settled
    planned = "# Pattern registry\n\n### alpha\nPlanned words.\n**success count:** 3\n"
    now = planned.replace("Planned words.", "Words since.")
    vault = make_vault({"patterns/registry.md": now})
    build_index(vault)
    path = vault / "patterns/registry.md"
    after = planned + "**promoted:** 2026-12-01 -> [[skills/alpha/SKILL]]\n"
    change = Change(path, "patterns/registry.md", planned, after, unlisted=True)
    with locked(vault, False):
        carry(vault, Decision("promote", "alpha"), [change], "w", dry_run=False, extra={},
              index=True)  # fmt: skip
    assert "Planned words." in (vault / config.INDEX_FILE).read_text()
    monkeypatch.setattr(rows, "_load", lambda vault, query: None)  # every note read again
    assert build_index(vault, check=True).changed == ()
