"""The brief's patterns as the report's row keeps them (report/brief.py top, scan/last.py),
each registry file's as the scan or a patch read it; a file changed since is read again,
and a missing, racy, forged or foreign row gives the brief the registry parses to (never a
traceback)."""

from __future__ import annotations

import datetime as dt
import re
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import MakeVault
from vaultkeeper import config
from vaultkeeper.cli import cli
from vaultkeeper.report import brief as brief_patterns
from vaultkeeper.scan import cache as scan_cache
from vaultkeeper.scan import last

TODAY = dt.datetime.now(dt.timezone.utc).date()


def block(name: str, count: int, days_ago: int, prose: str) -> str:
    used = TODAY - dt.timedelta(days=days_ago)
    return (
        f"### {name}\n{prose}\nmore of it.\n\n**success count:** {count}\n**last used:** {used}\n\n"
    )


def registry(*blocks: str) -> str:
    return "# Pattern registry\n\n" + "".join(blocks)


@pytest.fixture
def vault(make_vault: MakeVault) -> Path:
    return make_vault(
        {
            config.REGISTRY_FILE: registry(
                block("alpha", 4, 3, "Alpha keeps the cache warm."),
                block("beta", 9, 1, "Beta pins the clock."),
                block("gamma", 0, 5, "Gamma retries once."),
            ),
            "patterns/more.md": registry(block("delta", 6, 2, "Delta splits the batch.")),
        }
    )


def db_file(vault: Path) -> Path:
    return vault / config.STATE_DIR / config.DB_FILE


def sql(vault: Path, query: str, *args: object) -> list[tuple[object, ...]]:
    with sqlite3.connect(db_file(vault)) as conn:
        return conn.execute(query, args).fetchall()


@pytest.fixture(autouse=True)
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files just written count as settled (the racy case has its own test)."""
    monkeypatch.setattr(scan_cache, "RACY_NS", 0)


def scan(vault: Path) -> None:
    result = CliRunner().invoke(cli, ["--vault", str(vault), "scan", "--force"])
    assert result.exit_code in (0, 1), result.output


def brief(vault: Path) -> str:
    result = CliRunner().invoke(cli, ["--vault", str(vault), "report", "--brief"])
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    return re.sub(r"\([^)]* ago\)", "(AGO)", result.stdout)


def patterns_part(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("- ") and "#" in line]


def live(vault: Path) -> str:
    """The brief with no database: the registry parsed now."""
    saved = {p: p.read_bytes() for p in db_file(vault).parent.glob(config.DB_FILE + "*")}
    for path in saved:
        path.unlink()
    try:
        return brief(vault)
    finally:
        for path, data in saved.items():
            path.write_bytes(data)


def test_a_scan_keeps_what_the_brief_shows(vault: Path) -> None:
    scan(vault)
    rows = sql(vault, "SELECT name, summary FROM brief_patterns ORDER BY rank")
    assert [r[0] for r in rows] == ["beta", "delta", "alpha", "gamma"]
    assert rows[0][1] == "Beta pins the clock. more of it."
    got = last.derived(vault)
    assert got is not None
    rows, total = got.patterns
    assert [r[0] for r in rows] == ["beta", "delta", "alpha", "gamma"] and total == 4
    assert brief(vault) == live(vault)
    assert patterns_part(brief(vault))[0].startswith("- beta (success count 9")


def test_the_brief_parses_no_registry_block_the_scan_kept(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultkeeper.registry import blocks

    scan(vault)
    called: list[str] = []
    real = blocks.load_heads
    monkeypatch.setattr(blocks, "load_heads", lambda v: called.append("parse") or real(v))
    text = brief(vault)
    assert called == [] and patterns_part(text)[0].startswith("- beta (success count 9")


def test_a_registry_changed_since_the_scan_is_read_again(vault: Path) -> None:
    scan(vault)
    path = vault / config.REGISTRY_FILE
    path.write_text(path.read_text().replace("**success count:** 4", "**success count:** 20"))
    assert patterns_part(brief(vault))[0].startswith("- alpha (success count 20")
    assert brief(vault) == live(vault)


def test_a_registry_file_added_or_gone_since_the_scan(vault: Path) -> None:
    scan(vault)
    (vault / "patterns" / "new.md").write_text(registry(block("eps", 50, 1, "Eps is new.")))
    assert patterns_part(brief(vault))[0].startswith("- eps (success count 50")
    (vault / "patterns" / "new.md").unlink()
    (vault / "patterns" / "more.md").unlink()
    assert not any("delta" in line for line in patterns_part(brief(vault)))


def test_a_file_written_as_the_scan_read_it_holds_only_while_its_bytes_do(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A registry file changed within a clock tick of the scan's read could change again
    under the same stat key: the report's row keeps the digest of the bytes read, and
    is used as it is only while the file's bytes still have it."""
    monkeypatch.setattr(scan_cache, "RACY_NS", 3600 * 10**9)  # all "just written"
    scan(vault)
    (racy,) = sql(vault, "SELECT racy FROM scan_report")[0]
    assert config.REGISTRY_FILE in str(racy)
    assert brief(vault) == live(vault)  # the same bytes: served
    forged = str(racy).replace(f'"{config.REGISTRY_FILE}": "', f'"{config.REGISTRY_FILE}": "0')
    sql(vault, "UPDATE scan_report SET racy = ?", forged)  # other bytes under the same key
    path = vault / config.REGISTRY_FILE
    path.write_bytes(path.read_bytes().replace(b"count:** 4", b"count:** 8"))
    assert patterns_part(brief(vault))[1].startswith("- alpha (success count 8")


def test_blocks_the_scan_cache_kept_get_their_paragraph(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed: list[str] = []
    real = brief_patterns._parsed

    def counted(vault: Path, head: object, done: dict[str, dict[int, object]]) -> str:
        parsed.append(getattr(head, "name", ""))
        return real(vault, head, done)  # type: ignore[arg-type]

    monkeypatch.setattr(brief_patterns, "_parsed", counted)
    scan(vault)
    path = vault / "patterns" / "more.md"  # one file changes: the other comes from its row
    path.write_text(path.read_text() + block("zeta", 7, 1, "Zeta is another."))
    scan(vault)
    assert brief(vault) == live(vault) and parsed == []  # by the fingerprints kept
    sql(vault, "DELETE FROM brief_patterns")  # and without the last rows to take them from
    scan(vault)
    assert sorted(parsed) == ["alpha", "beta", "delta", "gamma", "zeta"]  # all from rows
    assert brief(vault) == live(vault)


@pytest.mark.parametrize(
    "forge",
    [
        "DELETE FROM scan_report",
        "UPDATE scan_report SET report = 'many'",
        "UPDATE scan_report SET report = '[1, 2]'",
        "UPDATE scan_report SET report = x'41'",  # a blob
        "UPDATE report_files SET basis = '{}'",
        "UPDATE report_files SET basis = '[1]', key = 'x'",
        "UPDATE report_files SET items = '[[], [1], []]'",
        "UPDATE report_files SET items = '{nope'",
        "DELETE FROM report_files WHERE path LIKE 'patterns/%'",
        "UPDATE scan_report SET racy = '[1]'",
        "UPDATE scan_report SET racy = '[[[[' , inputs = 'x'",
        "DELETE FROM scan_registry WHERE path = 'patterns/more.md'",
    ],
)
def test_forged_or_missing_rows_are_not_served(vault: Path, forge: str) -> None:
    scan(vault)
    sql(vault, forge)
    assert brief(vault) == live(vault)


def test_scan_as_of_keeps_nothing(vault: Path) -> None:
    result = CliRunner().invoke(cli, ["--vault", str(vault), "scan", "--as-of", str(TODAY)])
    assert result.exit_code in (0, 1) and not db_file(vault).exists()


def test_a_database_symlinked_out_of_the_vault_is_not_served(vault: Path, tmp_path: Path) -> None:
    scan(vault)
    sql(vault, "UPDATE scan_report SET report = replace(report, 'Beta pins', 'PLANTED')")
    outside = tmp_path / "planted.db"
    for path in db_file(vault).parent.glob(config.DB_FILE + "-*"):
        path.unlink()
    db_file(vault).rename(outside)
    db_file(vault).symlink_to(outside)
    assert "PLANTED" not in brief(vault)
