"""The scan cache: an unchanged file is not read again, a changed one always is, and a
scan that trusts the cache reports exactly what a scan reading everything reports."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import MakeVault
from tests.test_scan_classify import spec_files
from vaultkeeper import config
from vaultkeeper.cli import cli
from vaultkeeper.registry import delta as cachedheads
from vaultkeeper.registry.keptheads import CachedHead
from vaultkeeper.scan import cache as scancache
from vaultkeeper.scan import cachefile as scancachefile
from vaultkeeper.scan import classify as scan
from vaultkeeper.store import model
from vaultkeeper.upkeep import dup_pairs as duppairs

NOW = dt.datetime(2026, 9, 1, 12, 0, tzinfo=dt.timezone.utc)
CACHE = Path(config.STATE_DIR) / config.SCAN_CACHE_FILE


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
    assert reads == [str(due)]
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
    assert reads == [str(path)]  # the ctime moved: it cannot be set back
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
    kept = json.loads((vault / CACHE).read_text())["memory"]
    assert "projects/p/memory/due.md" not in kept and "projects/p/memory/new.md" in kept


@pytest.mark.parametrize(
    "content",
    [
        b"not json at all",
        b"\xff\xfe",
        b"[]",
        b'{"format": 999, "memory": {}, "registry": {}}',
        b'{"format": FORMAT, "version": "0.0.0-other", "memory": {}, "registry": {}}',
        b'{"format": FORMAT, "version": "VERSION", "memory": {"projects/p/memory/due.md": 3}, '
        b'"registry": {"patterns/registry.md": [[1, 2, 3, 4, 5], [["x"]]]}, "pairs": 7}',
        b'{"format": FORMAT, "version": "VERSION", "memory": {}, "registry": {}, "n": 1'
        + b"9" * 5000
        + b"}",
        b'{"format": FORMAT, "n": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    ],
    ids=[
        "garbage",
        "not-utf8",
        "a-list",
        "other-format",
        "other-version",
        "wrong-shapes",
        "huge-int",
        "too-deep",
    ],
)
def test_a_bad_cache_is_ignored_and_rewritten(
    make_vault: MakeVault, content: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    from vaultkeeper import __version__

    vault = make_vault(spec_files(NOW.date()))
    expected = uncached(vault)
    content = content.replace(b"VERSION", __version__.encode())
    (vault / CACHE).write_bytes(content.replace(b"FORMAT", str(scancache.FORMAT).encode()))
    assert run(vault) == expected
    data = json.loads((vault / CACHE).read_text())
    assert data["format"] == scancache.FORMAT and "projects/p/memory/due.md" in data["memory"]
    assert capsys.readouterr().err == ""


def test_a_forged_entry_under_the_right_key_is_refused_not_crashed_on(
    make_vault: MakeVault,
) -> None:
    vault = make_vault(spec_files(NOW.date()))
    expected = run(vault)
    data = json.loads((vault / CACHE).read_text())
    rel = "patterns/registry.md"
    data["registry"][rel][1] = [[1, "two", None, None, None, "", None, []]]  # a line as text
    for entry in data["memory"].values():
        entry[1] = [{"status": "held_out"}, "line", None, []]
    (vault / CACHE).write_text(json.dumps(data))
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
    data = json.loads((vault / CACHE).read_text())
    assert data["memory"] == {}
    assert [entry[0] for entry in data["registry"].values()] == [None]  # for registrydelta only
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
    kept = json.loads((vault / CACHE).read_text())["memory"]
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
    monkeypatch.setattr(
        duppairs, "pairs_by_group", lambda items: calls.append(len(items)) or real(items)
    )
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
    kept = json.loads((vault / CACHE).read_text())["registry"]["patterns/registry.md"][1]
    assert [h[6] is None for h in kept] == [False, False, True, False, False, True, True]
    monkeypatch.setattr(config, "PROMOTE_MIN_COUNT", 1)  # "once" (count 1) is eligible now
    after = run(vault)
    assert after == uncached(vault)
    once = [c for c in after["promote"] if c["name"] == "once"]
    assert len(once) == 1 and len(once[0]["hash"]) == 64


def test_a_symlinked_cache_is_not_followed(make_vault: MakeVault, tmp_path: Path) -> None:
    vault = make_vault(spec_files(NOW.date()))
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text('{"format": 1}')
    (vault / CACHE).symlink_to(elsewhere)
    expected = uncached(vault)
    assert run(vault) == expected
    assert elsewhere.read_text() == '{"format": 1}'  # replaced the link, never wrote through it
    assert not (vault / CACHE).is_symlink()


def test_as_of_and_the_cli_flag(make_vault: MakeVault) -> None:
    vault = make_vault(spec_files(NOW.date()))
    runner = CliRunner()
    result = runner.invoke(cli, ["--vault", str(vault), "scan", "--as-of", "2026-09-01"])
    assert result.exit_code == 0 and not (vault / CACHE).exists()
    result = runner.invoke(cli, ["--vault", str(vault), "scan", "--force", "--fresh"])
    assert result.exit_code == 0 and (vault / CACHE).exists()
    assert "--fresh" in runner.invoke(cli, ["scan", "--help"]).output


def test_cached_heads_answer_like_parsed_ones(make_vault: MakeVault) -> None:
    from vaultkeeper.registry.blocks import load_heads

    vault = make_vault(spec_files(NOW.date()))
    run(vault)
    cache = scancachefile.load(vault)
    kept, _ = cachedheads.load_heads(vault, cache)
    parsed, _ = load_heads(vault)
    assert cache.hits == 1 and len(kept) == len(parsed)
    for a, b in zip(kept, parsed, strict=True):
        assert isinstance(a, CachedHead)
        fields = ("name", "rel", "line", "count", "count_raw", "last_used", "promoted")
        assert [getattr(a, f) for f in fields] == [getattr(b, f) for f in fields]
        assert a.sentence() == b.sentence()
        if a.count == 0 or (a.count or 0) >= config.PROMOTE_MIN_COUNT and a.promoted is None:
            assert a.hash() == b.hash()  # kept only where a candidate can come from
        if a.count is None:
            assert a.problems() == b.problems()


def test_a_big_registry_edited_scan_after_scan_reports_a_fresh_scans_pairs(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    import random

    from vaultkeeper.upkeep import dup_delta as dupdelta

    # a registry big enough for its pairs to be redone from the words kept in the cache
    monkeypatch.setattr(config, "DUP_DELTA_MIN", 20)
    monkeypatch.setattr(config, "DUP_COMMON_MIN", 3)
    monkeypatch.setattr(dupdelta, "_FEW", 4)
    monkeypatch.setattr(dupdelta, "_MOST", 2)
    redone: list[bool] = []
    real = dupdelta.group_pairs
    monkeypatch.setattr(
        dupdelta, "group_pairs", lambda *a: redone.append((f := real(*a)).redone) or f
    )
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
        kept = json.loads((vault / CACHE).read_text())["pairs"]["words"]
        assert list(kept) == ["block"]  # the registry's words; the small groups keep none
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
    assert redone[0] and redone.count(False) >= 6  # the first scan only had none kept
