"""``report`` (text and --json) gains the recall's adherence: per lesson shown, times
shown and of them followed by a citation or a read; noise; lessons the recall missed.

Showings come from the hook script run with the recorded Claude Code payload, uses from
``ingest`` of the fixture transcript (it reads flaky-ci-retries and cites use-utc), as
tests/test_store_adherence.py does for ``status``.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests import transcript_fixtures as tf
from tests.conftest import MakeVault, recall_on, run_vaultkeeper
from tests.test_learn_ingest import NOW, REGISTRY, claude_transcript
from tests.test_recall_moment import CLAUDE, lesson, recorded, run
from vaultkeeper.learn.ingest import ingest

FLAKY = "projects/api/memory/flaky-ci-retries.md"
UTC = "projects/api/memory/use-utc.md"
PAGES = "projects/api/memory/paginate.md"


def vault_shown(make_vault: MakeVault, tmp_path: Path, prompt: str) -> Path:
    vault = recall_on(
        make_vault(
            {
                "patterns/registry.md": REGISTRY,
                FLAKY: lesson("flaky-ci-retries", "Retry a flaky CI job once"),
                UTC: lesson("use-utc", "Store timestamps in UTC"),
                PAGES: lesson("paginate-with-cursors", "Paginate list endpoints with cursors"),
            }
        )
    )
    assert run_vaultkeeper(vault, "scan", "--force").returncode == 0
    base = recorded(CLAUDE, "02-UserPromptSubmit.json", cwd="/HOME/api")
    assert run(vault, {**base, "session_id": tf.SESSION, "prompt": prompt})[1]
    for other in ("s-a", "s-b", "s-c"):  # shown three times, never used: noise
        page = {**base, "session_id": other, "prompt": "paginate the list endpoints"}
        assert PAGES in run(vault, page)[1]
    ingest(vault, [claude_transcript(tmp_path, vault)], NOW)  # reads FLAKY, cites UTC
    return vault


def test_report_text_and_json_say_shown_followed_noise_and_missed(
    make_vault: MakeVault, tmp_path: Path
) -> None:
    vault = vault_shown(make_vault, tmp_path, "why is the flaky CI job failing?")
    done = run_vaultkeeper(vault, "report")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    at = lines.index("recall: 4 showings of 2 lessons, 0 followed by a citation; 1 noise, 1 missed")
    assert lines[at + 1 :] == [
        f"shown     {PAGES} -- shown 3, then cited 0, read 0 -- noise: shown 3+ times, "
        "never used after; narrow its paths: or reword it",
        f"shown     {FLAKY} -- shown 1, then cited 0, read 1",
        f"missed    {UTC} -- cited in 1 session where the recall served other lessons",
    ]
    data = json.loads(run_vaultkeeper(vault, "report", "--json").stdout)
    assert data["recall"] == {
        "lessons": [
            {"path": PAGES, "shown": 3, "cited_after": 0, "read_after": 0, "noise": True},
            {"path": FLAKY, "shown": 1, "cited_after": 0, "read_after": 1, "noise": False},
        ],
        "noise": [PAGES],
        "missed": [{"path": UTC, "sessions": 1}],
    }


def test_a_lesson_shown_then_cited_counts_as_followed(
    make_vault: MakeVault, tmp_path: Path
) -> None:
    vault = vault_shown(make_vault, tmp_path, "the flaky CI job and timestamps in UTC")
    data = json.loads(run_vaultkeeper(vault, "report", "--json").stdout)["recall"]
    rows = {r["path"]: (r["shown"], r["cited_after"], r["read_after"]) for r in data["lessons"]}
    assert rows == {PAGES: (3, 0, 0), FLAKY: (1, 0, 1), UTC: (1, 1, 0)}
    assert data["missed"] == []  # shown where it was cited: not missed
    text = run_vaultkeeper(vault, "report").stdout
    assert "recall: 5 showings of 3 lessons, 1 followed by a citation; 1 noise, 0 missed" in text


def test_no_recall_section_while_nothing_was_shown(make_vault: MakeVault) -> None:
    vault = recall_on(make_vault({FLAKY: lesson("flaky-ci-retries", "Retry a flaky CI job once")}))
    assert run_vaultkeeper(vault, "scan", "--force").returncode == 0
    assert "recall" not in run_vaultkeeper(vault, "report").stdout
    data = json.loads(run_vaultkeeper(vault, "report", "--json").stdout)
    assert data["recall"] == {"lessons": [], "noise": [], "missed": []}
