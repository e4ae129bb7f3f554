"""The elicitation gate on its own: what deletes, what keeps or queues, and the time limit.

The stdio tests (test_mcp_server.py) drive accept / wrong name / decline / cancel
through a real host session; here the answers that are hard to provoke there (no
answer in time, an error reply, a malformed answer) go through the same applier call
the server makes, and the vault's bytes and the journal are checked each time.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import pytest

from tests.conftest import snapshot
from vaultkeeper.apply.batch import apply_decision
from vaultkeeper.apply.decision import Decision
from vaultkeeper.apply.prune import NoAnswer, plan
from vaultkeeper.mcp import prune as mcp_prune

NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.timezone.utc)
BLOCK = "yaml-anchor-templates"


def _prune_with(vault: Path, elicit: Any, timeout: float = 5.0) -> Any:
    """The server's call: the applier in a worker thread, the dialog on the event loop."""
    confirm = mcp_prune.InDialog(elicit, timeout)

    async def tool_call() -> Any:
        decision = Decision("prune", BLOCK)
        return await anyio.to_thread.run_sync(
            lambda: apply_decision(vault, decision, NOW, confirm=confirm)
        )

    return anyio.run(tool_call)


def _last_journal(vault: Path) -> dict[str, Any]:
    lines = (vault / "state" / "journal.jsonl").read_text().splitlines()
    return dict(json.loads(lines[-1]))


def test_no_answer_in_time_keeps_everything_and_queues_it(sample: Path) -> None:
    before = snapshot(sample)
    never = anyio.Event()

    async def silent(message: str, schema: Any) -> Any:
        await never.wait()  # the person never answers

    outcome = _prune_with(sample, silent, timeout=0.05)
    assert outcome.outcome == "ask" and outcome.exit_code == 3
    assert snapshot(sample) == before
    record = _last_journal(sample)
    assert record["outcome"] == "ask" and "no answer" in record["reason"]
    assert "vaultkeeper review" in record["reason"]


@pytest.mark.parametrize(
    ("reply", "outcome", "why"),
    [
        (RuntimeError("Elicitation not supported"), "ask", "dialog failed"),
        (ValueError("content does not match the requested schema"), "ask", "dialog failed"),
        (SimpleNamespace(action="accept", data=None), "silence", "is not"),
        (SimpleNamespace(action="weird"), "ask", "not accept"),
    ],
)
def test_errors_and_odd_answers_keep(sample: Path, reply: Any, outcome: str, why: str) -> None:
    before = snapshot(sample)

    async def host(message: str, schema: Any) -> Any:
        if isinstance(reply, Exception):
            raise reply
        return reply

    got = _prune_with(sample, host)
    assert got.outcome == outcome and why in got.reason
    assert snapshot(sample) == before
    assert _last_journal(sample)["reason"] == got.reason


def test_the_right_name_deletes_through_the_terminal_s_prune(sample: Path) -> None:
    async def person(message: str, schema: Any) -> Any:
        return SimpleNamespace(action="accept", data=schema(name=f"  {BLOCK} "))

    outcome = _prune_with(sample, person)
    assert outcome.outcome == "act"
    assert f"### {BLOCK}" not in (sample / "patterns/registry.md").read_text()
    trashed = sample / ".trash" / str(outcome.id)
    assert trashed.is_dir()


def test_judge_and_the_expected_name(sample: Path) -> None:
    block = plan(sample, Decision("prune", BLOCK))
    assert mcp_prune.judge("accept", BLOCK, block) is True
    assert mcp_prune.judge("accept", BLOCK.upper(), block) != True  # noqa: E712 - exactly True
    declined = mcp_prune.judge("decline", BLOCK, block)
    assert isinstance(declined, NoAnswer) and declined.why.startswith("the host declined")
    note = plan(sample, Decision("prune", "projects/web/memory/old-webpack-config.md"))
    assert mcp_prune.expected_name(note) == "old-webpack-config"
    assert mcp_prune.judge("accept", "old-webpack-config", note) is True
    assert mcp_prune.judge("accept", note.target, note) != True  # noqa: E712


@pytest.mark.parametrize(
    ("declared", "can"),
    [
        (None, False),
        (SimpleNamespace(elicitation=None), False),
        (SimpleNamespace(elicitation=SimpleNamespace(form=None, url=None)), True),  # {}: form
        (SimpleNamespace(elicitation=SimpleNamespace(form=object(), url=None)), True),
        (SimpleNamespace(elicitation=SimpleNamespace(form=None, url=object())), False),
    ],
)
def test_can_elicit_needs_form_mode(declared: Any, can: bool) -> None:
    assert mcp_prune.can_elicit(declared) is can


def test_a_yes_in_the_host_s_dialog_is_journaled_as_such(sample: Path) -> None:
    async def person(message: str, schema: Any) -> Any:
        return SimpleNamespace(action="accept", data=schema(name=BLOCK))

    outcome = _prune_with(sample, person)
    assert outcome.outcome == "act"
    record = _last_journal(sample)
    assert (record["action"], record["target"], record["outcome"]) == ("prune", BLOCK, "act")
    assert record["confirmed_via"] == "mcp-elicitation"


def test_a_file_s_dialog_leads_with_its_description_and_says_it_has_no_count(
    sample: Path,
) -> None:
    note = plan(sample, Decision("prune", "projects/web/memory/old-webpack-config.md"))
    head = mcp_prune.message(note).split("\n")[:4]
    assert head[0] == "Delete the entry file projects/web/memory/old-webpack-config.md?"
    described = (sample / note.target).read_text().split("description: ", 1)[1].split("\n")[0]
    assert head[1] == f"What it is: {described.strip(chr(34))}"
    assert head[2].startswith("No success count (an entry file); ")
    assert "type old-webpack-config below" in head[3]


def test_the_journal_names_the_host_s_dialog_never_a_person(sample: Path) -> None:
    async def host(message: str, schema: Any) -> Any:
        return SimpleNamespace(action="accept", data=schema(name=BLOCK))

    from vaultkeeper.hosts.elicitation import host_label

    confirm = mcp_prune.InDialog(host, 5.0, host_label("codex-mcp-client"))

    async def tool_call() -> Any:
        return await anyio.to_thread.run_sync(
            lambda: apply_decision(sample, Decision("prune", BLOCK), NOW, confirm=confirm)
        )

    assert anyio.run(tool_call).outcome == "act"
    reason = _last_journal(sample)["reason"]
    assert reason.startswith("accepted in Codex's dialog: moved ")
    assert "person" not in reason
    assert host_label("claude-code") == "Claude Code" and host_label("codex-mcp-client") == "Codex"
    assert host_label("x", "Evil\x1b[2J\u202eHost") == "Evil\\u001b[2J\\u202eHost"
    assert host_label(None) == "the host"
