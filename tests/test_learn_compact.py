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


def test_compacting_never_holds_the_writer_lock_for_its_work(
    tmp_path: Path, make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 32 item 10: compacting a 35 MB log held the writer lock 12-32 s and every
    concurrent ``use``/``ingest`` failed, its count lost. Now a count made while the log
    is being compacted goes through at once, and its line survives the swap."""
    import threading

    from vaultkeeper.learn.count import record_cli
    from vaultkeeper.store import uses as compacting

    vault = make_vault({"patterns/registry.md": REGISTRY})
    ingest(vault, [session(tmp_path / "old", i, f"2026-0{1 + i % 9}-15") for i in range(60)], NOW)
    before = int(counters(vault, "pin-test-clock")[0])
    monkeypatch.setattr(config, "USES_COMPACT_BYTES", 1000)
    working, go_on = threading.Event(), threading.Event()
    real = compacting.read_events

    def slow(*args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        if threading.current_thread() is not threading.main_thread():
            working.set()  # the compacting's work has begun: the lock must be free now
            assert go_on.wait(timeout=600)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(compacting, "read_events", slow)
    lines = uses_path(vault).read_bytes().count(b"\n")
    other = int(counters(vault, "grep-the-config-value")[0])
    # a count whose command compacts the log first (as the next ``use`` or ``ingest`` does)
    worker = threading.Thread(
        target=lambda: record_cli(vault, "grep-the-config-value", NOW + dt.timedelta(hours=2))
    )
    worker.start()
    try:
        assert working.wait(timeout=600)
        # another writer, meanwhile: it neither waits for the compacting nor compacts
        done = record_cli(vault, "pin-test-clock", NOW + dt.timedelta(hours=1))
        assert done.count_after == before + 1
    finally:
        go_on.set()
        worker.join(timeout=600)
    assert uses_path(vault).read_bytes().count(b"\n") < lines / 2  # it did compact
    # both counts are in the compacted log: each once, and a replay counts nothing more
    cli = sorted(e.target for e in read_events(vault) if e.source == "cli")
    assert cli == ["grep-the-config-value", "pin-test-clock"]
    assert int(counters(vault, "pin-test-clock")[0]) == before + 1
    assert int(counters(vault, "grep-the-config-value")[0]) == other + 1


def test_a_count_waits_for_a_busy_lock_and_says_so(make_vault: MakeVault, tmp_path: Path) -> None:
    """Issue 32 item 10: a count that cannot take the writer lock is not lost: ``use``
    says that it waits, and counts once the lock is free."""
    import os
    import subprocess
    import sys

    from vaultkeeper.store.fsio import writer_lock

    vault = make_vault({"patterns/registry.md": REGISTRY})
    before = int(counters(vault, "pin-test-clock")[0])
    with writer_lock(vault):
        child = subprocess.Popen(
            [sys.executable, "-m", "vaultkeeper", "--vault", str(vault), "use", "pin-test-clock"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "VAULTKEEPER_TODAY": "2026-12-01"},
        )
        assert child.stderr is not None
        said = child.stderr.readline()  # waits for the child's notice, however long
        assert "waiting for it: the count is not lost" in said, said
        assert child.poll() is None  # still waiting, not failed
    out, err = child.communicate(timeout=600)
    assert child.returncode == 0, (out, err)
    assert f"success count {before} -> {before + 1}" in out
    assert int(counters(vault, "pin-test-clock")[0]) == before + 1


def test_use_reads_the_usage_log_once(
    tmp_path: Path, make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 32 item 10: every ``use`` read the whole usage log twice (once to count,
    once to keep its report's stale section true): 3.6-4.4 s CPU at 15 MB."""
    from click.testing import CliRunner

    from vaultkeeper.cli import cli
    from vaultkeeper.store import uses

    vault = make_vault({"patterns/registry.md": REGISTRY})
    ingest(vault, [session(tmp_path / "old", i, f"2026-0{1 + i % 9}-15") for i in range(20)], NOW)
    runner = CliRunner()
    assert runner.invoke(cli, ["--vault", str(vault), "scan", "--force"]).exit_code == 0
    opened: list[object] = []
    real = uses.read_lines

    def counting(*args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        opened.append(args)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(uses, "read_lines", counting)
    done = runner.invoke(cli, ["--vault", str(vault), "use", "pin-test-clock"])
    assert done.exit_code == 0, done.output
    assert len(opened) == 1, len(opened)
