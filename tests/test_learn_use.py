"""`use NAME`: one reuse is two changed lines in the registry and nothing else; many
counters raised in one registry file are one read, one split and one write of it."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.conftest import MakeVault, snapshot
from vaultkeeper import config
from vaultkeeper.cli import cli
from vaultkeeper.errors import NotFoundError
from vaultkeeper.learn import count as use_module
from vaultkeeper.learn.count import record_uses

TODAY = dt.date(2026, 11, 29)


def today_utc() -> str:
    return dt.datetime.now(dt.timezone.utc).date().isoformat()


def use(vault: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--vault", str(vault), "use", *args])


def changed_lines(before: bytes, after: bytes) -> list[tuple[int, bytes, bytes]]:
    old, new = before.split(b"\n"), after.split(b"\n")
    assert len(old) == len(new)
    return [(i + 1, a, b) for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]


def test_use_changes_exactly_two_lines(sample: Path) -> None:
    registry = sample / "patterns/registry.md"
    before_all = snapshot(sample)
    result = use(sample, "pin-test-clock")
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"pin-test-clock: success count 2 -> 3, last used {today_utc()} (patterns/registry.md)\n"
    )
    after_all = snapshot(sample)
    assert {k for k in before_all if before_all[k] != after_all[k]} == {"patterns/registry.md"}
    assert changed_lines(before_all["patterns/registry.md"], registry.read_bytes()) == [
        (15, b"**success count:** 2", b"**success count:** 3"),
        (16, b"**last used:** 2026-10-03", f"**last used:** {today_utc()}".encode()),
    ]


def test_use_on_a_crlf_registry_keeps_crlf(make_vault: MakeVault) -> None:
    text = (
        "# R\r\n\r\n### a\r\n- **Success Count:**  4\r\n- **last used:** 2026-01-01  \r\n"
        "\r\n### b\r\n**success count:** 0\r\n**last used:** 2026-01-01"
    )
    vault = make_vault({"patterns/registry.md": text})
    record_uses(vault, {"a": (1, TODAY)})
    record_uses(vault, {"b": (1, TODAY)})
    assert (vault / "patterns/registry.md").read_bytes() == (
        b"# R\r\n\r\n### a\r\n- **Success Count:**  5\r\n- **last used:** 2026-11-29  \r\n"
        b"\r\n### b\r\n**success count:** 1\r\n**last used:** 2026-11-29"
    )


def test_use_keeps_a_byte_order_mark(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "patterns/registry.md": b"\xef\xbb\xbf### a\n**success count:** 1\n"
            b"**last used:** 2026-01-01\n"
        }
    )
    record_uses(vault, {"a": (1, TODAY)})
    assert (vault / "patterns/registry.md").read_bytes() == (
        b"\xef\xbb\xbf### a\n**success count:** 2\n**last used:** 2026-11-29\n"
    )


def test_unknown_name_exits_1_names_it_and_writes_nothing(sample: Path) -> None:
    before = snapshot(sample)
    result = use(sample, "no-such-pattern")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == (
        "vaultkeeper: error: no-such-pattern: no ### no-such-pattern block in patterns/\n"
    )
    assert snapshot(sample) == before
    result = use(sample, "Pin-Test-Clock")
    assert result.exit_code == 1
    assert "did you mean 'pin-test-clock'" in result.stderr
    assert snapshot(sample) == before


def test_missing_last_used_line_is_inserted_after_the_count(make_vault: MakeVault) -> None:
    text = "### a\nText.\n**success count:** 1\n*Note: keep this.*\n\n### b\n**success count:** 7"
    vault = make_vault({"patterns/registry.md": text})
    record_uses(vault, {"a": (1, TODAY)})
    record_uses(vault, {"b": (1, TODAY)})
    assert (vault / "patterns/registry.md").read_text() == (
        "### a\nText.\n**success count:** 2\n**last used:** 2026-11-29\n*Note: keep this.*\n\n"
        "### b\n**success count:** 8\n**last used:** 2026-11-29"
    )


@pytest.mark.parametrize(
    ("block", "line", "words"),
    [
        ("### bad\n**success count:** lots\n**last used:** 2026-01-01\n", 4, "'lots' is not"),
        ("### bad\n**success count:** -3\n", 4, "'-3' is not a whole number"),
        ("### bad\n**last used:** 2026-01-01\n", 3, "no **success count:** line"),
    ],
)
def test_malformed_count_refuses_cleanly(
    make_vault: MakeVault, block: str, line: int, words: str
) -> None:
    vault = make_vault({"patterns/registry.md": "# R\n\n" + block})
    before = snapshot(vault)
    result = use(vault, "bad")
    assert result.exit_code == 1
    message = result.stderr.strip()
    assert message.startswith(f"vaultkeeper: error: patterns/registry.md:{line}: ### bad")
    assert words in message
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.output
    assert snapshot(vault) == before


def test_duplicate_names_are_refused(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "patterns/registry.md": "### twin\n**success count:** 1\n",
            "patterns/more.md": "### twin\n**success count:** 1\n",
        }
    )
    before = snapshot(vault)
    result = use(vault, "twin")
    assert result.exit_code == 1
    assert "2 registry blocks share this name" in result.stderr
    assert "patterns/more.md:1" in result.stderr and "patterns/registry.md:1" in result.stderr
    assert snapshot(vault) == before


def test_blocks_in_other_pattern_files_and_json(make_vault: MakeVault) -> None:
    vault = make_vault(
        {"patterns/tools/git.md": "### bisect\n**success count:** 0\n**last used:** 2025-01-01\n"}
    )
    result = use(vault, "bisect", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "name": "bisect",
        "path": "patterns/tools/git.md",
        "count_before": 0,
        "count_after": 1,
        "last_used": today_utc(),
        "note": None,  # the saved report followed (or there is none to follow)
    }


def test_a_registry_symlinked_out_of_the_vault_is_not_written(
    make_vault: MakeVault, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere.md"
    outside.write_text("### ext\n**success count:** 1\n")
    vault = make_vault()
    (vault / "patterns" / "linked.md").symlink_to(outside)
    _, refused = record_uses(vault, {"ext": (1, TODAY)})  # never read, so no such block
    assert isinstance(refused["ext"], NotFoundError)
    assert "linked.md: a symlink to outside the vault; not read" in str(refused["ext"])
    assert outside.read_text() == "### ext\n**success count:** 1\n"


def test_use_runs_under_the_writer_lock(make_vault: MakeVault) -> None:
    from vaultkeeper.store.fsio import writer_lock

    vault = make_vault({"patterns/registry.md": "### a\n**success count:** 1\n"})
    with writer_lock(vault):  # re-entrant: a caller holding the lock may record a use
        record_uses(vault, {"a": (1, TODAY)})
    assert not (vault / config.STATE_DIR / config.WRITER_LOCK_FILE).exists()  # outside
    assert "**success count:** 2" in (vault / "patterns/registry.md").read_text()


def test_use_logs_a_cli_use_that_decay_sees_and_no_replay_counts_again(
    make_vault: MakeVault,
) -> None:
    from vaultkeeper.learn.count import record
    from vaultkeeper.store.uses import read_events

    registry = (
        "# Pattern registry\n\n### kappa\nKappa body.\n\n**success count:** 4\n"
        "**last used:** 2026-01-01\n**promoted:** 2026-01-02 -> [[skills/kappa/SKILL]]\n"
    )
    vault = make_vault({"patterns/registry.md": registry})
    env = {"VAULTKEEPER_TODAY": "2026-11-30"}
    runner = CliRunner()
    scan = ["--vault", str(vault), "scan", "--force"]
    before = runner.invoke(cli, scan, env=env)
    assert any(x.startswith("skill unused kappa") for x in before.stdout.splitlines())

    done = runner.invoke(cli, ["--vault", str(vault), "use", "kappa"], env=env)
    assert done.exit_code == 0, done.output
    assert done.stdout == (
        "kappa: success count 4 -> 5, last used 2026-11-30 (patterns/registry.md)\n"
    )
    # the event, then its transaction's intent and done lines (store/uses.py)
    line, intent, closed = (vault / "state" / config.USES_LOG_FILE).read_text().splitlines()
    logged = json.loads(line)
    assert json.loads(intent)["intent"] == {"kappa": ["patterns/registry.md", 4, 5, "2026-11-30"]}
    assert json.loads(closed) == {"tx": logged["tx"], "done": True}
    assert (
        logged["session"].startswith("cli:2026-11-30T") and logged["receipt"] == logged["session"]
    )
    assert {k: logged[k] for k in ("source", "kind", "target", "date")} == {
        "source": "cli", "kind": "cite", "target": "kappa", "date": "2026-11-30",
    }  # fmt: skip
    journaled = json.loads((vault / "state/journal.jsonl").read_text().splitlines()[-1])
    assert (journaled["action"], journaled["target"], journaled["session"]) == (
        "use", "kappa", logged["session"],
    )  # fmt: skip
    after = runner.invoke(cli, scan, env=env)
    assert after.exit_code == 0
    assert not any("skill unused" in x for x in after.stdout.splitlines())

    # replaying the log counts nothing again and changes no byte
    files = snapshot(vault, skip_state=False)
    now = dt.datetime(2026, 11, 30, 12, tzinfo=dt.timezone.utc)
    again = record(vault, list(read_events(vault)), now)
    assert (again.counted, again.recorded, again.repeated) == ((), (), 1)
    assert snapshot(vault, skip_state=False) == files


def test_use_of_an_unknown_name_writes_nothing(sample: Path) -> None:
    files = snapshot(sample, skip_state=False)
    result = use(sample, "no-such-pattern")
    assert result.exit_code == 1
    assert result.stderr.startswith("vaultkeeper: error: no-such-pattern: no ### no-such-pattern")
    assert snapshot(sample, skip_state=False) == files


@pytest.mark.parametrize("kind", ["folder", "fifo", "symlink"])
def test_a_journal_that_would_refuse_its_line_refuses_the_use_first(
    sample: Path, tmp_path: Path, kind: str
) -> None:
    # The count was written, then journaling it failed: exit 1 and an error, so a person
    # ran `use` again and counted the one reuse twice.
    journal = sample / "state/journal.jsonl"
    journal.unlink(missing_ok=True)
    if kind == "folder":
        journal.mkdir()
    elif kind == "fifo":
        os.mkfifo(journal)
    else:
        (tmp_path / "elsewhere.jsonl").write_text("")
        journal.symlink_to(tmp_path / "elsewhere.jsonl")
    files = snapshot(sample, skip_state=False)
    result = use(sample, "pin-test-clock")
    assert result.exit_code == 1
    assert result.stderr.startswith(f"vaultkeeper: error: {journal}: "), result.stderr
    assert snapshot(sample, skip_state=False) == files


@pytest.mark.parametrize("indent", ["    ", "\t", "  \t"])
def test_use_edits_the_real_counter_not_one_in_an_indented_example(
    make_vault: MakeVault, indent: str
) -> None:
    """An indented code example of a block's counters is no counter."""
    registry = (
        "# Pattern registry\n\n### alpha\nWrite the counters like this:\n\n"
        f"{indent}**success count:** 7\n{indent}**last used:** 2020-01-01\n\n"
        "**success count:** 1\n**last used:** 2026-01-05\n"
    )
    vault = make_vault({"patterns/registry.md": registry})
    record_uses(vault, {"alpha": (1, TODAY)})
    assert (vault / "patterns/registry.md").read_text() == registry.replace(
        "count:** 1\n**last used:** 2026-01-05", "count:** 2\n**last used:** 2026-11-29"
    )


NOW_UTC = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.timezone.utc)


def registry(n: int, crlf: bool = False) -> str:
    blocks = []
    for i in range(n):
        last = "" if i % 3 == 0 else f"**last used:** 2026-11-{10 + i % 9:02d}\n"
        blocks.append(f"### p{i}\nDo {i}.\n\n**success count:** {i}\n{last}")
    text = "# Pattern registry\n\n" + "\n".join(blocks)
    return text.replace("\n", "\r\n") if crlf else text


@pytest.mark.parametrize("crlf", [False, True])
def test_many_counters_in_one_file_are_split_once_and_written_as_one_by_one(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch, crlf: bool
) -> None:
    day = dt.date(2026, 11, 30)
    one_by_one = make_vault({"patterns/registry.md": registry(30, crlf)})
    for i in range(0, 30, 2):
        record_uses(one_by_one, {f"p{i}": (1, day)}, never_back=True)
    batch = make_vault({"patterns/registry.md": registry(30, crlf)})
    splits: list[int] = []
    real = use_module.split_lines
    monkeypatch.setattr(use_module, "split_lines", lambda t: splits.append(1) or real(t))
    done, refused = record_uses(
        batch, {f"p{i}": (1, day) for i in range(0, 30, 2)}, never_back=True
    )
    assert not refused and len(done) == 15
    assert len(splits) == 1  # was one split (three, with the line edits) per counter
    got = (batch / "patterns/registry.md").read_bytes()
    assert got == (one_by_one / "patterns/registry.md").read_bytes()
    assert got.count(b"**last used:** 2026-11-30") == 15  # 5 of them inserted
    assert (b"\r\n" in got) is crlf and (crlf or b"\r" not in got)


def test_a_block_without_a_last_used_line_at_the_end_of_the_file_gets_one(
    make_vault: MakeVault,
) -> None:
    vault = make_vault({"patterns/registry.md": "# R\n\n### a\nA.\n\n**success count:** 1"})
    record_uses(vault, {"a": (2, dt.date(2026, 11, 1))})
    text = (Path(vault) / "patterns/registry.md").read_text()
    assert text == "# R\n\n### a\nA.\n\n**success count:** 3\n**last used:** 2026-11-01"
