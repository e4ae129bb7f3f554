"""lint VK5xx: every planted credential named by file, line and kind; the value never shown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import MakeVault, corpus
from tests.test_store_secrets import PLANTED
from vaultkeeper.cli import cli
from vaultkeeper.lint import lint_vault
from vaultkeeper.lint.format import code_for


def planted_vault(
    make_vault: MakeVault, *, init: bool = True
) -> tuple[Path, list[tuple[int, str]]]:
    """One note holding the 30 planted credentials; returns (line, code) of each."""
    lines = ["# Credentials pasted by mistake", ""]
    where: list[tuple[int, str]] = []
    for kind, text, _ in PLANTED:
        where.append((len(lines) + 1, code_for(kind)))
        lines.extend([*text.split("\n"), ""])
    files = {"notes/pasted.md": "\n".join(lines) + "\n"}
    return make_vault(files, init=init), where


def test_every_planted_credential_is_a_finding_at_its_line(make_vault: MakeVault) -> None:
    vault, where = planted_vault(make_vault)
    found = [
        (f.line, f.code)
        for f in lint_vault(vault).findings
        if f.path == "notes/pasted.md" and f.code.startswith("VK5")
    ]
    assert found == where
    assert len(found) == 30


def test_on_a_foreign_obsidian_vault_too(make_vault: MakeVault) -> None:
    vault, where = planted_vault(make_vault, init=False)
    (vault / ".obsidian").mkdir()
    result = lint_vault(vault)
    assert not result.ours
    assert len([f for f in result.findings if f.code.startswith("VK5")]) == len(where)


def test_other_text_files_in_the_vault_are_read(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "notes/deploy.txt": "OPENAI_API_KEY=sk-proj-MlHUvTCQCyEZDz-TddJ8HyS5SUkCnD8zRA9a9Sk\n",
            "notes/picture.png": b"\x89PNG\r\n\x1a\n\x00\x00 token = a1b2c3d4e5f6\n",
        }
    )
    found = [(f.path, f.line, f.code) for f in lint_vault(vault).findings if f.code[:3] == "VK5"]
    assert found == [("notes/deploy.txt", 1, "VK502")]


def test_the_output_names_file_line_and_kind_and_never_the_value(
    make_vault: MakeVault, runner: CliRunner
) -> None:
    vault, where = planted_vault(make_vault)
    text = runner.invoke(cli, ["--vault", str(vault), "lint", "--select", "VK5"])
    as_json = runner.invoke(cli, ["--vault", str(vault), "lint", "--select", "VK5", "--json"])
    assert text.exit_code == 1
    for *_, value in PLANTED:
        for output in (text.output, as_json.output):
            assert value not in output
            assert value[:12] not in output
    assert "notes/pasted.md:3:1: VK501 private key in the file (value not shown)" in text.output
    data = json.loads(as_json.output)
    assert len(data) == 30


@pytest.mark.corpora
def test_nothing_flagged_in_the_kepano_obsidian_corpus() -> None:
    result = lint_vault(corpus(), select=["VK5"])
    assert result.files > 50
    assert result.findings == ()


def test_ignore_turns_the_family_off(make_vault: MakeVault) -> None:
    vault, _ = planted_vault(make_vault)
    assert not [f for f in lint_vault(vault, ignore=["VK5"]).findings if f.code[:3] == "VK5"]
