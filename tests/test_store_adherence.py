"""Adherence: the lessons the recall hook showed, and whether the session then used them.

The showings come from the hook script run with the recorded Claude Code payload (its
session id set to the fixture transcript's), the uses from ``ingest`` of that fixture
transcript, and the figures from ``status --json``: exact counts, noise and missed.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests import transcript_fixtures as tf
from tests.conftest import MakeVault, run_vaultkeeper
from tests.test_learn_ingest import NOW, REGISTRY, claude_transcript
from tests.test_recall_moment import CLAUDE, build, lesson, recorded, run
from vaultkeeper.learn.ingest import ingest
from vaultkeeper.store.adherence import adherence

FLAKY = "projects/api/memory/flaky-ci-retries.md"
UTC = "projects/api/memory/use-utc.md"
PAGES = "projects/api/memory/paginate.md"


def test_shown_then_read_cited_elsewhere_and_noise_are_exact(
    make_vault: MakeVault, tmp_path: Path
) -> None:
    vault = make_vault(
        {
            "patterns/registry.md": REGISTRY,
            FLAKY: lesson("flaky-ci-retries", "Retry a flaky CI job once"),
            UTC: lesson("use-utc", "Store timestamps in UTC"),
            PAGES: lesson("paginate-with-cursors", "Paginate list endpoints with cursors"),
        }
    )
    build(vault)
    base = recorded(CLAUDE, "02-UserPromptSubmit.json", cwd="/HOME/api")
    session = {**base, "session_id": tf.SESSION, "prompt": "why is the flaky CI job failing?"}
    assert FLAKY in run(vault, session)[1]
    for other in ("s-a", "s-b", "s-c"):  # shown three times, never used: noise
        page = {**base, "session_id": other, "prompt": "paginate the list endpoints"}
        assert PAGES in run(vault, page)[1]
    ingest(vault, [claude_transcript(tmp_path, vault)], NOW)  # reads FLAKY, cites UTC
    found = adherence(vault)
    assert [(s.target, s.shown, s.cited, s.read, s.noise) for s in found.lessons] == [
        (PAGES, 3, 0, 0, True),
        (FLAKY, 1, 0, 1, False),
    ]
    assert found.missed == ((UTC, 1),)  # cited in a session the recall served, not shown
    done = run_vaultkeeper(vault, "status", "--json")
    rows = {s["name"]: s for s in json.loads(done.stdout)["signals"]}
    assert rows[f"recall:{PAGES}"]["verdict"] == "warn"
    assert rows[f"recall:{PAGES}"]["shown"] == "shown 3, then cited 0, read 0"
    assert rows[f"recall:{FLAKY}"]["shown"] == "shown 1, then cited 0, read 1"
    assert rows["recall:missed"]["figure"] == 1 and UTC in rows["recall:missed"]["detail"]


def test_a_citation_before_the_showing_does_not_count(make_vault: MakeVault) -> None:
    from vaultkeeper.store.adherence import measure
    from vaultkeeper.store.uses import UseEvent

    day = "2026-12-01"
    events = [
        UseEvent("s", "claude-code", "cite", FLAKY, day, "t:1"),
        UseEvent("s", "claude-code", "shown", FLAKY, day, "recall:prompt:p"),
        UseEvent("s", "claude-code", "shown", UTC, day, "recall:file:f"),
        UseEvent("s", "claude-code", "cite", UTC, day, "t:9"),
    ]
    found = measure(events)
    assert [(s.target, s.cited) for s in found.lessons] == [(FLAKY, 0), (UTC, 1)]
    assert found.missed == ()
