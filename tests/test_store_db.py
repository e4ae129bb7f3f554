"""The derived store (vaultkeeper/store/db.py): made when missing, rebuilt when foreign
or unreadable, never opened through a link or a FIFO."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from vaultkeeper.errors import UnsafePathError
from vaultkeeper.store import db


def _vault(tmp_path: Path) -> Path:
    (tmp_path / "patterns").mkdir(parents=True)
    (tmp_path / "_index.md").write_text("# index\n")
    return tmp_path


def test_made_when_missing_in_wal_mode(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    with db.connect(vault) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA user_version").fetchone()[0] == db.SCHEMA_VERSION
    assert (vault / "state" / db.DB_FILE).is_file()


def test_another_version_is_dropped_and_rebuilt(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    (vault / "state").mkdir()
    old = sqlite3.connect(vault / "state" / db.DB_FILE)
    old.execute("CREATE TABLE stale (x)")
    old.execute("PRAGMA user_version = 999")
    old.commit()
    old.close()
    with db.connect(vault) as conn:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert "stale" not in names


def test_garbage_file_is_replaced(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    (vault / "state").mkdir()
    (vault / "state" / db.DB_FILE).write_bytes(b"not a database at all" * 100)
    with db.connect(vault) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == db.SCHEMA_VERSION


@pytest.mark.parametrize("name", [db.DB_FILE, db.DB_FILE + "-wal"])
def test_symlink_is_refused_and_target_untouched(tmp_path: Path, name: str) -> None:
    vault = _vault(tmp_path / "v")
    outside = tmp_path / "outside.bin"
    outside.write_bytes(b"precious")
    (vault / "state").mkdir(parents=True)
    os.symlink(outside, vault / "state" / name)
    with pytest.raises(UnsafePathError, match="symlink"), db.connect(vault):
        pass
    assert outside.read_bytes() == b"precious"


def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    (vault / "state").mkdir()
    os.mkfifo(vault / "state" / db.DB_FILE)
    with pytest.raises(UnsafePathError, match="not a regular file"), db.connect(vault):
        pass


def test_writing_rolls_back_on_error(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    with db.connect(vault) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS t (x)")
        with pytest.raises(RuntimeError), db.writing(conn):
            conn.execute("INSERT INTO t VALUES (1)")
            raise RuntimeError("boom")
        assert conn.execute("SELECT count(*) FROM t").fetchone()[0] == 0
