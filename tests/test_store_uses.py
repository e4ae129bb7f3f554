"""The usage log's lines stay readable: each test failed before its fix."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests import transcript_fixtures as tf
from tests.conftest import MakeVault
from tests.test_learn_ingest import REGISTRY, counters
from vaultkeeper import config
from vaultkeeper.apply import journal
from vaultkeeper.apply import journal as queue
from vaultkeeper.apply.decision import ACT, Decision, Outcome
from vaultkeeper.cli import cli
from vaultkeeper.learn.ingest import ingest
from vaultkeeper.store import uses
from vaultkeeper.store.model import Problem
from vaultkeeper.store.uses import UseEvent, latest_receipts

NOW = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.timezone.utc)


def cite(tmp_path: Path, session: str, name: str = "cited.jsonl") -> Path:
    line = tf.claude(
        "assistant", [tf.text("[[patterns/registry#pin-test-clock]]")], session=session
    )
    return tf.write(tmp_path / name, [line])


def test_a_long_session_id_is_counted_once(tmp_path: Path, make_vault: MakeVault) -> None:
    """A 70,000-char id made a log line over 64 KiB, skipped on reading: counted each time."""
    vault = make_vault({"patterns/registry.md": REGISTRY})
    path = cite(tmp_path, "s" * 70_000 + "\udcff")
    for _ in range(3):
        ingest(vault, [path], NOW)
    assert counters(vault, "pin-test-clock")[0] == "3"
    lines = uses.uses_path(vault).read_bytes().splitlines()
    assert lines and all(len(line) < 8 * 1024 for line in lines)
    assert uses.bounded("x" * 5000) == uses.bounded("x" * 5000) != uses.bounded("x" * 5001)


@pytest.mark.parametrize("log", ["uses", "queue", "journal"])
def test_an_append_after_a_torn_line_starts_a_line_of_its_own(
    make_vault: MakeVault, log: str
) -> None:
    vault = make_vault({"patterns/registry.md": REGISTRY})
    state = vault / config.STATE_DIR
    path = {
        "uses": uses.uses_path(vault),
        "queue": state / config.QUEUE_FILE,
        "journal": state / config.JOURNAL_FILE,
    }[log]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b'{"session": "torn", "sou')
    if log == "uses":
        uses.append_events(vault, [uses.UseEvent("s1", "cli", "cite", "x", NOW.date(), "r")])
        assert [e.session for e in uses.read_events(vault)] == ["s1"]
    elif log == "queue":
        queue.enqueue(vault, Decision("prune", "beta"), "beta", "needs a yes", None, NOW)
        assert [a.target for a in queue.pending(vault)] == ["beta"]
    else:
        journal.append(vault, Outcome("use", "x", ACT, "why"), NOW)
        assert [r["target"] for r in journal.read(vault).records] == ["x"]
    assert path.read_bytes().split(b"\n")[0] == b'{"session": "torn", "sou'


def test_a_damaged_usage_line_is_reported_not_absent(tmp_path: Path, make_vault: MakeVault) -> None:
    vault = make_vault({"patterns/registry.md": REGISTRY})
    log = uses.uses_path(vault)
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_bytes(b"{not json\n" + b"x" * (70 * 1024) + b"\n")
    problems: list[Problem] = []
    assert list(uses.read_events(vault, problems=problems)) == []
    assert [str(p) for p in problems] == [
        "state/uses.jsonl:1: not a JSON line; skipped (a use there is not seen)",
        "state/uses.jsonl:2: longer than 64 KiB; skipped (a use there is not seen)",
    ]
    result = CliRunner().invoke(cli, ["--vault", str(vault), "ingest", str(cite(tmp_path, "s"))])
    assert result.exit_code == 0
    assert "vaultkeeper: warning: state/uses.jsonl:1: not a JSON line; skipped" in result.stderr


def test_review_list_never_says_0_waiting_over_a_damaged_queue_line(
    make_vault: MakeVault,
) -> None:
    vault = make_vault({"patterns/registry.md": REGISTRY})
    path = vault / config.STATE_DIR / config.QUEUE_FILE
    ask = {"type": "ask", "id": "20261201-090000-abcdef", "action": "prune", "target": "beta"}
    path.write_bytes(json.dumps(ask).encode()[:-9] + b"\n")
    result = CliRunner().invoke(cli, ["--vault", str(vault), "review", "--list"])
    assert result.exit_code == 1
    assert result.stdout == "0 waiting for a person (and 1 unreadable queue line(s))\n"
    assert result.stderr == (
        "vaultkeeper: error: state/queue.jsonl:1: not a queue line (an ask may be hidden "
        "there); skipped\n"
    )


def test_latest_receipts_parses_no_read_line(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = make_vault()
    events = [
        UseEvent(f"s{i}", "codex", "read", f"projects/api/memory/n{i}.md", NOW.date(), f"/t:{i}")
        for i in range(200)
    ]
    events.insert(100, UseEvent("s", "mcp", "cite", "C# tips", NOW.date(), "mcp:here"))
    uses.append_events(vault, events)
    parsed: list[object] = []
    real = json.loads

    def counting(raw: Any) -> Any:
        parsed.append(raw)
        return real(raw)

    monkeypatch.setattr(uses.json, "loads", counting)
    got = latest_receipts(vault)
    assert {k: v.receipt for k, v in got.items()} == {"C# tips": "mcp:here"}
    assert len(parsed) == 1


def test_a_usage_log_that_is_a_symlink_is_never_read_through(
    make_vault: MakeVault, tmp_path: Path
) -> None:
    # uses.jsonl travels through git, so it may arrive as a symlink: to a file outside the
    # vault, or to /dev/zero (report, status, the brief and the scan then read for ever).
    # Every writer refuses the link already; the reader now does too.
    from vaultkeeper.store.uses import read_lines

    vault = make_vault()
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text(json.dumps({"kind": "cite", "target": "x"}) + "\n")
    log = vault / config.STATE_DIR / config.USES_LOG_FILE
    log.parent.mkdir(exist_ok=True)
    log.unlink(missing_ok=True)
    log.symlink_to(outside)
    assert list(read_lines(vault)) == []
    log.unlink()
    log.write_text(json.dumps({"kind": "cite", "target": "x"}) + "\n")
    assert list(read_lines(vault)) == [{"kind": "cite", "target": "x"}]
