"""A compacted usage log still counts nothing twice and keeps what decay and the brief
read."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from tests import transcript_fixtures as tf
from tests.conftest import MakeVault
from tests.test_learn_ingest import REGISTRY, counters
from vaultkeeper import config
from vaultkeeper.learn.ingest import ingest
from vaultkeeper.store.uses import last_seen, latest_receipts, read_events, uses_path

NOW = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.timezone.utc)


def session(folder: Path, i: int, day: str) -> Path:
    links = [tf.text("[[patterns/registry#pin-test-clock]]")] if i % 2 else []
    links.append(tf.text(f"[[patterns/registry#grep-the-config-value]] {i}"))
    line = tf.claude("assistant", links, ts=f"{day}T10:00:00.000Z", session=f"s{i}")
    return tf.write(folder / f"s{i}.jsonl", [line])


def test_compacting_keeps_replay_safety_and_decay(
    tmp_path: Path, make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = make_vault({"patterns/registry.md": REGISTRY})
    old = [session(tmp_path / "old", i, f"2026-0{1 + i % 9}-15") for i in range(60)]
    ingest(vault, old, NOW)
    counts = (counters(vault, "pin-test-clock"), counters(vault, "grep-the-config-value"))
    seen, receipts = last_seen(vault), latest_receipts(vault)
    lines = uses_path(vault).read_bytes().count(b"\n")
    monkeypatch.setattr(config, "USES_COMPACT_BYTES", 1000)
    new = session(tmp_path / "new", 1000, "2026-11-30")
    ingest(vault, [new], NOW)  # compacts, then counts the new session once
    assert uses_path(vault).read_bytes().count(b"\n") < lines / 2
    assert int(counters(vault, "grep-the-config-value")[0]) == int(counts[1][0]) + 1
    ingest(vault, [*old, new], NOW)  # a replay of every session, old and new
    assert counters(vault, "pin-test-clock")[0] == counts[0][0]
    assert int(counters(vault, "grep-the-config-value")[0]) == int(counts[1][0]) + 1
    assert {k: v for k, v in last_seen(vault).items() if k != "grep-the-config-value"} == {
        k: v for k, v in seen.items() if k != "grep-the-config-value"
    }
    assert latest_receipts(vault)["pin-test-clock"] == receipts["pin-test-clock"]
    assert next(read_events(vault)).date == dt.date(2026, 1, 15)  # the log's first day
