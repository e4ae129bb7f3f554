"""apply prune: a person's yes on a real terminal deletes; nothing else ever does."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import snapshot
from pty_helper import run_on_pty, vaultkeeper_argv

from vaultkeeper import config
from vaultkeeper.apply import journal as queue
from vaultkeeper.apply.batch import apply_decision
from vaultkeeper.apply.decision import Decision
from vaultkeeper.cli import cli
from vaultkeeper.index import delta
from vaultkeeper.index import delta as quick

ALPHA = "### alpha\nAlpha body.\n\n**success count:** 3\n**last used:** 2026-10-01\n"
BETA = "### beta\nBeta body, never reused.\n\n**success count:** 0\n**last used:** 2025-01-01\n"
REGISTRY = "# Pattern registry\n\n" + ALPHA + "\n" + BETA
PROMPT = "[y/N]:"
NOW = dt.datetime(2026, 12, 1, 9, 30, tzinfo=dt.timezone.utc)


@pytest.fixture
def vault(make_vault) -> Path:
    return make_vault(
        {"patterns/registry.md": REGISTRY, "projects/p/memory/m.md": "---\nname: m\n---\nx\n"}
    )


def journal(vault: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (vault / "state/journal.jsonl").read_text().splitlines()]


def test_without_a_terminal_it_queues_and_exits_3(vault: Path, runner: CliRunner) -> None:
    before = snapshot(vault)
    result = runner.invoke(cli, ["--vault", str(vault), "apply", "prune", "beta"])
    assert result.exit_code == 3
    assert "a person must run `vaultkeeper review`" in result.stdout
    assert snapshot(vault) == before
    [ask] = queue.pending(vault)
    assert (ask.action, ask.target) == ("prune", "beta")
    [record] = journal(vault)
    assert (record["action"], record["target"], record["outcome"], record["id"]) == (
        "prune", "beta", "ask", ask.id,
    )  # fmt: skip


def test_an_agent_shell_with_pipes_never_deletes(vault: Path) -> None:
    # stdin a pipe an agent could write "y" into: still no terminal, so still no deletion
    before = snapshot(vault)
    env = {k: v for k, v in os.environ.items() if k != "VAULTKEEPER_VAULT"}
    proc = subprocess.run(
        [*vaultkeeper_argv(), "--vault", str(vault), "apply", "prune", "beta"],
        input="y\n", capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 3
    assert "vaultkeeper review" in proc.stdout
    assert snapshot(vault) == before


def test_terminal_stdin_but_piped_stdout_is_no_terminal(vault: Path) -> None:
    master, slave = os.openpty()
    env = {k: v for k, v in os.environ.items() if k != "VAULTKEEPER_VAULT"}
    try:
        proc = subprocess.run(
            [*vaultkeeper_argv(), "--vault", str(vault), "apply", "prune", "beta"],
            stdin=slave, capture_output=True, text=True, env=env, timeout=60,
        )  # fmt: skip
    finally:
        os.close(slave)
        os.close(master)
    assert proc.returncode == 3
    assert "### beta" in (vault / "patterns/registry.md").read_text()


@pytest.mark.parametrize("flag", ["--yes", "-y", "--force", "--no-input"])
def test_no_flag_bypasses_the_person(vault: Path, runner: CliRunner, flag: str) -> None:
    before = snapshot(vault)
    result = runner.invoke(cli, ["--vault", str(vault), "apply", "prune", "beta", flag])
    assert result.exit_code == 2
    assert snapshot(vault) == before


def test_dry_run_prints_the_diff_writes_and_queues_nothing(vault: Path, runner: CliRunner) -> None:
    before = snapshot(vault, skip_state=False)
    result = runner.invoke(cli, ["--vault", str(vault), "apply", "prune", "beta", "--dry-run"])
    assert result.exit_code == 0
    assert "--- a/patterns/registry.md\n+++ b/patterns/registry.md\n" in result.stdout
    assert "-### beta\n-Beta body, never reused.\n" in result.stdout
    assert snapshot(vault, skip_state=False) == before
    assert queue.pending(vault) == []


def test_yes_on_a_terminal_deletes_and_restore_is_byte_identical(
    vault: Path, runner: CliRunner
) -> None:
    original = (vault / "patterns/registry.md").read_bytes()
    code, screen = run_on_pty(["--vault", str(vault), "apply", "prune", "beta"], ["y"], PROMPT)
    assert code == 0, screen
    assert BETA.rstrip("\n") in screen  # exactly what will go was shown before the question
    assert screen.index("Beta body") < screen.index(PROMPT)
    assert "act: prune beta: a person answered yes" in screen
    assert "### beta" not in (vault / "patterns/registry.md").read_text()
    [record] = [r for r in journal(vault) if r["outcome"] == "act"]
    trash_id = str(record["id"])
    assert f"vaultkeeper restore {trash_id}" in screen
    assert (vault / ".trash" / trash_id / "beta.md").is_file()
    result = runner.invoke(cli, ["--vault", str(vault), "restore", trash_id])
    assert result.exit_code == 0, result.output
    assert (vault / "patterns/registry.md").read_bytes() == original


@pytest.mark.parametrize("answer", ["YES", "Y", " yes "])
def test_yes_in_any_case(vault: Path, answer: str) -> None:
    code, screen = run_on_pty(["--vault", str(vault), "apply", "prune", "beta"], [answer], PROMPT)
    assert code == 0, screen
    assert "### beta" not in (vault / "patterns/registry.md").read_text()


@pytest.mark.parametrize("answer", ["n", "no", "", "yess", "sure", "q"])
def test_anything_but_yes_keeps_everything(vault: Path, answer: str) -> None:
    before = snapshot(vault)
    code, screen = run_on_pty(["--vault", str(vault), "apply", "prune", "beta"], [answer], PROMPT)
    assert code == 0, screen
    assert "silence: prune beta: kept" in screen
    assert snapshot(vault) == before
    assert not (vault / ".trash").exists()
    assert journal(vault)[-1]["outcome"] == "silence"


def test_yes_on_a_terminal_deletes_a_file(vault: Path) -> None:
    path = "projects/p/memory/m.md"
    raw = (vault / path).read_bytes()
    code, screen = run_on_pty(["--vault", str(vault), "apply", "prune", path], ["yes"], PROMPT)
    assert code == 0, screen
    assert "name: m" in screen
    assert not (vault / path).exists()
    trash_id = str(journal(vault)[-1]["id"])
    assert (vault / ".trash" / trash_id / "m.md").read_bytes() == raw


def test_path_escapes_are_refused_before_reading(
    vault: Path, runner: CliRunner, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("keep\n")
    (vault / "projects/p/memory/link.md").symlink_to(outside)
    for target in ("../outside.md", str(outside), "projects/p/memory/link.md"):
        result = runner.invoke(cli, ["--vault", str(vault), "apply", "prune", target])
        assert result.exit_code == 1, target
        assert "outside the vault" in result.stderr
    assert outside.read_text() == "keep\n"
    assert queue.pending(vault) == []


def test_registry_files_and_own_files_are_not_prunable(vault: Path, runner: CliRunner) -> None:
    for target, why in (
        ("patterns/registry.md", "prune its ### blocks by name"),
        ("_index.md", "not an entry"),
    ):
        result = runner.invoke(cli, ["--vault", str(vault), "apply", "prune", target])
        assert result.exit_code == 1 and why in result.stderr


def test_stale_hash_refused(vault: Path, runner: CliRunner) -> None:
    result = runner.invoke(
        cli, ["--vault", str(vault), "apply", "prune", "beta", "--expect-hash", "0" * 64]
    )
    assert result.exit_code == 1 and "changed since the report" in result.stderr
    assert queue.pending(vault) == []


def _index(vault: Path, runner: CliRunner, *args: str):
    return runner.invoke(cli, ["--vault", str(vault), "index", *args])


@pytest.mark.parametrize(
    ("target", "link"),
    [("beta", "[[patterns/registry#beta]]"), ("projects/p/memory/m.md", "[[projects/p/memory/m]]")],
)
def test_a_confirmed_prune_regenerates_the_index(
    vault: Path, runner: CliRunner, target: str, link: str
) -> None:
    assert _index(vault, runner).exit_code == 0
    assert link in (vault / "_index.md").read_text()
    done = apply_decision(vault, Decision("prune", target), NOW, confirm=lambda plan: True)
    assert done.outcome == "act", done.reason
    assert link not in (vault / "_index.md").read_text()
    assert _index(vault, runner, "--check").exit_code == 0
    lint = runner.invoke(cli, ["--vault", str(vault), "lint", "--select", "VK301"])
    assert "VK301" not in lint.output


def test_an_unreadable_index_refuses_the_prune_before_any_write(
    vault: Path, runner: CliRunner
) -> None:
    (vault / "_index.md").write_text(f"{config.INDEX_START}\n" * 2)
    before = snapshot(vault)
    done = apply_decision(vault, Decision("prune", "beta"), NOW, confirm=lambda plan: True)
    assert done.outcome == "defer" and "_index.md:1: needs exactly one" in done.reason
    assert snapshot(vault) == before


def test_an_index_that_fails_after_the_write_is_reported_not_hidden(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing(vault: Path, *, check: bool = False, keep: object = None, **_: object) -> None:
        if not check:
            raise OSError(28, "No space left on device", str(vault / "_index.md"))

    def full(path: Path, data: object, **_: object) -> None:
        failing(vault)

    monkeypatch.setattr(quick, "build_index", failing)  # a whole regeneration
    monkeypatch.setattr(delta, "atomic_write", full)  # the index followed line by line
    done = apply_decision(vault, Decision("prune", "beta"), NOW, confirm=lambda plan: True)
    assert done.outcome == "act"
    assert done.reason.endswith(
        f"; _index.md not updated: {vault / '_index.md'}: No space left on device; "
        "run `vaultkeeper index`"
    )
    assert "### beta" not in (vault / "patterns/registry.md").read_text()
    assert journal(vault)[-1]["reason"] == done.reason


def test_end_of_input_at_the_prune_question_keeps_it_and_is_journaled(vault: Path) -> None:
    before = snapshot(vault)
    code, screen = run_on_pty(["--vault", str(vault), "apply", "prune", "beta"], ["\x04"], PROMPT)
    assert code == 0, screen
    assert "Aborted!" not in screen
    assert "silence: prune beta: kept: the person did not answer yes" in screen
    assert snapshot(vault) == before
    last = json.loads((vault / "state/journal.jsonl").read_text().splitlines()[-1])
    assert (last["target"], last["outcome"]) == ("beta", "silence")


def test_a_yes_at_the_terminal_is_journaled_as_such(vault: Path) -> None:
    code, screen = run_on_pty(["--vault", str(vault), "apply", "prune", "beta"], ["y"], PROMPT)
    assert code == 0, screen
    [record] = [r for r in journal(vault) if r["outcome"] == "act"]
    assert (record["action"], record["target"]) == ("prune", "beta")
    assert record["confirmed_via"] == "terminal"
