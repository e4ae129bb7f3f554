"""state/journal.jsonl: one line per decision (refusals and skips too); `log` prints it."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import snapshot
from vaultkeeper.apply import journal
from vaultkeeper.apply.decision import Outcome
from vaultkeeper.cli import cli

NOW = dt.datetime(2026, 12, 1, 9, 30, 5, tzinfo=dt.timezone.utc)
REGISTRY = (
    "### alpha\nA.\n\n**success count:** 2\n**last used:** 2026-10-01\n\n"
    "### beta\nB.\n\n**success count:** 0\n**last used:** 2025-01-01\n"
)
RECEIPT = "https://ci.example/run/1"


def records(vault: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (vault / "state/journal.jsonl").read_text().splitlines()]


def test_every_decision_is_one_line(make_vault, runner: CliRunner) -> None:
    vault = make_vault({"patterns/registry.md": REGISTRY})
    commands = [
        (["apply", "promote", "beta", "--evidence", RECEIPT], 1),  # refused by the count gate
        (["apply", "promote", "alpha", "--evidence", "nothing"], 1),  # refused: no receipt
        (["apply", "promote", "alpha", "--evidence", RECEIPT], 0),
        (["apply", "prune", "beta"], 3),  # no terminal: asks
        (["apply", "skip", "alpha", "--reason", "already a skill"], 0),
        (["apply", "prune", "../x.md"], 1),  # path escape
        (["apply", "promote", "alpha", "--evidence", RECEIPT, "--dry-run"], 0),  # not a decision
    ]
    for args, code in commands:
        assert runner.invoke(cli, ["--vault", str(vault), *args]).exit_code == code, args
    lines = records(vault)
    assert [(r["action"], r["outcome"]) for r in lines] == [
        ("promote", "defer"),
        ("promote", "defer"),
        ("promote", "act"),
        ("prune", "ask"),
        ("skip", "silence"),
        ("prune", "defer"),
    ]
    for r in lines:
        assert list(r)[:5] == ["ts", "action", "target", "outcome", "reason"]
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", str(r["ts"]))
    act, ask = lines[2], lines[3]
    assert act["evidence"] == RECEIPT
    assert re.fullmatch(r"[0-9a-f]{64}", str(act["hash_before"]))
    assert act["hash_before"] != act["hash_after"]
    assert re.fullmatch(journal.ID_PATTERN, str(ask["id"]))
    assert "id" not in lines[4] and "evidence" not in lines[4]


def test_dry_run_outcomes_are_not_journaled(make_vault) -> None:
    vault = make_vault({})
    journal.append(vault, Outcome("skip", "x", "silence", "r", dry_run=True), NOW)
    assert not (vault / "state/journal.jsonl").exists()


def test_read_skips_torn_lines_with_a_problem(make_vault) -> None:
    vault = make_vault({})
    journal.append(vault, Outcome("skip", "a", "silence", "one"), NOW)
    with (vault / "state/journal.jsonl").open("a") as fh:
        fh.write('{"torn": \n[1, 2]\n')
    journal.append(vault, Outcome("skip", "b", "silence", "two"), NOW)
    result = journal.read(vault)
    assert [r["target"] for r in result.records] == ["a", "b"]
    assert [str(p) for p in result.problems] == [
        "state/journal.jsonl:2: not a JSON line; skipped",
        "state/journal.jsonl:3: not a JSON object; skipped",
    ]


def test_log_prints_newest_last(make_vault, runner: CliRunner) -> None:
    vault = make_vault({})
    journal.append(vault, Outcome("skip", "first", "silence", "one"), NOW)
    later = NOW + dt.timedelta(minutes=1)
    journal.append(
        vault, Outcome("prune", "second", "ask", "two", id="20261201-093105-abcdef"), later
    )
    result = runner.invoke(cli, ["--vault", str(vault), "log"])
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        "2026-12-01T09:30:05Z  silence skip       first: one",
        "2026-12-01T09:31:05Z  ask     prune      second: two  [20261201-093105-abcdef]",
    ]
    as_json = runner.invoke(cli, ["--vault", str(vault), "log", "--json"])
    assert [r["target"] for r in json.loads(as_json.stdout)] == ["first", "second"]


def test_log_shows_a_line_break_in_a_journal_field_escaped(make_vault, runner: CliRunner) -> None:
    """A journal line pulled with the vault (attacker-written) cannot forge a second
    decision at the person's terminal: one record, one line."""
    vault = make_vault({})
    journal.append(vault, Outcome("skip", "real", "silence", "one"), NOW)
    forged = {
        "ts": "2026-12-01T09:31:05Z",
        "action": "skip",
        "target": "x\r",
        "outcome": "silence",
        "reason": "y\n2026-12-01T09:32:05Z  act     prune      all: a person answered yes",
    }
    with (vault / "state/journal.jsonl").open("a") as fh:
        fh.write(json.dumps(forged) + "\n")
    result = runner.invoke(cli, ["--vault", str(vault), "log"])
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        "2026-12-01T09:30:05Z  silence skip       real: one",
        "2026-12-01T09:31:05Z  silence skip       x\\x0d: y\\n2026-12-01T09:32:05Z  act     prune"
        "      all: a person answered yes",
    ]


def test_a_journal_or_queue_linked_out_of_the_vault_is_never_read(
    make_vault, runner: CliRunner, tmp_path: Path
) -> None:
    """state/journal.jsonl travels through git (merge=union): a link there to a file out
    of the vault is not read through (``log`` printed that file's records), nor is a
    linked queue.jsonl (``review`` would ask what it says)."""
    vault = make_vault({})
    elsewhere = make_vault({})
    journal.append(elsewhere, Outcome("skip", "outside-secret", "silence", "one"), NOW)
    for name in ("journal.jsonl", "queue.jsonl"):
        (vault / "state" / name).unlink(missing_ok=True)
        (vault / "state" / name).symlink_to(elsewhere / "state" / "journal.jsonl")
    result = runner.invoke(cli, ["--vault", str(vault), "log", "--json"])
    assert "outside-secret" not in result.output
    found = journal.read(vault)
    assert found.records == () and [p.line for p in found.problems] == [1]
    assert journal.pending(vault) == [] and len(journal.damaged(vault)) == 1  # never "0 waiting"


@pytest.mark.parametrize("kind", ["symlink", "fifo", "folder"])
def test_a_journal_that_would_refuse_its_line_refuses_the_decision_first(
    make_vault, runner: CliRunner, tmp_path: Path, kind: str
) -> None:
    # The promote was written, then its journal line refused: "a symlink; refused" with
    # exit 1 over a registry already changed (a folder: exit 0 and "NOT journaled").
    vault = make_vault({"patterns/registry.md": REGISTRY})
    path = vault / "state" / "journal.jsonl"
    path.unlink(missing_ok=True)
    if kind == "symlink":
        (tmp_path / "elsewhere.jsonl").write_text("")
        path.symlink_to(tmp_path / "elsewhere.jsonl")
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    before = snapshot(vault, skip_state=False)
    args = ["--vault", str(vault), "apply", "promote", "alpha", "--evidence", RECEIPT, "--json"]
    result = runner.invoke(cli, args)
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith(f"vaultkeeper: error: {path}: ")
    assert json.loads(result.stdout)["exit"] == 1
    assert snapshot(vault, skip_state=False) == before


def test_log_of_an_empty_vault(make_vault, runner: CliRunner) -> None:
    vault = make_vault({})
    result = runner.invoke(cli, ["--vault", str(vault), "log", "--json"])
    assert (result.exit_code, json.loads(result.stdout)) == (0, [])


def test_new_ids_sort_by_time() -> None:
    a = journal.new_id(NOW)
    b = journal.new_id(NOW + dt.timedelta(seconds=1))
    assert re.fullmatch(journal.ID_PATTERN, a) and a < b


def test_an_empty_log_says_so_and_n_shows_the_last_records(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from vaultkeeper.cli import cli
    from vaultkeeper.entries.init import init_vault

    vault = tmp_path / "v"
    init_vault(vault)
    runner = CliRunner()
    empty = runner.invoke(cli, ["--vault", str(vault), "log"])
    assert (empty.exit_code, empty.stdout) == (0, "")
    assert empty.stderr == "vaultkeeper: note: no decisions journaled yet\n"
    for name in ("first", "second"):
        batch = f'[{{"action": "skip", "target": "{name}", "reason": "later"}}]'
        runner.invoke(cli, ["--vault", str(vault), "apply", "batch", "-"], input=batch)
    last = runner.invoke(cli, ["--vault", str(vault), "log", "-n", "1"])
    assert last.exit_code == 0 and len(last.stdout.splitlines()) == 1
    assert " second: " in last.stdout


def test_a_journal_line_nested_past_jsons_depth_is_skipped_not_a_crash(sample: Path) -> None:
    # The journal travels through git. json.loads raises RecursionError (not ValueError)
    # on nesting past its depth, and the readers caught ValueError only: one such line,
    # with "ask" (or a reopen's marks) in it, made report, status, the session-start
    # brief and log end in "internal error ... a bug".
    def vk(*args: str) -> tuple[int, str]:
        done = CliRunner().invoke(cli, ["--vault", str(sample), *args])
        return done.exit_code, done.stderr

    assert vk("scan", "--force")[0] == 0
    deep = "[" * 100_000 + "]" * 100_000
    line = f'{{"to": "active", "outcome": "act", "x": "ask", "deep": {deep}}}\n'
    with (sample / "state" / "journal.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(line)
    for args in (["report"], ["report", "--brief"], ["status"], ["log"], ["scan", "--force"]):
        code, err = vk(*args)
        assert "internal error" not in err, (args, err)
        assert code in (0, 1), (args, code, err)
