"""state/queue.jsonl: asks for a person, deduplicated, closed by a later line."""

from __future__ import annotations

import datetime as dt

from vaultkeeper.apply import queue
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
