"""Review findings on the scan cache and the serving prefilter: each test shows a cached
scan reporting otherwise than a fresh one, or a credential the prefilter lets through."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import MakeVault
from tests.test_scan_cache import NOW, run
from tests.test_scan_classify import spec_files
from vaultkeeper import config
from vaultkeeper.scan import cache as scancache
from vaultkeeper.store import secrets

CACHE = Path(config.STATE_DIR) / config.SCAN_CACHE_FILE

MEM = "projects/p/memory/"
DUP = (
    "---\nname: {0}\nstatus: active\ndescription: retry flaky network calls with backoff\n{1}---\n"
)


@pytest.fixture(autouse=True)
def no_racy_window(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scancache, "RACY_NS", 0)


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
    assert MEM + "retry-b.md" not in json.loads((vault / CACHE).read_text())["memory"]
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
    data = json.loads((vault / CACHE).read_text())
    edit(data)
    (vault / CACHE).write_text(json.dumps(data))


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


def test_a_kept_pair_with_an_infinite_line_is_refused_not_crashed_on(
    make_vault: MakeVault,
) -> None:
    files = spec_files(NOW.date())
    files[MEM + "retry-a.md"] = DUP.format("retry-a", "")
    files[MEM + "retry-b.md"] = DUP.format("retry-b", "")
    vault = make_vault(files)
    expected = run(vault)

    def edit(data: dict[str, Any]) -> None:
        for kept in data["pairs"]["groups"].values():
            for pair in kept[1]:
                pair["a"]["line"] = float("inf")  # JSON's Infinity; 1e999 reads the same

    _forge(vault, edit)
    assert run(vault) == expected


@pytest.mark.parametrize(
    "text", ["\u0130 pa\u017fsword = hunter2x9", "\u0130 \u017fecret: abc123def"]
)
def test_the_quick_no_sees_what_find_sees_with_a_long_s(text: str) -> None:
    """find falls back to the whole regex when lower() changes the text's length (a
    dotted capital I), and the regex's IGNORECASE matches a long s as an s; the quick
    no looks for the words in text.lower(), where the long s stays itself."""
    assert secrets.find(text)
    assert secrets.needs_serving(text)
    assert "hunter2x9" not in secrets.served(text) and "abc123def" not in secrets.served(text)


def test_a_fifo_where_the_cache_goes_does_not_hang_the_scan(make_vault: MakeVault) -> None:
    """load opens the cache with O_RDONLY and no O_NONBLOCK: on a FIFO the open waits
    for a writer for ever (the session-end hook hangs until it is killed)."""
    import subprocess
    import sys

    vault = make_vault(spec_files(NOW.date()))
    os.mkfifo(vault / CACHE)
    code = (
        "import sys; from vaultkeeper.scan import cachefile as scancachefile; "
        "scancachefile.load(sys.argv[1])"
    )
    try:
        done = subprocess.run([sys.executable, "-c", code, str(vault)], timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail("loading a FIFO as the scan cache blocked")
    assert done.returncode == 0


def test_a_cache_that_cannot_be_written_does_not_fail_the_scan(make_vault: MakeVault) -> None:
    """The cache is only a shortcut, yet a failed write of it (a folder in its place,
    a full disk) fails the whole scan: no report saved, exit 1."""
    from click.testing import CliRunner

    from vaultkeeper.cli import cli

    vault = make_vault(spec_files(NOW.date()))
    (vault / CACHE).mkdir()
    result = CliRunner().invoke(cli, ["--vault", str(vault), "scan", "--force"])
    assert result.exit_code == 0, result.output
    assert (vault / config.STATE_DIR / config.LAST_REPORT_FILE).exists()


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
