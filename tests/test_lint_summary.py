"""The lint's figures in state/vaultkeeper.db: a whole-vault `lint` keeps its counts,
`status` shows them with their age while less than a day old; missing (the database
deleted), older or unreadable, status lints the vault itself and keeps the figures
(issue 36: a vault nobody runs `lint` on still shows current figures), never a traceback."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import MakeVault
from vaultkeeper import clock, config
from vaultkeeper.cli import cli
from vaultkeeper.index.build import build_index

NOW = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
LINT_ROWS = ("lint_errors", "broken_links", "orphans")
STRAY = "---\nname: stray\ndescription: unlinked\ntype: memory\n---\n\nsee [[nowhere]]\n"


@pytest.fixture(autouse=True)
def _clock_at_now(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(clock, "real_now", lambda: NOW)


def db_file(vault: Path) -> Path:
    return vault / config.STATE_DIR / config.DB_FILE


def kept(vault: Path) -> dict[str, Any] | None:
    """The figures the last whole-vault lint kept, or None."""
    if not db_file(vault).is_file():
        return None
    conn = sqlite3.connect(db_file(vault))
    try:
        conn.row_factory = sqlite3.Row
        row = conn.execute("SELECT * FROM lint_summary").fetchone()
    finally:
        conn.close()
    return None if row is None else dict(row)


def lint(vault: Path, *args: str) -> None:
    CliRunner().invoke(cli, ["--vault", str(vault), "lint", *args])


def rows(vault: Path) -> tuple[int, dict[str, dict[str, Any]]]:
    result = CliRunner().invoke(cli, ["--vault", str(vault), "status", "--json"])
    assert result.stderr == "" and "Traceback" not in result.output
    data = json.loads(result.stdout)
    return result.exit_code, {s["name"]: s for s in data["signals"] if s["name"] in LINT_ROWS}


@pytest.fixture
def vault(make_vault: MakeVault) -> Path:
    made = make_vault()
    build_index(made)
    (made / config.STATE_DIR).mkdir(exist_ok=True)
    return made


def test_no_lint_yet_is_linted_by_status_and_kept(vault: Path) -> None:
    code, got = rows(vault)
    assert code == 0
    for row in got.values():
        assert (row["figure"], row["shown"], row["verdict"]) == (0, "0", "ok")
        assert row["detail"] == "lint 0 min ago"
    assert kept(vault)["made"] == NOW.strftime("%Y-%m-%dT%H:%M:%SZ")  # type: ignore[index]


def test_status_shows_the_last_lint_and_its_age(vault: Path) -> None:
    (vault / "projects" / "a").mkdir(parents=True)
    (vault / "projects" / "a" / "stray.md").write_text(STRAY)
    lint(vault)
    assert kept(vault)["made"] == NOW.strftime("%Y-%m-%dT%H:%M:%SZ")  # type: ignore[index]
    code, got = rows(vault)
    assert code == 1  # the lint's error still fails status, as when status ran it
    assert {n: (r["figure"], r["verdict"]) for n, r in got.items()} == {
        "lint_errors": (2, "fail"),  # as `lint` counts them: the broken link is one
        "broken_links": (1, "fail"),
        "orphans": (1, "warn"),
    }
    assert got["lint_errors"]["detail"] == "lint 0 min ago; see: vaultkeeper lint"


def test_the_figure_is_the_last_lints_until_the_next(vault: Path) -> None:
    lint(vault)
    (vault / "projects" / "a").mkdir(parents=True)
    (vault / "projects" / "a" / "stray.md").write_text(STRAY)  # written after the lint
    _, got = rows(vault)
    assert got["lint_errors"]["figure"] == 0 and got["lint_errors"]["detail"] == "lint 0 min ago"
    lint(vault)
    _, got = rows(vault)
    assert got["lint_errors"]["figure"] == 2


def _aged(vault: Path, age: dt.timedelta) -> None:
    conn = sqlite3.connect(db_file(vault))
    with conn:
        conn.execute(
            "UPDATE lint_summary SET made = ?", ((NOW - age).strftime("%Y-%m-%dT%H:%M:%SZ"),)
        )
    conn.close()


def test_a_lint_under_a_day_old_says_how_old_and_an_older_one_is_done_again(
    vault: Path,
) -> None:
    lint(vault)
    (vault / "projects" / "a").mkdir(parents=True)
    (vault / "projects" / "a" / "stray.md").write_text(STRAY)  # written after the lint
    _aged(vault, dt.timedelta(hours=23))
    _, got = rows(vault)
    assert (got["lint_errors"]["figure"], got["lint_errors"]["detail"]) == (0, "lint 23 h ago")
    _aged(vault, dt.timedelta(days=9))
    _, got = rows(vault)
    assert got["lint_errors"]["figure"] == 2  # linted again: the stray's errors counted
    assert got["lint_errors"]["detail"] == "lint 0 min ago; see: vaultkeeper lint"


def test_a_deleted_database_is_linted_again_with_the_figures_true(vault: Path) -> None:
    lint(vault)
    (vault / "projects" / "a").mkdir(parents=True)
    (vault / "projects" / "a" / "stray.md").write_text(STRAY)  # written after the lint
    _aged(vault, dt.timedelta(hours=2))
    db_file(vault).unlink()  # derived: a person may delete it at any moment
    code, got = rows(vault)
    assert code == 1 and got["lint_errors"]["figure"] == 2  # linted now, not a stale "0"
    assert got["lint_errors"]["detail"] == "lint 0 min ago; see: vaultkeeper lint"
    assert kept(vault)["errors"] == 1  # type: ignore[index]  # kept again


@pytest.mark.parametrize("body", [b"not a database", b"\xff\xfe", b""])
def test_an_unreadable_database_is_linted_again_and_made_afresh(vault: Path, body: bytes) -> None:
    db_file(vault).write_bytes(body)
    code, got = rows(vault)
    assert code == 0
    for row in got.values():
        assert (row["figure"], row["verdict"], row["detail"]) == (0, "ok", "lint 0 min ago")
    assert kept(vault) is not None  # derived: made again, no loss


def test_a_folder_in_its_place_is_no_crash(vault: Path) -> None:
    db_file(vault).mkdir()
    code, got = rows(vault)
    assert code == 0 and got["orphans"]["verdict"] == "ok"  # linted here, nothing kept
    assert db_file(vault).is_dir()


def test_a_partial_lint_keeps_no_summary(vault: Path) -> None:
    lint(vault, "--select", "VK3")
    lint(vault, "--ignore", "VK303")
    lint(vault, "projects")
    assert kept(vault) is None


def test_an_index_made_after_the_lint_has_its_orphans_not_yet(make_vault: MakeVault) -> None:
    vault = make_vault()
    (vault / config.INDEX_FILE).unlink()
    (vault / config.STATE_DIR).mkdir(exist_ok=True)
    lint(vault)
    assert kept(vault)["orphans"] is None  # type: ignore[index]
    _, got = rows(vault)
    assert got["orphans"]["shown"] == "skipped: no _index.md"
    build_index(vault)
    _, got = rows(vault)
    assert (got["orphans"]["verdict"], got["orphans"]["figure"]) == ("not yet", None)
    assert "run `vaultkeeper lint`" in got["orphans"]["detail"]


def test_a_vault_without_state_is_linted_by_status_and_left_clean(make_vault: MakeVault) -> None:
    vault = make_vault({".obsidian/app.json": "{}", "a.md": "[[gone]]\n"}, init=False)
    lint(vault)
    assert not (vault / config.STATE_DIR).exists()  # nothing left behind in a foreign vault
    _, got = rows(vault)
    assert (got["broken_links"]["figure"], got["broken_links"]["verdict"]) == (1, "warn")
    assert not (vault / config.STATE_DIR).exists()


def test_a_database_symlinked_out_of_the_vault_is_not_read(vault: Path, tmp_path: Path) -> None:
    lint(vault)
    outside = tmp_path / "elsewhere.db"
    outside.write_bytes(db_file(vault).read_bytes())  # valid figures, out of the vault
    db_file(vault).unlink()
    db_file(vault).symlink_to(outside)
    conn = sqlite3.connect(outside)
    with conn:
        conn.execute("UPDATE lint_summary SET errors = 7")  # what a read would show
    conn.close()
    before = outside.read_bytes()
    code, got = rows(vault)
    assert got["lint_errors"]["figure"] == 0 and code == 0  # linted here, not read there
    assert outside.read_bytes() == before  # and nothing written through it
