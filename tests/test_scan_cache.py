"""The scan's rows (scan/cache.py, in the derived store): an unchanged file is not read
again, a changed one always is, and a scan that uses the rows reports exactly what a
scan reading everything reports."""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import MakeVault
from tests.test_scan_classify import memory, spec_files
from vaultkeeper import config
from vaultkeeper.cli import cli
from vaultkeeper.registry import keptheads as cachedheads
from vaultkeeper.registry.keptheads import CachedHead
from vaultkeeper.scan import cache as scancache
from vaultkeeper.scan import classify as scan
from vaultkeeper.store import db, model
from vaultkeeper.upkeep import duplicates as duppairs

NOW = dt.datetime(2026, 9, 1, 12, 0, tzinfo=dt.timezone.utc)
DB = Path(config.STATE_DIR) / config.DB_FILE


def rows(vault: Path) -> dict[str, Any]:
    """The scan's rows, decoded: {"memory": {path: [key, record, served]}, "registry":
    {path: [key, blocks, digest]}, "pairs": {settings, complete, unkept, groups}}; a
    registry row's digest is None unless its file was racy when read."""
    with db.connect(vault) as conn:
        memory = {
            p: [json.loads(k), json.loads(r), json.loads(s)]
            for p, k, r, s in conn.execute("SELECT * FROM scan_memory")
        }
        registry = {
            p: [json.loads(k), json.loads(b), d]
            for p, k, d, b in conn.execute("SELECT * FROM scan_registry")
        }
        names = ("settings", "complete", "unkept")
        pairs: dict[str, Any] = {
            n: json.loads(v) for n, v in conn.execute("SELECT * FROM scan_meta") if n in names
        }
        groups = list(conn.execute("SELECT * FROM scan_pairs"))
    pairs["groups"] = {g: [d, json.loads(p)] for g, d, p in groups}
    return {"memory": memory, "registry": registry, "pairs": pairs}


def forge(vault: Path, data: dict[str, Any]) -> None:
    """Write ``data`` (as kept() gives it) back as the scan's rows."""
    with db.connect(vault) as conn, db.writing(conn):
        for table in ("scan_memory", "scan_registry", "scan_pairs", "scan_meta"):
            conn.execute(f"DELETE FROM {table}")
        conn.executemany(
            "INSERT INTO scan_memory VALUES (?, ?, ?, ?)",
            [
                (p, json.dumps(k).replace(" ", ""), json.dumps(r), json.dumps(s))
                for p, (k, r, s) in data["memory"].items()
            ],
        )
        conn.executemany(
            "INSERT INTO scan_registry VALUES (?, ?, ?, ?)",
            [
                (p, json.dumps(k).replace(" ", ""), d, json.dumps(b))
                for p, (k, b, d) in data["registry"].items()
            ],
        )
        pairs = dict(data["pairs"])
        groups = pairs.pop("groups", {})
        conn.executemany(
            "INSERT INTO scan_meta VALUES (?, ?)",
            [(n, json.dumps(v)) for n, v in pairs.items()],
        )
        conn.executemany(
            "INSERT INTO scan_pairs VALUES (?, ?, ?)",
            [(g, d, json.dumps(p)) for g, (d, p) in groups.items()],
        )


@pytest.fixture(autouse=True)
def no_racy_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files a test has just written count as settled (the window has its own test)."""
    monkeypatch.setattr(scancache, "RACY_NS", 0)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every vault file the scan opens for reading, by path."""
    opened: list[str] = []
    real = model.read_regular

    def counting(path: str | os.PathLike[str]) -> bytes:
        opened.append(os.fspath(path))
        return real(path)

    monkeypatch.setattr(model, "read_regular", counting)
    return opened


def run(vault: Path, *, fresh: bool = False) -> dict[str, Any]:
    """One completed scan's saved report, without the fields that differ run to run."""
    outcome = scan.run_scan(vault, now=NOW, env={}, force=True, pid=os.getpid(), fresh=fresh)
    assert outcome.report is not None
    data = outcome.report.to_dict()
    for key in ("generated_at", "duration_ms"):
        data.pop(key)
    return data


def uncached(vault: Path) -> dict[str, Any]:
    data = scan.classify(vault, NOW).to_dict()
    for key in ("generated_at", "duration_ms"):
        data.pop(key)
    return data


def test_a_second_scan_reads_no_unchanged_file_and_reports_the_same(
    make_vault: MakeVault, reads: list[str]
) -> None:
    vault = make_vault(spec_files(NOW.date()))
    first = run(vault)
    assert any(p.endswith("registry.md") for p in reads) and any("memory" in p for p in reads)
    reads.clear()
    second = run(vault)
    assert [p for p in reads if "/projects/" in p or "/patterns/" in p] == []
    assert second == first == uncached(vault)
    assert [p["reason"] for p in first["problems"]] == [
        "### broken: success count 'many' is not a whole number",
        "holdout_until 'yesterday' is not a date (YYYY-MM-DD); skipped",
    ]


def test_only_the_changed_file_is_read_again(make_vault: MakeVault, reads: list[str]) -> None:
    vault = make_vault(spec_files(NOW.date()))
    run(vault)
    due = vault / "projects/p/memory/future.md"
    due.write_text(due.read_text().replace('"2099-01-01"', '"2026-01-01"'))
    reads.clear()
    after = run(vault)
    # by the scan, and by the brief's saved lessons (report/brief.py): no other file
    assert sorted(set(reads)) == [str(due)]
    assert "future" in [c["name"] for c in after["held_out"]]
    assert after == uncached(vault)


def test_an_edit_that_keeps_size_and_mtime_is_still_seen(
    make_vault: MakeVault, reads: list[str]
) -> None:
    vault = make_vault(spec_files(NOW.date()))
    run(vault)
    path = vault / "projects/p/memory/due.md"
    before = path.stat()
    text = path.read_text()
    path.write_text(text.replace("status: held_out", "status: archive_"))  # same length
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # mtime put back
    assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns
    reads.clear()
    after = run(vault)
    assert sorted(set(reads)) == [str(path)]  # the ctime moved: it cannot be set back
    assert "due" not in [c["name"] for c in after["held_out"]]


def test_registry_edits_and_removed_or_new_files_show(make_vault: MakeVault) -> None:
    vault = make_vault(spec_files(NOW.date()))
    run(vault)
    registry = vault / "patterns/registry.md"
    registry.write_text(
        registry.read_text().replace("**success count:** 1\n", "**success count:** 4\n")
    )
    (vault / "projects/p/memory/due.md").unlink()
    (vault / "projects/p/memory/new.md").write_text(
        (vault / "projects/p/memory/archived.md")
        .read_text()
        .replace("status: archived", "status: held_out")
    )
    after = run(vault)
    assert sorted(c["name"] for c in after["promote"]) == ["foo", "once"]
    assert [c["path"] for c in after["held_out"]] == ["projects/p/memory/new.md"]
    assert after == uncached(vault)
    kept = rows(vault)["memory"]
    assert "projects/p/memory/due.md" not in kept and "projects/p/memory/new.md" in kept


_DUE = "projects/p/memory/due.md"
_REG = "patterns/registry.md"


@pytest.mark.parametrize(
    "forged",
    [
        [("scan_memory", (_DUE, "not a key", "[]", "null"))],
        [("scan_memory", (_DUE, "KEY", "not json at all", "null"))],
        [("scan_memory", (_DUE, "KEY", "3", "null"))],
        [("scan_memory", (_DUE, "KEY", "[" * 100_000 + "]" * 100_000, "null"))],
        [("scan_memory", (_DUE, "KEY", "[1" + "9" * 5000 + "]", "null"))],
        [("scan_memory", (_DUE, "KEY", '[["x"], "line", null, null]', "null"))],
        [("scan_registry", (_REG, "KEY", None, '[["x"]]'))],
        [("scan_registry", (_REG, "KEY", None, "{}"))],
        [("scan_registry", (_REG, "KEY", "racy", "garbage"))],
        [("scan_meta", ("settings", "7")), ("scan_pairs", ("g", "d", "x"))],
    ],
    ids=[
        "other-key",
        "not-json",
        "a-number",
        "too-deep",
        "huge-int",
        "wrong-shapes",
        "a-bad-block",
        "blocks-a-mapping",
        "racy-garbage",
        "bad-pairs",
    ],
)
def test_a_bad_row_is_ignored_and_rewritten(
    make_vault: MakeVault, forged: list[tuple[str, tuple[Any, ...]]], capsys: Any
) -> None:
    vault = make_vault(spec_files(NOW.date()))
    expected = uncached(vault)
    run(vault)
    with db.connect(vault) as conn, db.writing(conn):
        for table, row in forged:
            path = vault / row[0]
            if row[1] == "KEY":  # the file's own stat key: the row is used
                row = (row[0], scancache.stat_key(path.stat(), 0)[0], *row[2:])
            marks = ", ".join("?" * len(row))
            conn.execute(f"INSERT OR REPLACE INTO {table} VALUES ({marks})", row)
    assert run(vault) == expected
    data = rows(vault)
    assert data["memory"][_DUE][1][0][0] == "due" and data["registry"][_REG][2] is None
    assert capsys.readouterr().err == ""


def test_a_database_sqlite_cannot_read_is_replaced(make_vault: MakeVault) -> None:
    vault = make_vault(spec_files(NOW.date()))
    expected = uncached(vault)
    (vault / DB).parent.mkdir(exist_ok=True)
    (vault / DB).write_bytes(b"not a database" * 1000)
    assert run(vault) == expected
    assert _DUE in rows(vault)["memory"]


def test_a_forged_entry_under_the_right_key_is_refused_not_crashed_on(
    make_vault: MakeVault,
) -> None:
    vault = make_vault(spec_files(NOW.date()))
    expected = run(vault)
    data = rows(vault)
    rel = "patterns/registry.md"
    data["registry"][rel][1] = [[1, "two", None, None, None, "", None, []]]  # a line as text
    for entry in data["memory"].values():
        entry[1] = [{"status": "held_out"}, "line", None, []]
    forge(vault, data)
    assert run(vault) == expected


def test_fresh_reads_everything(make_vault: MakeVault, reads: list[str]) -> None:
    vault = make_vault(spec_files(NOW.date()))
    first = run(vault)
    reads.clear()
    assert run(vault, fresh=True) == first
    assert any(p.endswith("registry.md") for p in reads)
    assert len([p for p in reads if "/memory/" in p]) == 7


def test_files_changed_within_the_racy_window_are_not_kept(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch, reads: list[str]
) -> None:
    monkeypatch.setattr(scancache, "RACY_NS", 3600 * 10**9)  # everything is "just written"
    vault = make_vault(spec_files(NOW.date()))
    run(vault)
    data = rows(vault)
    assert data["memory"] == {}
    assert [entry[2] is None for entry in data["registry"].values()] == [False]  # digest
    reads.clear()
    run(vault)
    assert len([p for p in reads if "/memory/" in p]) == 7
    assert len([p for p in reads if p.endswith("registry.md")]) == 1


def test_a_value_json_cannot_carry_leaves_its_file_uncached(make_vault: MakeVault) -> None:
    files = spec_files(NOW.date())
    files["projects/p/memory/timed.md"] = (
        "---\nname: timed\nstatus: active\nlast_validated: 2026-08-01 10:30:00\n---\nbody\n"
    )
    vault = make_vault(files)
    first = run(vault)
    kept = rows(vault)["memory"]
    assert "projects/p/memory/timed.md" not in kept and "projects/p/memory/due.md" in kept
    assert run(vault) == first == uncached(vault)


def test_a_kept_date_reads_as_the_date_it_was(make_vault: MakeVault) -> None:
    files = spec_files(NOW.date())
    files["projects/p/memory/old.md"] = (
        "---\nname: old\nstatus: active\nlast_validated: 2025-01-01\n---\nbody\n"
    )
    vault = make_vault(files)
    first = run(vault)
    assert [s["name"] for s in first["stale"]] == ["old"]
    assert run(vault) == first


def test_pairs_are_reused_until_a_name_or_description_changes(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = spec_files(NOW.date())
    mem = "projects/p/memory/"
    text = (
        "---\nname: {0}\nstatus: active\ndescription: retry flaky network calls with backoff\n---\n"
    )
    files[mem + "retry-a.md"] = text.format("retry-a")
    files[mem + "retry-b.md"] = text.format("retry-b")
    vault = make_vault(files)
    calls: list[int] = []
    real = duppairs.pairs_by_group

    def noting(items: Any, *threshold: float) -> Any:
        if not threshold:  # the scan's pass (find_pairs, for the uncached run, passes it)
            calls.append(len(items))
        return real(items, *threshold)

    monkeypatch.setattr(duppairs, "pairs_by_group", noting)
    first = run(vault)
    assert len(first["duplicates"]) == 1 and calls == [14]  # the blocks and project p's lessons
    assert run(vault) == first and calls == [14]  # nothing changed: not sought again
    registry = vault / "patterns/registry.md"
    registry.write_text(
        registry.read_text().replace("**success count:** 1\n", "**success count:** 2\n")
    )
    run(vault)
    assert calls == [14]  # a count is no word of any entry: the same items
    (vault / mem / "retry-b.md").write_text(text.format("retry-b").replace("backoff", "jitter"))
    assert run(vault)["duplicates"] == [] and calls == [14, 7]  # project p's group only


def test_a_block_kept_without_its_hash_gets_it_from_the_file(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = make_vault(spec_files(NOW.date()))
    run(vault)
    kept = rows(vault)["registry"]["patterns/registry.md"][1]
    assert [h[6] is None for h in kept] == [False, False, True, False, False, True, True]
    monkeypatch.setattr(config, "PROMOTE_MIN_COUNT", 1)  # "once" (count 1) is eligible now
    after = run(vault)
    assert after == uncached(vault)
    once = [c for c in after["promote"] if c["name"] == "once"]
    assert len(once) == 1 and len(once[0]["hash"]) == 64


def test_a_symlinked_database_is_refused_and_its_target_untouched(
    make_vault: MakeVault, tmp_path: Path
) -> None:
    vault = make_vault(spec_files(NOW.date()))
    elsewhere = tmp_path / "elsewhere.db"
    elsewhere.write_text('{"format": 1}')
    (vault / DB).parent.mkdir(exist_ok=True)
    (vault / DB).symlink_to(elsewhere)
    result = CliRunner().invoke(cli, ["--vault", str(vault), "scan", "--force"])
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert f"state/{config.DB_FILE}: a symlink; refused" in result.output
    assert elsewhere.read_text() == '{"format": 1}'  # never read or written through


def test_as_of_and_the_cli_flag(make_vault: MakeVault) -> None:
    vault = make_vault(spec_files(NOW.date()))
    runner = CliRunner()
    result = runner.invoke(cli, ["--vault", str(vault), "scan", "--as-of", "2026-09-01"])
    assert result.exit_code == 0 and not (vault / DB).exists()
    result = runner.invoke(cli, ["--vault", str(vault), "scan", "--force", "--fresh"])
    assert result.exit_code == 0 and rows(vault)["memory"]
    assert "--fresh" in runner.invoke(cli, ["scan", "--help"]).output


def test_cached_heads_answer_like_parsed_ones(make_vault: MakeVault) -> None:
    from vaultkeeper.registry.blocks import load_heads

    vault = make_vault(spec_files(NOW.date()))
    run(vault)
    cache = scancache.load(vault)
    kept, _ = cachedheads.load_heads(vault, cache)
    parsed, _ = load_heads(vault)
    assert cache.hits == 1 and len(kept) == len(parsed)
    for a, b in zip(kept, parsed, strict=True):
        assert isinstance(a, CachedHead)
        fields = ("name", "rel", "line", "count", "count_raw", "last_used", "promoted")
        assert [getattr(a, f) for f in fields] == [getattr(b, f) for f in fields]
        assert a.sentence() == b.sentence()
        if a.count == 0 or (a.count or 0) >= config.PROMOTE_MIN_COUNT and a.promoted is None:
            assert a.hash == b.hash  # kept only where a candidate can come from
        if a.count is None:
            assert a.problems() == b.problems()


def test_a_registry_edited_scan_after_scan_reports_a_fresh_scans_pairs(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    import random

    monkeypatch.setattr(config, "DUP_COMMON_MIN", 3)
    rng = random.Random(7)
    # three words in most blocks (common), the rest each in a few (some near the limit)
    vocab = ["retry", "flaky", "clock"] + [f"v{k}" for k in range(40)]
    weights = [12.0] * 3 + [1.0] * 40

    def block(name: str) -> str:
        sentence = " ".join(rng.choices(vocab, weights, k=rng.randint(2, 5))).capitalize()
        return f"### {name}\n{sentence}. More.\n\n**success count:** 1\n"

    def lesson(name: str, words: str) -> str:
        return f"---\nname: {name}\nstatus: active\ndescription: {words}\n---\n"

    blocks = [block(f"b{k}") for k in range(40)]
    registry = "patterns/registry.md"
    # small groups around it: three projects, each with a pair of lessons
    files = {registry: "# Pattern registry\n\n" + "\n".join(blocks)}
    for p in ("a", "b", "c"):
        for n in (1, 2):
            files[f"projects/{p}/memory/l{n}.md"] = lesson(f"l{n}", "retry flaky network calls")
    vault = make_vault(files)
    for turn in range(12):
        data = run(vault)
        assert data["duplicates"] == uncached(vault)["duplicates"]
        at = rng.randrange(len(blocks))
        if turn % 3 == 0:
            blocks.insert(at, block(f"n{turn}"))
        elif turn % 3 == 1:
            del blocks[at]
        else:
            blocks[at] = block(f"e{turn}")
        (vault / registry).write_text("# Pattern registry\n\n" + "\n".join(blocks))
        words = "retry flaky network calls" if turn % 2 else f"other words {turn}"
        (vault / f"projects/{'abc'[turn % 3]}/memory/l1.md").write_text(lesson("l1", words))


MEM = "projects/p/memory/"


DUP = (
    "---\nname: {0}\nstatus: active\ndescription: retry flaky network calls with backoff\n{1}---\n"
)


def test_deleting_an_uncacheable_file_drops_its_duplicate_pair(make_vault: MakeVault) -> None:
    """A file the cache cannot keep (a datetime value) is in the pairs the cache keeps,
    but not among its files: deleting it changes nothing the cache compares."""
    files = spec_files(NOW.date())
    files[MEM + "retry-a.md"] = DUP.format("retry-a", "")
    files[MEM + "retry-b.md"] = DUP.format("retry-b", "last_validated: 2026-08-01 10:30:00\n")
    vault = make_vault(files)
    assert len(run(vault)["duplicates"]) == 1
    (vault / MEM / "retry-b.md").unlink()
    cached = run(vault)
    assert cached == run(vault, fresh=True)
    assert cached["duplicates"] == []


def test_deleting_a_file_written_in_the_racy_window_drops_its_duplicate_pair(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same through the racy window: a file just written is not kept, yet the pairs
    found with it are; once it is gone, every kept file is unchanged."""
    files = spec_files(NOW.date())
    files[MEM + "retry-a.md"] = DUP.format("retry-a", "")
    vault = make_vault(files)
    run(vault)  # everything settled and kept
    young = vault / MEM / "retry-b.md"
    young.write_text(DUP.format("retry-b", ""))
    settled = young.stat().st_ctime_ns - 1  # only the new file is "just written"
    monkeypatch.setattr(scancache, "RACY_NS", 0)
    monkeypatch.setattr(scancache.time, "time_ns", lambda: settled)
    assert len(run(vault)["duplicates"]) == 1
    assert MEM + "retry-b.md" not in rows(vault)["memory"]
    young.unlink()
    cached = run(vault)
    assert cached["duplicates"] == run(vault, fresh=True)["duplicates"] == []


def test_a_transient_read_error_is_not_kept_as_the_files_problem(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An I/O error (EIO, EMFILE, ENOMEM, a network file system's hiccup) says nothing
    about the file's bytes, yet it is kept as the file's record: every later scan
    reports the file unreadable until it is edited, where a fresh scan reads it."""
    from vaultkeeper.store import model

    vault = make_vault(spec_files(NOW.date()))
    due = str(vault / MEM / "due.md")
    real = model.read_regular

    def flaky(path: str | os.PathLike[str]) -> bytes:
        if os.fspath(path) == due:
            raise model.ParseError("cannot read: Input/output error")
        return real(path)

    monkeypatch.setattr(model, "read_regular", flaky)
    assert "cannot read: Input/output error" in [p["reason"] for p in run(vault)["problems"]]
    monkeypatch.setattr(model, "read_regular", real)  # the disk is fine again
    assert run(vault) == run(vault, fresh=True)


def _forge(vault: Path, edit: Any) -> None:
    data = rows(vault)
    edit(data)
    forge(vault, data)


@pytest.mark.parametrize("problems", [[[]], [{}], [""]], ids=["empty-list", "object", "empty-text"])
def test_a_kept_block_problem_of_the_wrong_shape_is_refused_not_crashed_on(
    make_vault: MakeVault, problems: list[Any]
) -> None:
    vault = make_vault(spec_files(NOW.date()))
    expected = run(vault)

    def edit(data: dict[str, Any]) -> None:
        data["registry"]["patterns/registry.md"][1][0][7] = problems

    _forge(vault, edit)
    assert run(vault) == expected


@pytest.mark.parametrize(
    ("field", "forged"),
    [
        (3, float("inf")),  # an infinite line: JSON's Infinity; 1e999 reads the same
        (8, [1, None]),  # shared words that are not text
    ],
    ids=["infinite-line", "words-not-text"],
)
def test_a_forged_kept_pair_is_refused_not_crashed_on(
    make_vault: MakeVault, field: int, forged: Any
) -> None:
    """A forged or damaged pair row in the store: its pair is compared again, no
    traceback, the same report."""
    files = spec_files(NOW.date())
    files[MEM + "retry-a.md"] = DUP.format("retry-a", "")
    files[MEM + "retry-b.md"] = DUP.format("retry-b", "")
    vault = make_vault(files)
    expected = run(vault)

    def edit(data: dict[str, Any]) -> None:
        for kept in data["pairs"]["groups"].values():
            for pair in kept[1]:
                pair[field] = forged

    _forge(vault, edit)
    assert run(vault) == expected


def test_rows_that_cannot_be_written_do_not_fail_the_scan(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rows are only a cache: a database another writer holds past the busy timeout
    (or a full disk) loses this scan's rows, never the scan (its report is derived later)."""
    vault = make_vault(spec_files(NOW.date()))
    with db.connect(vault):
        pass
    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 50)
    holder = sqlite3.connect(vault / DB, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process's write transaction, held
    try:
        result = CliRunner().invoke(cli, ["--vault", str(vault), "scan", "--force"])
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert result.exit_code == 0, result.output
    assert "locked" not in result.output
    later = CliRunner().invoke(cli, ["--vault", str(vault), "report"])
    assert later.stdout.splitlines()[0] == result.stdout.splitlines()[0]
    assert rows(vault)["memory"] == {}  # nothing kept: the next scan reads every file


def test_a_group_digest_is_not_fooled_by_separators_inside_a_description(
    make_vault: MakeVault,
) -> None:
    """A group's digest joins its items' fields with \\x1e and \\x1f, which a YAML value
    may hold ("\\x1f" in double quotes): one entry whose description spells out a second
    entry digests as the two did, and their pair is served after the second is gone."""
    files = spec_files(NOW.date())
    text = "---\nname: {0}\nstatus: active\ndescription: {1}\n---\n"
    files[MEM + "retry-a.md"] = text.format("retry-a", "retry flaky network calls")
    files[MEM + "retry-b.md"] = text.format("retry-b", "retry flaky network calls")
    vault = make_vault(files)
    first = run(vault)
    assert len(first["duplicates"]) == 1
    # the group's items before: retry-a, retry-b (and the spec files' other lessons after)
    spelled = (
        '"retry flaky network calls\\x1fretry-b\\x1eprojects/p/memory/retry-b.md'
        '\\x1e1\\x1eretry-b retry flaky network calls"'
    )
    (vault / MEM / "retry-b.md").unlink()
    (vault / MEM / "retry-a.md").write_text(text.format("retry-a", spelled))
    assert run(vault)["duplicates"] == run(vault, fresh=True)["duplicates"] == []


def test_a_kept_record_with_a_hash_but_no_holdout_until_is_refused_not_crashed_on(
    make_vault: MakeVault,
) -> None:
    """decode_record takes any dict as the keys; a hash says "a held-out candidate on some
    day", and the judge then reads meta["holdout_until"]: a KeyError ends the scan."""
    vault = make_vault(spec_files(NOW.date()))
    expected = run(vault)

    def edit(data: dict[str, Any]) -> None:
        for entry in data["memory"].values():
            entry[1] = [{"status": "held_out"}, 1, "0" * 64, []]

    _forge(vault, edit)
    assert run(vault) == expected


def test_a_kept_block_without_a_hash_at_a_line_the_file_lacks_does_not_stop_every_scan(
    make_vault: MakeVault,
) -> None:
    """A kept prune candidate without its hash is hashed from the file at its kept line;
    at a line with no block the scan ends ("the block moved ... scan again"), and so does
    every scan after it: the cache is never rewritten."""
    vault = make_vault(spec_files(NOW.date()))
    expected = run(vault)

    def edit(data: dict[str, Any]) -> None:
        data["registry"]["patterns/registry.md"][1].append(
            ["ghost", 999, "0", "2020-01-01", None, "", None, []]
        )

    _forge(vault, edit)
    from vaultkeeper.errors import VaultkeeperError

    try:
        first = run(vault)
    except VaultkeeperError as exc:
        pytest.fail(f"the scan ended: {exc}")
    assert first["prune"] == expected["prune"]


def test_a_cached_memory_entry_named_outside_any_project_is_ignored(
    make_vault: MakeVault,
) -> None:
    """A memory entry whose name holds no project (a forged or foreign cache's) crashed
    the duplicates pass when a file had changed: its project was looked up by index."""
    vault = make_vault(spec_files(NOW.date()))
    run(vault)
    data = rows(vault)
    data["memory"]["stray"] = [[1, 2, 3, 4, 5], None, None]
    forge(vault, data)
    due = vault / "projects/p/memory/due.md"
    due.write_text(due.read_text() + "\nMore.\n")
    assert run(vault) == uncached(vault)


def test_a_project_left_alone_keeps_its_pairs_and_its_next_edit_is_compared_fresh(
    make_vault: MakeVault,
) -> None:
    lesson = "---\nname: {0}\nstatus: active\ndescription: {1}\n---\n"
    big = "projects/big/memory/"
    said = "retry flaky network calls with backoff"
    files = {f"{big}l{k}.md": lesson.format(f"l{k}", said) for k in range(4)}
    files["projects/small/memory/a.md"] = lesson.format("a", "one thing")
    vault = make_vault(files)
    assert len(run(vault)["duplicates"]) == 6
    (vault / "projects/small/memory/a.md").write_text(lesson.format("a", "another thing"))
    assert run(vault) == uncached(vault)  # the big project left alone
    (vault / big / "l2.md").write_text(lesson.format("l2", "parse dates"))
    assert run(vault) == uncached(vault) and len(uncached(vault)["duplicates"]) == 3


_BLOCK_LINES = [
    *("### alpha", "### beta", "### alpha\r", "## Section", "#### deeper", "```", "~~~"),
    *("**success count:** 0", "**success count:** 3", "**success count:** x", "---", "..."),
    *("**last used:** 2026-01-02", "**last used:** 2026-08-30", "**last used:** someday"),
    *("**promoted:** 2026-01-03 -> [[skills/a/SKILL]]", "", "plain", "**success count:** 5\r"),
    *("Retry flaky network calls. More.", "Caf\u00e9 \u2014 retry flaky calls."),
]


_DESCRIPTIONS = ["retry flaky network calls with backoff", "caf\u00e9 retry flaky network", "x"]


_DATES = ['"2026-08-01"', '"2099-01-01"', "2026-08-01", "2026-08-01 10:30:00", '"soon"', None]


def _lesson(rng: random.Random, name: str) -> str:
    extra = {}
    if rng.random() < 0.3:  # a date, a quoted one, a datetime (which the cache cannot keep)
        extra["last_validated"] = rng.choice(["2026-01-01", '"2026-01-01"', "2025-12-31T10:00:00"])
    status = rng.choice(["active", "held_out", "archived", None])
    text = memory(name, rng.choice(_DATES), status=status, **extra)
    return text.replace("description: a lesson", "description: " + rng.choice(_DESCRIPTIONS))


def _edit_registry(rng: random.Random, text: str) -> str:
    lines = text.split("\n")
    for _ in range(rng.randint(1, 3)):  # lines in, out or replaced
        at = rng.randrange(len(lines) + 1)
        if rng.random() < 0.4:
            lines.insert(at, rng.choice(_BLOCK_LINES))
        elif at < len(lines):
            lines[at : at + 1] = [] if rng.random() < 0.5 else [rng.choice(_BLOCK_LINES)]
    text = "\n".join(lines)
    for _ in range(rng.randint(0, 2)):  # a character in or out: lines join and split
        at = rng.randrange(len(text) + 1)
        if rng.random() < 0.5:
            text = text[:at] + rng.choice("\n#` *~-a\u00e9\r") + text[at:]
        else:
            text = text[:at] + text[at + 1 :]
    if rng.random() < 0.1:
        text = text.replace("\n", "\r\n")
    return rng.choice(["---\n", "---\nx: 1\n---\n", ""]) + text if rng.random() < 0.1 else text


@pytest.mark.parametrize("seed", range(3))
def test_scan_after_scan_of_random_edits_reports_what_a_fresh_scan_does(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """Registry and memory files edited, added and deleted across projects, with the
    rows rewritten scan after scan, and now and
    then a scan for which the files just edited are in the racy window."""
    real_ns = time.time_ns
    limit: list[int | None] = [None]
    monkeypatch.setattr(time, "time_ns", lambda: limit[0] or real_ns())  # scancache's clock
    rng = random.Random(seed)
    files = spec_files(NOW.date())
    for p in "pqr":
        files.update({f"projects/{p}/memory/l{n}.md": _lesson(rng, f"l{n}") for n in range(3)})
    files["patterns/second.md"] = "\n".join(rng.choices(_BLOCK_LINES, k=30))
    vault = make_vault(files)
    tick = 1_700_000_000 * 10**9

    def write(rel: str, text: str) -> None:
        nonlocal tick
        path = vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
        tick += 10**9  # an mtime of its own: an edit within one clock tick is the window's
        os.utime(path, ns=(tick, tick))

    for step in range(15):
        assert run(vault) == uncached(vault), step
        mark = real_ns() + 1  # files changed from now on are in the next scan's window
        while real_ns() < mark:
            pass
        limit[0] = mark if rng.random() < 0.35 else None
        for _ in range(rng.randint(1, 3)):
            roll = rng.random()
            registries = sorted(p.name for p in (vault / "patterns").glob("*.md"))
            lessons = sorted((vault / "projects").glob("*/memory/*.md"))
            if roll < 0.45 and registries:
                rel = "patterns/" + rng.choice(registries)
                write(rel, _edit_registry(rng, (vault / rel).read_bytes().decode()))
            elif roll < 0.8 and lessons:
                path = rng.choice(lessons)
                if rng.random() < 0.2:
                    path.unlink()
                else:
                    write(str(path.relative_to(vault)), _lesson(rng, path.stem))
            elif roll < 0.85:
                rel = rng.choice(["patterns/second.md", "patterns/third.md"])
                if (vault / rel).exists() and rng.random() < 0.5:
                    (vault / rel).unlink()
                else:
                    write(rel, "\n".join(rng.choices(_BLOCK_LINES, k=rng.randint(0, 30))))
            else:
                write(f"projects/{rng.choice('pqrs')}/memory/n{step}.md", _lesson(rng, f"n{step}"))


def test_a_lesson_changed_since_the_scan_is_read_once_for_its_row_and_the_index(
    make_vault: MakeVault, reads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the full-text index on, a scan hands the index the text it read: the file
    is opened once, and the index finds the new words."""
    from tests.conftest import recall_on
    from vaultkeeper.search import index
    from vaultkeeper.search.rank import Searcher

    monkeypatch.setattr(index, "RACY_NS", 0)
    monkeypatch.setattr(index, "read_regular", model.read_regular)  # counted too
    lesson = "---\nname: a\ndescription: {}\nstatus: active\n---\n\nBody.\n"
    vault = recall_on(make_vault({"projects/api/memory/a.md": lesson.format("zebra")}))
    run(vault)
    (vault / "projects/api/memory/a.md").write_text(lesson.format("quokka"))
    reads.clear()
    run(vault)
    assert [p for p in reads if p.endswith("a.md")] == [str(vault / "projects/api/memory/a.md")]
    with db.connect(vault) as conn:
        assert index.refresh(conn, vault) == 0  # the scan left the index up to date
    assert [h.name for h in Searcher(vault).search("quokka")] == ["a"]


def test_a_scan_stats_each_file_it_reads_once(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report's inputs and the scan's reads share one stat of each file."""
    vault = make_vault(spec_files(NOW.date()))
    first = run(vault)
    stats: list[str] = []
    real = os.stat

    def counting(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        stats.append(os.fspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", counting)
    second = run(vault)
    read = [p for p in stats if "/projects/" in p or "/patterns/" in p]
    assert read and len(read) == len(set(read))
    assert second == first == uncached(vault)
