"""The command line's edges: conflicting flags, a folder that is not a vault, a closed pipe.

Each test here pins a defect that was found and fixed: what a user notices (exit code,
the one line on stderr, the files left untouched) is what is asserted.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from conftest import MakeVault, snapshot

from vaultkeeper.cli import cli

HELD = "projects/api/memory/flaky-ci-retries.md"
ENV = {"VAULTKEEPER_TODAY": "2026-12-01"}


def invoke(vault: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["--vault", str(vault), *args], env=env or ENV)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (("--pass", "--fail"), "--pass and --fail"),
        (("--fail", "--pass"), "--pass and --fail"),  # was: the last one won, and archived
        (("--reopen", "--pass"), "--pass and --reopen"),
    ],
)
def test_revalidate_with_two_results_is_a_usage_error_and_writes_nothing(
    sample: Path, flags: tuple[str, str], named: str
) -> None:
    before = snapshot(sample, skip_state=False)
    code, out, err = invoke(
        sample, "apply", "revalidate", HELD, *flags, "--evidence", "https://x.org/1"
    )
    assert code == 2
    assert out == ""
    assert err == (
        "vaultkeeper: error: apply revalidate: give only one of --pass, --fail, --reopen "
        f"(not {named}) (see vaultkeeper apply revalidate --help)\n"
    )
    assert snapshot(sample, skip_state=False) == before


def test_revalidate_without_a_result_names_the_command_and_its_help(sample: Path) -> None:
    before = snapshot(sample, skip_state=False)
    code, out, err = invoke(sample, "apply", "revalidate", HELD, "--evidence", "https://x.org/1")
    assert (code, out) == (2, "")
    assert err == (
        "vaultkeeper: error: apply revalidate: missing one of --pass, --fail or --reopen "
        "(see vaultkeeper apply revalidate --help)\n"
    )
    assert snapshot(sample, skip_state=False) == before


NEEDS_A_VAULT = [
    ["new", "memory", "x", "-p", "p", "-d", "d"],
    ["use", "x"],
    ["apply", "skip", "x", "--reason", "r"],
    ["apply", "promote", "x", "--evidence", "https://x.org/1"],
    ["apply", "batch", "-"],
    ["restore", "20261201T000000Z-abc"],
    ["review"],
    ["review", "--list"],
    ["log"],
    ["report"],
    ["report", "--json"],
    ["scan"],
    ["hooks", "install", "git"],
]


@pytest.mark.parametrize("args", NEEDS_A_VAULT, ids=" ".join)
@pytest.mark.parametrize("how", ["--vault", "env"])
def test_a_folder_that_is_not_a_vault_is_refused_and_nothing_is_written(
    tmp_path: Path, args: list[str], how: str
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "todo.md").write_text("buy milk\n")
    given = ["--vault", str(folder)] if how == "--vault" else []
    env = {**ENV, "VAULTKEEPER_VAULT": str(folder)}
    result = CliRunner().invoke(cli, [*given, *args], env=env, input="[]")
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"vaultkeeper: error: {folder.resolve()}: not a vault (no _index.md, projects/ or "
        "patterns/); create one with `vaultkeeper init`\n"
    )
    assert sorted(p.name for p in folder.rglob("*")) == ["todo.md"]


def test_report_json_on_a_folder_that_is_not_a_vault_is_a_json_error(tmp_path: Path) -> None:
    code, out, _ = invoke(tmp_path, "report", "--json")  # was: `null`, exit 0
    assert code == 2
    assert json.loads(out)["exit"] == 2 and "not a vault" in json.loads(out)["error"]


@pytest.mark.parametrize("args", [["status"], ["verify"], ["lint"], ["index"], ["hooks", "status"]])
def test_the_commands_for_any_obsidian_vault_still_take_one(
    tmp_path: Path, args: list[str]
) -> None:
    (tmp_path / ".obsidian").mkdir()
    (tmp_path / "a.md").write_text("---\nx: 1\n---\nhello\n")
    code, _, err = invoke(tmp_path, *args)
    assert code in (0, 1) and "not a vault" not in err


@pytest.mark.parametrize(
    "args",
    [
        ["lint", "--select", "ALL"],
        ["status"],
        ["report", "--brief"],
        ["index", "--json"],
        ["verify"],
        ["scan", "--force"],  # the click-free entry (entry.py, scan/classify.py)
        ["scan", "--force", "--json"],
        ["--help"],
        ["log", "--help"],
    ],
    ids=" ".join,
)
def test_a_closed_stdout_pipe_exits_141_without_a_word(
    sample: Path, tmp_path: Path, args: list[str]
) -> None:
    # `vaultkeeper lint | head -1`: the reader is gone before the first write. Closing the
    # read end before the child starts makes that certain, not a race.
    read_end, write_end = os.pipe()
    os.close(read_end)
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, **ENV, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    env.pop("VAULTKEEPER_VAULT", None)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "vaultkeeper", "--vault", str(sample), *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
            timeout=300,
            check=False,
        )
    finally:
        os.close(write_end)
    assert done.returncode == 141, done.stderr
    assert "error" not in done.stderr and "Broken pipe" not in done.stderr, done.stderr
    assert "Exception ignored" not in done.stderr and "Traceback" not in done.stderr


def test_an_error_with_a_closed_stdout_keeps_its_exit_code(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "vaultkeeper", "--vault", str(tmp_path), "report", "--json"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            env={**os.environ, **ENV, "HOME": str(tmp_path)},
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)
    assert done.returncode == 2  # not a vault: the JSON copy of the error could not be written
    assert done.stderr.splitlines() == [
        f"vaultkeeper: error: {tmp_path.resolve()}: not a vault (no _index.md, projects/ or "
        "patterns/); create one with `vaultkeeper init`"
    ]


def test_review_json_with_nothing_waiting_prints_json(sample: Path) -> None:
    code, out, err = invoke(sample, "review", "--json")  # was: "0 waiting for a person"
    assert (code, json.loads(out), err) == (0, [], "")
    code, out, _ = invoke(sample, "review")
    assert (code, out) == (0, "0 waiting for a person\n")


def test_a_scan_as_of_a_date_before_the_last_use_says_so_not_negative_idle(sample: Path) -> None:
    code, out, _ = invoke(sample, "scan", "--as-of", "2020-01-01")
    assert code == 0
    line = next(x for x in out.splitlines() if x.startswith("promote   bisect-before"))
    assert "idle -" not in out
    assert "last used 2026-11-12 (2507 days after this report's date)" in line
    code, out, _ = invoke(sample, "scan", "--force", env={"VAULTKEEPER_TODAY": "2026-11-11"})
    assert "idle -" not in out and "last used 2026-11-12 (1 day after this report's date)" in out
    code, out, _ = invoke(sample, "scan", "--force", env={"VAULTKEEPER_TODAY": "2026-11-13"})
    assert "last used 2026-11-12 (idle 1 day)" in out


@pytest.mark.parametrize(
    "text",
    [
        '{"vault": "x"}',
        "nope",
        "[1]",
        '{"vault": "x", "generated_at": "yesterday", "problems": [], '
        '"promote": [], "prune": [], "held_out": []}',
    ],
)
def test_a_corrupt_report_row_is_derived_again(sample: Path, text: str) -> None:
    invoke(sample, "scan")
    _, first, _ = invoke(sample, "report")
    with sqlite3.connect(sample / "state" / "vaultkeeper.db") as conn:
        conn.execute("UPDATE scan_report SET report = ?", (text,))
    code, out, err = invoke(sample, "report")
    assert (code, err) == (0, "")
    assert out.splitlines()[2:] == first.splitlines()[2:]  # all but its age


def test_the_spec_says_what_the_scanner_lists_as_held_out_due(make_vault: MakeVault) -> None:
    # an entry with a passed holdout_until and no status is listed; the spec said held_out only
    vault = make_vault(
        {
            "projects/p/memory/bare.md": "---\nname: bare\ndescription: d\ntype: memory\n"
            'label: inferred\nholdout_until: "2026-01-01"\n---\n',
        }
    )
    code, out, _ = invoke(vault, "scan")
    assert code == 0 and "held-out  bare -- holdout_until 2026-01-01" in out and "no status" in out
    spec = (vault / "references" / "vault-spec.md").read_text()
    rule = spec[spec.index("- held-out due:") :].split("\n- ")[0].split("\n\n")[0]
    assert "`held_out` or not set" in rule and "superseded_by" in rule


def _options(*path: str) -> set[str]:
    command: click.Command = cli
    for word in path:
        assert isinstance(command, click.Group)
        command = command.commands[word]
    return {opt for param in command.params for opt in getattr(param, "opts", [])}


def test_the_docs_list_the_commands_that_take_dry_run_and_json() -> None:
    repo = Path(__file__).resolve().parent.parent
    readme = (repo / "README.md").read_text() + (repo / "docs" / "commands.md").read_text()
    assert "Every mutating command takes" not in readme  # it was not true
    both = [("apply", a) for a in ("promote", "prune", "revalidate", "reactivate", "supersede")]
    for path in [*both, ("apply", "merge"), ("restore",), ("ingest",)]:
        assert {"--dry-run", "--json"} <= _options(*path), path
    assert "--dry-run" in _options("apply", "batch") and "--json" not in _options("apply", "batch")
    assert "--json" in _options("apply", "skip") and "--dry-run" not in _options("apply", "skip")
    for path in [("new",), ("use",), ("index",), ("lint",), ("hooks", "install")]:
        assert "--json" in _options(*path) and "--dry-run" not in _options(*path), path
    assert "--dry-run" in _options("init") and "--json" not in _options("init")
    assert "`apply promote|prune|revalidate|reactivate|supersede|merge` and `restore` take" in (
        " ".join(readme.split())
    )


def test_verify_help_counts_its_rows() -> None:
    result = CliRunner().invoke(cli, ["verify", "--help"])
    assert "the spec's 12 checks plus vaultkeeper's own 2" in " ".join(result.stdout.split())


@pytest.mark.parametrize(
    ("args", "where"),
    [
        (["report", "--cwd", "."], "report"),
        (["hooks", "install", "codex", "--schedule", "1 * * * *"], "hooks install"),
        (["hooks", "install", "cron", "--settings", "s.json"], "hooks install"),
        (["ingest"], "ingest"),
    ],
)
def test_options_that_do_not_go_together_name_the_command_and_its_help(
    sample: Path, args: list[str], where: str
) -> None:
    before = snapshot(sample, skip_state=False)
    code, out, err = invoke(sample, *args)
    assert (code, out) == (2, "")
    assert err.startswith(f"vaultkeeper: error: {where}: ")
    assert err.endswith(f" (see vaultkeeper {where} --help)\n") and err.count("\n") == 1
    assert snapshot(sample, skip_state=False) == before
