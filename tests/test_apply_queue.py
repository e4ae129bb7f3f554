"""state/queue.jsonl: asks for a person, deduplicated, closed by a later line."""

from __future__ import annotations

import datetime as dt

from vaultkeeper.apply import journal as queue
from vaultkeeper.apply.decision import Decision

NOW = dt.datetime(2026, 12, 1, 9, 30, tzinfo=dt.timezone.utc)


def test_enqueue_pending_close(make_vault) -> None:
    vault = make_vault({})
    a = queue.enqueue(vault, Decision("prune", "beta"), "beta", "needs a yes", "h1", NOW)
    b = queue.enqueue(vault, Decision("prune", "gamma"), "gamma", "needs a yes", "h2", NOW)
    assert [x.target for x in queue.pending(vault)] == ["beta", "gamma"]
    # the same request again is the same ask, not a second one
    again = queue.enqueue(vault, Decision("prune", "beta"), "beta", "needs a yes", "h9", NOW)
    assert again == a
    queue.close(vault, a.id, "yes", NOW)
    assert queue.pending(vault) == [b]
    assert b.decision() == Decision("prune", "gamma", reason="needs a yes")


def test_revalidate_asks_differ_by_result(make_vault) -> None:
    vault = make_vault({})
    fail = Decision("revalidate", "m.md", "https://x.org", "fail")
    queue.enqueue(vault, fail, "m.md", "r", None, NOW)
    assert queue.find_pending(vault, fail, "m.md") is not None
    assert queue.find_pending(vault, Decision("revalidate", "m.md", result="pass"), "m.md") is None


def test_torn_lines_are_ignored(make_vault) -> None:
    vault = make_vault({})
    queue.enqueue(vault, Decision("prune", "beta"), "beta", "r", None, NOW)
    with queue.queue_path(vault).open("a") as fh:
        fh.write('{"type": "ask", "id"\n\n')
    assert [x.target for x in queue.pending(vault)] == ["beta"]


def test_a_deletion_done_in_the_mcp_dialog_closes_the_queued_ask(sample, runner) -> None:
    """Queued by an agent (no terminal), then pruned through the host's dialog: nothing
    is left waiting, for review --list and status alike, without running review."""
    from types import SimpleNamespace

    import anyio

    from vaultkeeper.apply.batch import apply_decision
    from vaultkeeper.cli import cli
    from vaultkeeper.mcp import prune as mcp_prune

    block = "yaml-anchor-templates"
    assert runner.invoke(cli, ["--vault", str(sample), "apply", "prune", block]).exit_code == 3
    queue.enqueue(sample, Decision("revalidate", block, result="fail"), block, "r", None, NOW)
    queue.enqueue(sample, Decision("prune", "pin-test-clock"), "pin-test-clock", "r", None, NOW)

    async def person(message: str, schema):  # the host's dialog: they type the name
        return SimpleNamespace(action="accept", data=schema(name=block))

    async def tool_call():
        confirm = mcp_prune.InDialog(person, 5.0)
        return await anyio.to_thread.run_sync(
            lambda: apply_decision(sample, Decision("prune", block), NOW, confirm=confirm)
        )

    assert anyio.run(tool_call).outcome == "act"
    # every ask about the deleted block is answered; another entry's ask still waits
    assert [a.target for a in queue.pending(sample)] == ["pin-test-clock"]
    listed = runner.invoke(cli, ["--vault", str(sample), "review", "--list"])
    assert listed.stdout.splitlines()[-1] == "1 waiting for a person"
    assert block not in listed.stdout
