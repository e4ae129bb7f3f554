"""Vault text reaches a person's terminal inert: escapes shown, layout and letters kept."""

from __future__ import annotations

import json

from click.testing import CliRunner
from pty_helper import run_on_pty

from tests.conftest import MakeVault
from vaultkeeper.cli import cli
from vaultkeeper.store.textsafe import inert

# clear the screen, go home, and draw a fake prompt
HOSTILE = "\x1b[2J\x1b[HNothing will be deleted.\r\u202etxt.exe\x9b31m"


SHOWN = "\\x1b[2J\\x1b[HNothing will be deleted.\\x0d\\u202etxt.exe\\x9b31m"


REGISTRY = (
    "# Pattern registry\n\n### beta\nBeta " + HOSTILE + " body.\n\n"
    "**success count:** 0\n**last used:** 2025-01-01\n"
)


def test_inert_escapes_controls_but_keeps_layout_and_text() -> None:
    assert inert(HOSTILE) == SHOWN
    assert inert("a\tb\nc caf\u00e9 \u2014 \u2603") == "a\tb\nc caf\u00e9 \u2014 \u2603"
    assert inert("\x00\x07\x08\x7f\u2028\u2066") == "\\x00\\x07\\x08\\x7f\\u2028\\u2066"


def _no_raw_controls(screen: str) -> None:
    assert "\x1b" not in screen and "\u202e" not in screen and "\x9b" not in screen


def test_prune_prompt_shows_the_body_inert(make_vault: MakeVault) -> None:
    vault = make_vault({"patterns/registry.md": REGISTRY})
    code, screen = run_on_pty(["--vault", str(vault), "apply", "prune", "beta"], ["n"], "[y/N]:")
    assert code == 0, screen
    assert f"Beta {SHOWN} body." in screen
    _no_raw_controls(screen)
    assert "### beta" in (vault / "patterns/registry.md").read_text()


def test_review_and_list_show_the_reason_inert(make_vault: MakeVault) -> None:
    vault = make_vault({"patterns/registry.md": REGISTRY})
    runner = CliRunner()
    assert runner.invoke(cli, ["--vault", str(vault), "apply", "prune", "beta"]).exit_code == 3
    queue = vault / "state/queue.jsonl"
    asks = [json.loads(line) for line in queue.read_text().splitlines()]
    asks[-1]["reason"] = HOSTILE  # an agent can write the queue's reason through batch
    queue.write_text("".join(json.dumps(a) + "\n" for a in asks))
    listed = runner.invoke(cli, ["--vault", str(vault), "review", "--list"])
    assert f"prune beta: {SHOWN}" in listed.stdout and "\x1b" not in listed.stdout
    code, screen = run_on_pty(["--vault", str(vault), "review"], ["s"], "[q]uit:")
    assert code == 3, screen  # skipped: it still waits for a person
    assert f": {SHOWN}\n" in screen and f"Beta {SHOWN} body." in screen
    _no_raw_controls(screen)
