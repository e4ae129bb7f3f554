"""vaultkeeper review: refuses without a terminal; on a real pty walks the asks yes / no / skip."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import snapshot
from pty_helper import run_on_pty

from vaultkeeper.apply import journal as queue
from vaultkeeper.apply.review import Item, is_terminal, is_yes, parse_answer, review
from vaultkeeper.cli import cli

NOW = dt.datetime(2026, 12, 1, 9, 30, tzinfo=dt.timezone.utc)
BETA = "### beta\nBeta body.\n\n**success count:** 0\n**last used:** 2025-01-01\n"
GAMMA = "### gamma\nGamma body.\n\n**success count:** 0\n**last used:** 2025-02-01\n"
REGISTRY = "# Pattern registry\n\n" + BETA + "\n" + GAMMA
OVERRIDE = """---
name: ruled
description: A ruling
type: decision
status: held_out
label: validated-override
holdout_until: "2026-01-01"
provenance: []
---
body
"""
PROMPT = "[q]uit:"


@pytest.fixture
def vault(make_vault, runner: CliRunner) -> Path:
    root = make_vault(
        {
            "patterns/registry.md": REGISTRY,
            "projects/p/memory/ruled.md": OVERRIDE,
            "projects/p/research/notes.md": "a\nb\n",
        }
    )
    for args in (["apply", "prune", "beta"], ["apply", "prune", "gamma"]):
        assert runner.invoke(cli, ["--vault", str(root), *args]).exit_code == 3
    return root


def journal(vault: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (vault / "state/journal.jsonl").read_text().splitlines()]


def test_review_refuses_without_a_terminal(vault: Path, runner: CliRunner) -> None:
    before = snapshot(vault, skip_state=False)
    result = runner.invoke(cli, ["--vault", str(vault), "review"], input="y\ny\n")
    assert result.exit_code == 3
    assert "review is for a person at a terminal" in result.stderr
    assert "2 ask(s) waiting" in result.stderr
    assert snapshot(vault, skip_state=False) == before


def test_review_list_works_anywhere(vault: Path, runner: CliRunner) -> None:
    result = runner.invoke(cli, ["--vault", str(vault), "review", "--list", "--json"])
    assert result.exit_code == 0
    assert [a["target"] for a in json.loads(result.stdout)] == ["beta", "gamma"]


def test_review_list_shows_a_queued_line_break_escaped(vault: Path, runner: CliRunner) -> None:
    """A queue line pulled with the vault cannot forge a second waiting ask at the
    person's terminal: one ask, one line."""
    forged = {"type": "ask", "id": "q1", "action": "prune", "target": "x", "reason": "y\nq2  z"}
    with (vault / "state/queue.jsonl").open("a") as fh:
        fh.write(json.dumps(forged) + "\n")
    result = runner.invoke(cli, ["--vault", str(vault), "review", "--list"])
    assert "q1  prune x: y\\nq2  z" in result.stdout.splitlines()
    assert "3 waiting for a person" in result.stdout


def test_yes_and_no_on_a_pty(vault: Path) -> None:
    code, screen = run_on_pty(["--vault", str(vault), "review"], ["y", "n"], PROMPT)
    assert code == 0, screen
    assert "Beta body." in screen and "Gamma body." in screen
    assert "act: prune beta: a person answered yes" in screen
    assert "silence: prune gamma: a person answered no at review" in screen
    assert "0 still waiting" in screen
    text = (vault / "patterns/registry.md").read_text()
    assert "### beta" not in text and "### gamma" in text
    assert queue.pending(vault) == []
    outcomes = [(r["target"], r["outcome"]) for r in journal(vault)[-2:]]
    assert outcomes == [("beta", "act"), ("gamma", "silence")]


def test_skip_and_empty_keep_the_asks_queued(vault: Path) -> None:
    before = snapshot(vault)
    code, screen = run_on_pty(["--vault", str(vault), "review"], ["s", ""], PROMPT)
    assert code == 3, screen  # what was not decided still waits for a person
    assert "2 still waiting" in screen
    assert snapshot(vault) == before
    assert len(queue.pending(vault)) == 2


def test_unclear_answer_is_asked_again_and_quit_stops(vault: Path) -> None:
    code, screen = run_on_pty(["--vault", str(vault), "review"], ["maybe", "q"], PROMPT)
    assert code == 3, screen  # what was not decided still waits for a person
    assert "answer y, n, s (or nothing) to skip, or q" in screen
    assert "2 still waiting" in screen
    assert "### beta" in (vault / "patterns/registry.md").read_text()


def test_override_ask_archives_on_yes(vault: Path, runner: CliRunner) -> None:
    path = "projects/p/memory/ruled.md"
    args = ["apply", "revalidate", path, "--fail", "--evidence", "projects/p/research/notes.md:1"]
    assert runner.invoke(cli, ["--vault", str(vault), *args]).exit_code == 3
    code, screen = run_on_pty(["--vault", str(vault), "review"], ["s", "s", "y"], PROMPT)
    assert code == 3, screen  # what was not decided still waits for a person
    assert "-status: held_out\n+status: archived" in screen
    after = (vault / path).read_text()
    assert after == OVERRIDE.replace("status: held_out", "status: archived")
    assert [a.target for a in queue.pending(vault)] == ["beta", "gamma"]


def _answers(*answers: str):
    seen: list[Item] = []
    todo = list(answers)

    def decide(item: Item) -> str:
        seen.append(item)
        return todo.pop(0)

    return decide, seen


def test_core_walk_notes_changes_and_gone_targets(vault: Path) -> None:
    registry = vault / "patterns/registry.md"
    # beta changed since it was queued; gamma is gone altogether
    registry.write_text(REGISTRY.replace("Beta body.", "Beta body, edited.").replace(GAMMA, ""))
    decide, seen = _answers("no")
    result = review(vault, NOW, decide)
    assert [i.ask.target for i in seen] == ["beta"]
    assert seen[0].changed and "Beta body, edited." in seen[0].text
    assert [(o.target, o.outcome) for o in result.outcomes] == [
        ("beta", "silence"),
        ("gamma", "silence"),
    ]
    assert "already gone" in result.outcomes[1].reason
    assert result.remaining == 0


def test_core_walk_only_an_exact_yes_acts(vault: Path) -> None:
    before = snapshot(vault)
    decide, seen = _answers("y", "YES")  # the CLI normalises answers; the core trusts only "yes"
    result = review(vault, NOW, decide)
    assert [o.outcome for o in result.outcomes] == ["defer", "defer"]
    assert snapshot(vault) == before and result.remaining == 2


def test_core_walk_yes_refuses_when_changed_after_shown(vault: Path) -> None:
    registry = vault / "patterns/registry.md"

    def decide(item: Item) -> str:
        registry.write_text(registry.read_text().replace("Beta body.", "Beta edited meanwhile."))
        return "yes"

    result = review(vault, NOW, decide)
    assert result.outcomes[0].outcome == "defer"
    assert "changed after it was shown" in result.outcomes[0].reason
    assert "### beta" in registry.read_text()


def test_a_journal_that_would_refuse_its_line_refuses_the_walk_first(vault: Path) -> None:
    # A yes deleted beta, then its journal line was refused: an error over a deletion done.
    path = vault / "state" / "journal.jsonl"
    path.unlink()
    path.mkdir()
    before = snapshot(vault)
    with pytest.raises(IsADirectoryError):
        review(vault, NOW, lambda item: "yes")
    assert snapshot(vault) == before


def test_answers() -> None:
    assert [is_yes(a) for a in ("y", "YES", " Yes ", "", "n", "yess", "yes please")] == [
        True, True, True, False, False, False, False,
    ]  # fmt: skip
    assert [parse_answer(a) for a in ("Y", "no", "", "s", "Q", "what")] == [
        "yes", "no", "skip", "skip", "quit", None,
    ]  # fmt: skip


class _Fake:
    def __init__(self, tty: bool) -> None:
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_a_terminal_means_stdin_and_stdout() -> None:
    assert is_terminal(_Fake(True), _Fake(True))
    assert not is_terminal(_Fake(True), _Fake(False))
    assert not is_terminal(_Fake(False), _Fake(True))


def test_review_without_a_terminal_and_nothing_queued_is_nothing_to_do(
    make_vault, runner: CliRunner
) -> None:
    # exit 3 means a person is needed: with an empty queue an agent was told so falsely
    vault = make_vault({"patterns/registry.md": REGISTRY})
    result = runner.invoke(cli, ["--vault", str(vault), "review"])
    assert (result.exit_code, result.stdout, result.stderr) == (0, "0 waiting for a person\n", "")


def test_each_result_and_its_undo_id_show_right_after_the_answer(vault: Path) -> None:
    code, screen = run_on_pty(["--vault", str(vault), "review"], ["y", "n"], PROMPT)
    assert code == 0, screen
    trash_id = next(r["id"] for r in journal(vault) if r["outcome"] == "act")
    done = f"(undo: `vaultkeeper restore {trash_id}`)\n"
    assert "act: prune beta: a person answered yes" in screen and done in screen
    assert screen.index(done) < screen.index("Gamma body.")  # before the next question


def test_end_of_input_at_review_is_a_clean_stop_with_a_journal_line(vault: Path) -> None:
    before = snapshot(vault)
    code, screen = run_on_pty(["--vault", str(vault), "review"], ["\x04"], PROMPT)
    assert code == 3, screen  # what was not decided still waits for a person
    assert "Aborted!" not in screen and "Traceback" not in screen
    assert "defer: prune beta: review stopped by the person" in screen
    assert "2 still waiting" in screen
    assert snapshot(vault) == before
    last = journal(vault)[-1]
    assert (last["target"], last["outcome"]) == ("beta", "defer")
    assert "review stopped" in str(last["reason"])


def test_core_walk_stop_journals_and_ends_the_walk(vault: Path) -> None:
    from vaultkeeper.apply.review import STOP

    seen: list[str] = []
    result = review(vault, NOW, lambda item: STOP, lambda o: seen.append(o.target))
    assert seen == ["beta"] and [o.outcome for o in result.outcomes] == ["defer"]
    assert result.remaining == 2


def test_review_of_an_empty_queue_at_a_terminal_says_nothing_waits(make_vault) -> None:
    vault = make_vault({})
    code, screen = run_on_pty(["--vault", str(vault), "review"], [], PROMPT)
    assert code == 0, screen
    assert screen.strip().splitlines() == ["0 waiting for a person"]  # not "0 still waiting"
