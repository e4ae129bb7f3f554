"""Attacks on the derived store and the full-text index after they landed (issue 35 and
the search rewrite): rows served as truth after the vault changed under them, a crafted
or foreign database, and a database that cannot be opened or written. Each failed on
main before its fix."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import MakeVault
from tests.test_recall_hook_attacks import PROMPT, ROUNDING, prompt
from tests.test_recall_moment import LESSONS, build, lesson, run
from vaultkeeper.store import db

SECRET = "OUTSIDE-THE-VAULT-7f3a"


@pytest.fixture
def vault(make_vault: MakeVault) -> Path:
    root = make_vault(LESSONS)
    assert build(root)
    return root


def test_a_lesson_folder_replaced_by_a_link_out_of_the_vault_is_never_read(
    vault: Path, tmp_path: Path
) -> None:
    code, out, _ = run(vault, prompt("before"))
    assert code == 0 and ROUNDING in out
    # git brings the memory folder back as a symlink to a folder outside the vault that
    # holds a file of the same name (another vault of the same person, say)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "rounding.md").write_text(
        lesson("cart-rounding", f"Round cart totals half-even in billing {SECRET}")
    )
    folder = vault / "projects/proj/memory"
    shutil.move(str(folder), str(tmp_path / "moved-away"))
    folder.symlink_to(outside, target_is_directory=True)
    code, out, _ = run(vault, prompt("after", PROMPT))
    assert code == 0
    assert SECRET not in out


def test_a_crafted_row_whose_path_climbs_out_of_the_vault_is_never_read(
    vault: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside" / "memory"
    outside.mkdir(parents=True)
    (outside / "x.md").write_text(
        lesson("cart-rounding", f"Round cart totals half-even in billing {SECRET}")
    )
    climb = "projects/proj/memory/../../../../outside/memory/x.md"
    assert (vault / climb).resolve() == (outside / "x.md").resolve()
    with db.connect(vault) as conn, db.writing(conn):
        conn.execute("UPDATE search_entries SET path = ? WHERE path = ?", (climb, ROUNDING))
        conn.execute(
            "UPDATE search_files SET path = ?, key = 'x' WHERE path = ?", (climb, ROUNDING)
        )
    code, out, _ = run(vault, prompt("after", PROMPT))
    assert code == 0
    assert SECRET not in out
