"""A state/ or .trash/ symlink out of the vault is refused; nothing goes there."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from pty_helper import run_on_pty

from tests.conftest import MakeVault, snapshot
from vaultkeeper.apply import queue
from vaultkeeper.cli import cli

BETA = "### beta\nBeta body.\n\n**success count:** 0\n**last used:** 2025-01-01\n"
REGISTRY = "# Pattern registry\n\n" + BETA
COMMANDS = [
    ["scan", "--force"],
    ["use", "beta"],
    ["apply", "prune", "beta"],
    ["apply", "skip", "beta", "--reason", "kept for now"],
    ["new", "memory", "lesson", "-p", "p", "-d", "a lesson"],
    ["index"],
]


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    return folder


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_a_state_symlink_out_of_the_vault_is_refused(
    make_vault: MakeVault, outside: Path, args: list[str]
) -> None:
    vault = make_vault({"patterns/registry.md": REGISTRY})
    (vault / "state").rmdir()
    (vault / "state").symlink_to(outside)
    before = snapshot(vault)
    result = CliRunner().invoke(cli, ["--vault", str(vault), *args])
    assert result.exit_code == 1, result.output
    [line] = result.stderr.splitlines()
    assert line.startswith(f"vaultkeeper: error: state/: a symlink to {outside.resolve()}")
    assert "outside the vault" in line and "refused" in line
    assert list(outside.iterdir()) == []
    assert snapshot(vault) == before


def test_a_state_symlink_inside_the_vault_is_followed(make_vault: MakeVault) -> None:
    vault = make_vault({"patterns/registry.md": REGISTRY})
    (vault / "state").rmdir()
    (vault / ".state-real").mkdir()
    (vault / "state").symlink_to(vault / ".state-real")
    result = CliRunner().invoke(cli, ["--vault", str(vault), "scan", "--force"])
    assert result.exit_code == 0, result.output
    assert (vault / ".state-real/last-report.json").is_file()


def test_a_trash_symlink_out_of_the_vault_is_refused_before_the_question(
    make_vault: MakeVault, outside: Path
) -> None:
    vault = make_vault({"patterns/registry.md": REGISTRY})
    (vault / ".trash").symlink_to(outside)
    before = snapshot(vault)
    code, screen = run_on_pty(["--vault", str(vault), "apply", "prune", "beta"], ["y"], "[y/N]:")
    assert code == 1, screen
    assert "vaultkeeper: error: prune beta: .trash/: a symlink to" in screen
    assert "[y/N]" not in screen
    assert list(outside.iterdir()) == []
    assert snapshot(vault) == before


def test_a_trash_symlink_made_after_queueing_is_refused_at_review(
    make_vault: MakeVault, outside: Path
) -> None:
    vault = make_vault({"patterns/registry.md": REGISTRY})
    runner = CliRunner()
    assert runner.invoke(cli, ["--vault", str(vault), "apply", "prune", "beta"]).exit_code == 3
    (vault / ".trash").symlink_to(outside)
    code, screen = run_on_pty(["--vault", str(vault), "review"], ["y"], "[q]uit:")
    assert ".trash/: a symlink to" in screen, screen
    assert list(outside.iterdir()) == []
    assert "### beta" in (vault / "patterns/registry.md").read_text()
    assert len(queue.pending(vault)) == 1
