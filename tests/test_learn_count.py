"""The usage log (uses.py) and learn.record: counted once per session, replay-safe."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from tests.conftest import MakeVault, snapshot
from vaultkeeper import config
from vaultkeeper.apply.journal import read
from vaultkeeper.learn.count import record
from vaultkeeper.store.uses import UseEvent, append_events, last_seen, read_events, uses_path

NOW = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.timezone.utc)


def ev(session: str, kind: str, target: str, day: str, line: int = 1) -> UseEvent:
    return UseEvent(
        session, "claude-code", kind, target, dt.date.fromisoformat(day), f"/t.jsonl:{line}"
    )


def block_lines(vault: Path, name: str) -> list[str]:
    lines = (vault / "patterns/registry.md").read_text().split("\n")
    at = lines.index(f"### {name}")
    return [x for x in lines[at : at + 6] if x.startswith("**")]


def test_read_events_skips_bad_lines_and_accepts_string_dates(tmp_path: Path) -> None:
    log = tmp_path / config.STATE_DIR / config.USES_LOG_FILE
    log.parent.mkdir()
    good = {
        "session": "s",
        "source": "mcp",
        "kind": "cite",
        "target": "a",
        "date": "2026-11-30",
        "receipt": "mcp:1",
    }
    log.write_bytes(
        b"not json\n"
        + json.dumps(good).encode()
        + b"\n[1]\n"
        + json.dumps({**good, "kind": "nope"}).encode()
        + b"\n"
        + json.dumps({**good, "date": "2026-02-30"}).encode()
        + b"\n"
        + b"x" * 200_000
        + b"\n"
        + json.dumps({**good, "date": "2026-12-01", "target": "b"}).encode()
        + b'\n{"session": "half'
    )
    events = list(read_events(tmp_path))
    assert [(e.target, e.date) for e in events] == [
        ("a", dt.date(2026, 11, 30)),
        ("b", dt.date(2026, 12, 1)),
    ]
    assert last_seen(tmp_path) == {"a": dt.date(2026, 11, 30), "b": dt.date(2026, 12, 1)}


def test_append_events_writes_one_line_each(tmp_path: Path) -> None:
    append_events(tmp_path, [ev("s", "read", "projects/a.md", "2026-11-30")])
    append_events(tmp_path, [ev("s", "cite", "x", "2026-12-01", 7)])
    assert uses_path(tmp_path).read_text().splitlines() == [
        '{"session": "s", "source": "claude-code", "kind": "read", "target": "projects/a.md", '
        '"date": "2026-11-30", "receipt": "/t.jsonl:1"}',
        '{"session": "s", "source": "claude-code", "kind": "cite", "target": "x", '
        '"date": "2026-12-01", "receipt": "/t.jsonl:7"}',
    ]


def test_record_counts_once_per_session_and_pattern(sample: Path) -> None:
    events = [
        ev("s1", "cite", "pin-test-clock", "2026-11-30", 3),
        ev("s1", "skill", "pin-test-clock", "2026-11-30", 9),
        ev("s1", "cite", "pin-test-clock", "2026-11-30", 12),
        ev("s2", "cite", "pin-test-clock", "2026-12-01", 4),
        ev("s2", "read", "projects/api/memory/use-utc-everywhere.md", "2026-12-01", 5),
        ev("s2", "cite", "no-such-pattern", "2026-12-01", 6),
    ]
    result = record(sample, events, NOW)
    assert block_lines(sample, "pin-test-clock") == [
        "**success count:** 4",
        "**last used:** 2026-12-01",
    ]
    assert [
        (c.name, c.sessions, c.count_before, c.count_after, c.receipt) for c in result.counted
    ] == [("pin-test-clock", ("s1", "s2"), 2, 4, "/t.jsonl:4")]
    assert [e.target for e in result.unknown] == ["no-such-pattern"]
    assert result.repeated == 1  # the second cite in s1
    logged = [(e.session, e.kind, e.target) for e in read_events(sample)]
    assert logged == [
        ("s1", "cite", "pin-test-clock"),
        ("s1", "skill", "pin-test-clock"),
        ("s2", "cite", "pin-test-clock"),
        ("s2", "read", "projects/api/memory/use-utc-everywhere.md"),
    ]
    uses = [r for r in read(sample).records if r["action"] == "use"]
    assert [(r["outcome"], r["session"], r["evidence"]) for r in uses] == [
        ("act", "s1", "/t.jsonl:3"),
        ("act", "s2", "/t.jsonl:4"),
    ]
    assert uses[0]["reason"] == (
        "cite in claude-code session s1 on 2026-11-30: success count 2 -> 3"
    )
    # the same events again, and a longer run of them: nothing counted twice
    before = snapshot(sample, skip_state=False)
    again = record(sample, events, NOW)
    assert again.counted == () and again.recorded == ()
    assert snapshot(sample, skip_state=False) == before
    more = record(sample, [*events, ev("s3", "cite", "pin-test-clock", "2026-11-01", 2)], NOW)
    assert [(c.count_before, c.count_after, c.last_used) for c in more.counted] == [
        (4, 5, "2026-12-01")  # an older session never moves last used backwards
    ]


def test_dry_run_writes_nothing(sample: Path) -> None:
    before = snapshot(sample, skip_state=False)
    result = record(sample, [ev("s1", "cite", "pin-test-clock", "2026-11-30")], NOW, dry_run=True)
    assert [(c.count_before, c.count_after) for c in result.counted] == [(2, 3)]
    assert len(result.recorded) == 1 and result.dry_run
    assert snapshot(sample, skip_state=False) == before


def test_unreadable_count_is_refused_and_not_logged(make_vault: MakeVault) -> None:
    vault = make_vault({"patterns/registry.md": "# R\n\n### bad\n**success count:** many\n"})
    result = record(vault, [ev("s1", "cite", "bad", "2026-11-30")], NOW)
    assert result.counted == () and result.recorded == ()
    assert result.refused == (
        "patterns/registry.md:4: ### bad: success count 'many' is not a whole number; fix it first",
    )
    assert list(read_events(vault)) == []
    (vault / "patterns/registry.md").write_text("# R\n\n### bad\n**success count:** 1\n")
    fixed = record(vault, [ev("s1", "cite", "bad", "2026-11-30")], NOW)
    assert [(c.count_before, c.count_after) for c in fixed.counted] == [(1, 2)]
    assert (vault / "patterns/registry.md").read_text() == (
        "# R\n\n### bad\n**success count:** 2\n**last used:** 2026-11-30\n"
    )
