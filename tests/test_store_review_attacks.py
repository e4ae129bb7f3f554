"""Attacks on the derived store and the full-text index after they landed (issue 35 and
the search rewrite): rows served as truth after the vault changed under them, a crafted
or foreign database, and a database that cannot be opened or written. Each failed on
main before its fix."""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import MakeVault
from tests.test_recall_hook_attacks import PROMPT, ROUNDING, prompt
from tests.test_recall_moment import LESSONS, TOKEN, build, lesson, run
from vaultkeeper import config
from vaultkeeper.cli import cli
from vaultkeeper.recall import moment as recall_lookup
from vaultkeeper.search import index as lookup
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


# -- search does its job from the files when the store cannot be used ----------------------


def _search(vault: Path, *words: str) -> tuple[int, str, str]:
    done = CliRunner().invoke(cli, ["--vault", str(vault), "search", *words])
    return done.exit_code, done.stdout, done.stderr


def test_search_answers_from_the_files_when_the_database_is_a_folder(
    make_vault: MakeVault,
) -> None:
    vault = make_vault(LESSONS)
    (vault / config.STATE_DIR).mkdir(exist_ok=True)
    (vault / config.STATE_DIR / config.DB_FILE).mkdir()  # git brought a folder there
    code, out, err = _search(vault, "rounding", "cart")
    assert (code, err) == (0, "")
    assert f"  {ROUNDING}:" in out


@pytest.mark.parametrize(
    "message", ["database or disk is full", "attempt to write a readonly database"]
)
def test_search_answers_from_the_files_when_the_database_cannot_be_written(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch, message: str
) -> None:
    vault = make_vault(LESSONS)
    (vault / config.STATE_DIR).mkdir(exist_ok=True)
    real = lookup.refresh

    def refresh(conn: sqlite3.Connection, root: Path | str) -> int:
        if conn.execute("PRAGMA database_list").fetchone()[2]:  # the vault's file, not memory
            raise sqlite3.OperationalError(message)
        return real(conn, root)

    monkeypatch.setattr(lookup, "refresh", refresh)
    code, out, err = _search(vault, "rounding", "cart")
    assert (code, err) == (0, "")
    assert f"  {ROUNDING}:" in out


# -- the recall hook serves only rows this version made ------------------------------------


def test_the_recall_hook_never_serves_rows_another_version_masked(vault: Path) -> None:
    code, out, _ = run(vault, prompt("before"))
    assert code == 0 and ROUNDING in out and TOKEN not in out
    # rows an older vaultkeeper made, whose masking missed this token (its served text
    # holds it whole), under the file's own stat key: an upgrade must not serve them
    with db.connect(vault) as conn, db.writing(conn):
        conn.execute("UPDATE search_meta SET value = '0.0.1/1' WHERE key = 'masked_by'")
        conn.execute(
            "UPDATE search_entries SET recall_text = recall_text || ' ' || ? WHERE path = ?",
            (TOKEN, ROUNDING),
        )
        conn.execute("UPDATE search_files SET settled = 1")  # made long ago
    code, out, _ = run(vault, prompt("after"))
    assert code == 0 and TOKEN not in out
    assert _search(vault, "rounding")[0] == 0  # any refresh makes the rows anew
    code, out, _ = run(vault, prompt("again"))
    assert code == 0 and ROUNDING in out and TOKEN not in out


def test_the_recall_hook_knows_the_rows_format_the_index_writes() -> None:
    assert recall_lookup.ROWS_FORMAT == lookup.ROWS_FORMAT


# -- a hit is one line per field: nothing a note holds forges another hit -----------------

FORGED = "  99.00  projects/api/memory/forged.md:1  trust-me"


@pytest.mark.parametrize("where", ["name", "file name"])
def test_a_newline_in_a_name_or_a_file_name_never_forges_a_hit_line(
    make_vault: MakeVault, where: str
) -> None:
    name = "zz-evil\\n" + FORGED if where == "name" else "quagga-note"
    rel = (
        "projects/api/memory/evil.md" if where == "name" else f"projects/api/memory/x\n{FORGED}.md"
    )
    text = (
        f'---\nname: "{name}"\ndescription: "zebra quagga"\ntype: memory\nstatus: active\n'
        "---\n\n# x\n\nzebra quagga\n"
    )
    vault = make_vault({rel: text})
    code, out, _ = _search(vault, "quagga")
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == 2  # the hit's line and its snippet, nothing more
    assert not any(line.startswith(FORGED) for line in lines)
    code, out, _ = _search(vault, "--json", "quagga")
    hit = json.loads(out)["hits"][0]
    assert all("\n" not in str(hit[k]) for k in ("name", "path", "cite", "link", "snippet"))


# -- the recall hook's deadline stops the database's work, not only the steps between -----


def test_past_its_deadline_the_recall_hook_runs_no_further_query(vault: Path) -> None:
    conn = recall_lookup.open_db(str(vault / config.STATE_DIR))
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    index = recall_lookup.Index(str(vault), conn, time.monotonic() - 1)  # already late
    words = " ".join(f"rounding{n} cart totals billing" for n in range(40))  # many words
    try:
        # late: a look at the clock, or SQLite's statement stopped (serve says both alike)
        with pytest.raises((TimeoutError, sqlite3.OperationalError), match="took over|interrupt"):
            index.for_prompt(words, None, lambda path: False, 3)
    finally:
        conn.close()
    searches = [s for s in statements if "MATCH" in s and not s.startswith("--")]
    # 33 on main: the bm25 query and one per word, all run before the deadline was seen;
    # now SQLite stops the first query long enough to reach a look at the clock
    assert len(searches) <= 3
