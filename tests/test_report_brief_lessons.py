"""What the brief shows of each lesson, from the scan's rows (report/brief.py).
The brief serves the same lines with them as without them and reads no file the scan
kept; a lesson changed since the scan (superseded, archived) is read again; a missing,
corrupt or foreign database means the brief reads the files, never a traceback."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import MakeVault
from vaultkeeper import config
from vaultkeeper.cli import cli
from vaultkeeper.scan import cache as scan_cache

MEMORY = f"{config.PROJECTS_DIR}/p/{config.MEMORY_SUBDIR}"


def lesson(name: str, description: str, extra: str = "") -> str:
    # a double-quoted value with an escape
    return (
        f'---\nname: {name}\ndescription: "{description}\\u00e9"\ntype: feedback\n'
        f"status: active\n{extra}---\n\nBody of {name}.\n"
    )


@pytest.fixture
def vault(make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch) -> Path:
    # files just written are kept (else a scan started within RACY_NS of the writes
    # saves nothing, and the test would depend on the clock): the bound is the scan
    # cache's (its stats are what the lessons are saved under)
    monkeypatch.setattr(scan_cache, "RACY_NS", 0)
    return make_vault(
        {
            f"{MEMORY}/yaml-one.md": lesson("yaml-one", "Pins the clock"),
            f"{MEMORY}/yaml-two.md": lesson("yaml-two", "Retries once"),
            f"{MEMORY}/plain.md": (
                "---\nname: plain\ndescription: Plain keys.\ntype: feedback\n---\n\nBody.\n"
            ),
        }
    )


def db_file(vault: Path) -> Path:
    return vault / config.STATE_DIR / config.DB_FILE


def served(vault: Path) -> dict[str, Any]:
    """What the scan's rows hold for the brief, by path."""
    with sqlite3.connect(db_file(vault)) as conn:
        rows = conn.execute("SELECT path, served FROM scan_memory").fetchall()
    return {path: json.loads(got) for path, got in rows}


def set_row(vault: Path, rel: str, key: str | None, got: str) -> None:
    """Forge one row's served column (and its key, unless None)."""
    with sqlite3.connect(db_file(vault)) as conn:
        conn.execute("UPDATE scan_memory SET served = ? WHERE path = ?", (got, rel))
        if key is not None:
            conn.execute("UPDATE scan_memory SET key = ? WHERE path = ?", (key, rel))


def scan(vault: Path) -> None:
    result = CliRunner().invoke(cli, ["--vault", str(vault), "scan", "--force"])
    assert result.exit_code in (0, 1), result.output


def brief(vault: Path, tmp_path: Path) -> str:
    cwd = tmp_path / "src" / "p"
    cwd.mkdir(parents=True, exist_ok=True)
    args = ["--vault", str(vault), "report", "--brief", "--cwd", str(cwd)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    return re.sub(r"\([^)]* ago\)", "(AGO)", result.stdout)


def lessons_part(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("- ") and MEMORY in line]


def live(vault: Path, tmp_path: Path) -> str:
    """The brief with no database: every lesson read from its file."""
    saved = {p: p.read_bytes() for p in db_file(vault).parent.glob(config.DB_FILE + "*")}
    for path in saved:
        path.unlink()
    try:
        return brief(vault, tmp_path)
    finally:
        for path, data in saved.items():
            path.write_bytes(data)


def test_a_scan_keeps_what_the_brief_shows_of_each_lesson(vault: Path, tmp_path: Path) -> None:
    scan(vault)
    rows = served(vault)
    assert rows[f"{MEMORY}/yaml-one.md"] == ["yaml-one", "Pins the clock\u00e9", "active"]
    assert rows[f"{MEMORY}/plain.md"] == ["plain", "Plain keys.", None]
    text = brief(vault, tmp_path)
    assert text == live(vault, tmp_path)
    assert [line.split(":")[0] for line in lessons_part(text)] == [
        "- plain",
        "- yaml-one",
        "- yaml-two",
    ]


def test_the_brief_reads_no_lesson_file_the_scan_kept(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session-start brief read every lesson file of the project (1,250 at 50k
    entries): it now stats them and takes what it shows from the scan's rows."""
    from vaultkeeper.store import model

    scan(vault)
    opened: list[str] = []
    real = model.read_regular
    monkeypatch.setattr(model, "read_regular", lambda p: opened.append(str(p)) or real(p))
    text = brief(vault, tmp_path)
    assert not [p for p in opened if MEMORY in p]
    assert len(lessons_part(text)) == 3
    (vault / MEMORY / "plain.md").write_text("---\nname: plain\ndescription: Changed.\n---\n")
    assert "- plain: Changed." in brief(vault, tmp_path)
    # the changed file only (read for the report's candidates too)
    assert {p for p in opened if MEMORY in p} == {str(vault / MEMORY / "plain.md")}


def test_the_brief_uses_the_saved_facts_without_importing_yaml(vault: Path, tmp_path: Path) -> None:
    scan(vault)
    (tmp_path / "src" / "p").mkdir(parents=True)
    code = (
        "import sys\nfrom vaultkeeper.entry import main\n"
        f"sys.argv = ['vaultkeeper', '--vault', {str(vault)!r}, 'report', '--brief', "
        f"'--cwd', {str(tmp_path / 'src' / 'p')!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('YAML' if 'yaml' in sys.modules else 'NO-YAML', file=sys.stderr)\n"
    )
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert got.stderr.splitlines()[-1] == "NO-YAML", got.stderr
    assert "yaml-one: Pins the clock\u00e9" in got.stdout


@pytest.mark.parametrize("change", ['superseded_by: "[[x]]"\n', "archived"])
def test_a_lesson_superseded_or_archived_since_the_scan_is_not_served(
    vault: Path, tmp_path: Path, change: str
) -> None:
    scan(vault)
    path = vault / MEMORY / "yaml-one.md"
    if change == "archived":
        text = path.read_text().replace("status: active", 'status: "archived"')
    else:
        text = lesson("yaml-one", "Pins the clock", change)
    path.write_text(text)
    lines = lessons_part(brief(vault, tmp_path))
    assert [line.split(":")[0] for line in lines] == ["- plain", "- yaml-two"]


def test_a_lesson_edited_since_the_scan_is_read_again(vault: Path, tmp_path: Path) -> None:
    scan(vault)
    (vault / MEMORY / "yaml-two.md").write_text(lesson("yaml-two", "Retries twice"))
    assert "- yaml-two: Retries twice\u00e9" in brief(vault, tmp_path)


@pytest.mark.parametrize("kind", ["missing", "garbage", "another-version"])
def test_a_missing_corrupt_or_foreign_database_means_reading_the_files(
    vault: Path, tmp_path: Path, kind: str
) -> None:
    scan(vault)
    expected = brief(vault, tmp_path)
    for path in db_file(vault).parent.glob(config.DB_FILE + "-*"):
        path.unlink()
    if kind == "missing":
        db_file(vault).unlink()
    elif kind == "garbage":
        db_file(vault).write_bytes(b"{not a database" * 100)
    else:
        with sqlite3.connect(db_file(vault)) as conn:
            conn.execute("PRAGMA user_version = 99")
    assert brief(vault, tmp_path) == expected
    if kind == "missing":
        assert not db_file(vault).exists()  # a reader does not make one


def test_a_row_of_the_wrong_shape_or_another_key_is_not_served(vault: Path, tmp_path: Path) -> None:
    scan(vault)
    expected = brief(vault, tmp_path)
    rel = f"{MEMORY}/yaml-one.md"
    set_row(vault, rel, None, "[3, null]")  # a name that is no text, a field missing
    assert brief(vault, tmp_path) == expected
    set_row(vault, rel, None, "not json")
    assert brief(vault, tmp_path) == expected
    set_row(vault, rel, "[0,0,0,0,0]", '["forged", "forged", "active"]')  # another file's key
    assert brief(vault, tmp_path) == expected


def test_a_file_changed_within_the_racy_window_is_not_kept(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scan_cache, "RACY_NS", 3600 * 10**9)  # all "just written"
    scan(vault)
    assert served(vault) == {}
    assert brief(vault, tmp_path) == live(vault, tmp_path)


def test_a_brief_on_a_vault_no_scan_has_seen_writes_nothing(
    make_vault: MakeVault, tmp_path: Path
) -> None:
    """The brief reads the derived store only when there is one (store.db.existing): on
    a foreign vault it reads the files and leaves no state/ folder, no database."""
    vault = make_vault(
        {f"{MEMORY}/plain.md": "---\nname: plain\ndescription: Plain keys.\n---\n\nBody.\n"},
        init=False,
    )
    (vault / config.INDEX_FILE).write_text("# index\n")
    before = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*"))
    assert "- plain: Plain keys." in brief(vault, tmp_path)
    assert sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*")) == before
    assert not (vault / config.STATE_DIR).exists()
