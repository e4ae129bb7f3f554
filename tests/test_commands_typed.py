"""`apply ...` reads the paths a person types from the folder they stand in (as lint does),
and a vault-relative path still works from anywhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from vaultkeeper.cli import cli

ENTRY = "projects/api/memory/flaky-ci-retries.md"
SURVEY = "projects/api/research/ci-failure-survey.md"


def _apply(runner: CliRunner, *args: str):
    return runner.invoke(cli, ["apply", *args], env={"VAULTKEEPER_TODAY": "2026-12-01"})


def test_a_relative_path_and_receipt_are_read_from_the_current_folder(
    sample: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(sample / "projects/api/memory")
    done = _apply(
        runner, "revalidate", "./flaky-ci-retries.md", "--pass",
        "--evidence", "../research/ci-failure-survey.md:3", "--json",
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    outcome = json.loads(done.stdout)
    # the journal and the entry name them as the vault does, whatever folder they came from
    assert outcome["target"] == ENTRY and outcome["outcome"] == "act"
    assert outcome["evidence"] == f"{SURVEY}:3"
    assert f'"{SURVEY}:3"' in (sample / ENTRY).read_text()


def test_a_vault_relative_path_still_works_from_a_subfolder(
    sample: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(sample / "projects/web")
    done = _apply(runner, "revalidate", ENTRY, "--pass", "--evidence", f"{SURVEY}:3", "--dry-run")
    assert done.exit_code == 0, done.output
    assert f"would act: revalidate {ENTRY}" in done.stdout


def test_a_name_and_a_bare_file_name_from_its_folder(
    sample: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(sample / "projects/api/memory")
    by_file = _apply(runner, "skip", "flaky-ci-retries.md", "--reason", "next week", "--json")
    assert json.loads(by_file.stdout)["target"] == ENTRY
    by_name = _apply(runner, "skip", "flaky-ci-retries", "--reason", "next week", "--json")
    assert json.loads(by_name.stdout)["target"] == ENTRY


def test_dot_slash_means_here_even_when_the_vault_root_has_that_file(
    sample: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    (sample / "projects/web/_index.md").unlink(missing_ok=True)
    monkeypatch.chdir(sample / "projects/web")
    before = (sample / ENTRY).read_bytes()
    # ./projects/api/... names projects/web/projects/api/...: no such file, nothing changed
    done = _apply(
        runner, "revalidate", f"./{ENTRY}", "--pass", "--evidence", "https://ci.example/1"
    )
    assert done.exit_code == 1
    assert f"projects/web/{ENTRY}: no such file in the vault" in done.stderr
    assert (sample / ENTRY).read_bytes() == before


def test_a_path_typed_outside_the_vault_is_refused_and_nothing_changes(
    sample: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "flaky-ci-retries.md").write_text((sample / ENTRY).read_text())
    monkeypatch.chdir(elsewhere)
    before = (sample / ENTRY).read_bytes()
    done = runner.invoke(
        cli,
        ["--vault", str(sample), "apply", "revalidate", "./flaky-ci-retries.md", "--pass",
         "--evidence", "https://ci.example/1"],
    )  # fmt: skip
    assert done.exit_code == 1
    assert "resolves outside the vault" in done.stderr
    assert (sample / ENTRY).read_bytes() == before


def test_apply_help_says_where_paths_are_read_from(runner: CliRunner) -> None:
    text = " ".join(runner.invoke(cli, ["apply", "--help"]).stdout.split())
    assert "is read from the current folder, as lint takes paths" in text
    assert "is read from the vault's root, so projects/api/memory/x.md works anywhere" in text
