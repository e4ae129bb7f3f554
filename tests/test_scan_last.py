"""The last scan's report is derived from the files (scan/last.py): after an apply, a `use`
or a hand edit, `report`, `status` and the brief tell the new truth with no scan between,
and deleting the derived store changes no output."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from vaultkeeper.apply.batch import apply_decision, run_batch
from vaultkeeper.apply.decision import Decision
from vaultkeeper.apply.review import NO, YES, review
from vaultkeeper.cli import cli
from vaultkeeper.scan import classify as scan
from vaultkeeper.scan.last import last_report

ALPHA = "### alpha\nAlpha body.\n\n**success count:** 3\n**last used:** 2025-10-01\n"
BETA = "### beta\nBeta body, never reused.\n\n**success count:** 0\n**last used:** 2024-01-01\n"
GAMMA = "### gamma\nGamma.\n\n**success count:** 0\n**last used:** 2024-02-01\n"
REGISTRY = "# Pattern registry\n\n" + ALPHA + "\n" + BETA + "\n" + GAMMA
HELD = (
    "---\nname: flaky\ndescription: d\ntype: memory\nstatus: held_out\nlabel: inferred\n"
    'falsification_condition: "a retry hides a real bug"\nholdout_until: "2025-01-01"\n'
    "provenance: []\n---\nRetry once.\n"
)
MEMORY = "projects/api/memory/flaky.md"


@pytest.fixture
def vault(make_vault: Any, runner: CliRunner) -> Path:
    root: Path = make_vault(
        {
            "patterns/registry.md": REGISTRY,
            MEMORY: HELD,
            "projects/api/notes.md": "---\nname: notes\n---\nline 1\nline 2\n",
        }
    )
    done = runner.invoke(cli, ["--vault", str(root), "scan", "--force"])
    assert done.exit_code == 0, done.output
    assert done.stdout.startswith("SELF-MAINTAIN: prune candidates 2 | promote eligible 1 |")
    return root


def vk(runner: CliRunner, vault: Path, *args: str) -> Any:
    return runner.invoke(cli, ["--vault", str(vault), *args])


def saved(vault: Path) -> dict[str, Any]:
    report = last_report(vault)
    assert report is not None
    return report.to_dict()


def heading_line(vault: Path, name: str) -> int:
    lines = (vault / "patterns/registry.md").read_text().split("\n")
    return lines.index(f"### {name}") + 1


def test_revalidate_then_report_and_status_show_it_gone(vault: Path, runner: CliRunner) -> None:
    done = vk(
        runner, vault, "apply", "revalidate", MEMORY, "--pass",
        "--evidence", "projects/api/notes.md:4",
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    text = vk(runner, vault, "report").stdout.splitlines()
    assert text[0] == "SELF-MAINTAIN: prune candidates 2 | promote eligible 1 | held-out due 0"
    assert not any(MEMORY in line for line in text)
    data = json.loads(vk(runner, vault, "report", "--json").stdout)
    assert data["summary"] == {"prune": 2, "promote": 1, "held_out": 0}
    assert data["held_out"] == []
    status = json.loads(vk(runner, vault, "status", "--json").stdout)
    signals = {s["name"]: s for s in status["signals"]}
    assert signals["held_out_waiting"]["figure"] == 0
    assert signals["held_out_overdue"]["verdict"] == "ok"  # it said fail before the apply


def test_promote_drops_it_and_moves_the_lines_below(vault: Path, runner: CliRunner) -> None:
    before = {c["name"]: c for c in saved(vault)["prune"]}
    done = vk(runner, vault, "apply", "promote", "alpha", "--evidence", "projects/api/notes.md:4")
    assert done.exit_code == 0, done.output
    data = json.loads(vk(runner, vault, "report", "--json").stdout)
    assert data["promote"] == []
    assert data["summary"] == {"prune": 2, "promote": 0, "held_out": 1}
    after = {c["name"]: c for c in data["prune"]}
    # the **promoted:** line pushed beta and gamma down; the report follows the file
    assert after["beta"]["line"] == heading_line(vault, "beta") == before["beta"]["line"] + 1
    assert after["gamma"]["line"] == heading_line(vault, "gamma")
    assert after["beta"]["hash"] == before["beta"]["hash"]
    assert (
        vk(runner, vault, "report")
        .stdout.splitlines()[0]
        .endswith("promote eligible 0 | held-out due 1")
    )


def test_prune_then_restore_brings_the_candidate_back(vault: Path) -> None:
    first = saved(vault)
    done = apply_decision(vault, Decision("prune", "beta"), NOW, confirm=lambda plan: True)
    assert done.outcome == "act"
    gone = saved(vault)
    assert [c["name"] for c in gone["prune"]] == ["gamma"]
    assert gone["prune"][0]["line"] == heading_line(vault, "gamma")
    assert gone["summary"]["prune"] == 1
    back = apply_decision(vault, Decision("restore", done.id or ""), NOW)
    assert back.outcome == "act"
    again = saved(vault)
    assert again["prune"] == first["prune"]  # same order, lines and hashes as the scan's
    assert again["summary"] == first["summary"]


def test_promote_of_a_block_the_report_missed_still_moves_the_lines(vault: Path) -> None:
    # a fourth block counted up by hand after the scan: not in the report, above beta
    registry = vault / "patterns/registry.md"
    text = registry.read_text()
    extra = "### delta\nDelta.\n\n**success count:** 5\n**last used:** 2025-11-01\n\n"
    registry.write_text(text.replace("### beta", extra + "### beta"))
    done = apply_decision(vault, Decision("promote", "delta", "projects/api/notes.md:4"), NOW)
    assert done.outcome == "act", done.reason
    prune = {c["name"]: c["line"] for c in saved(vault)["prune"]}
    assert prune == {"beta": heading_line(vault, "beta"), "gamma": heading_line(vault, "gamma")}


def test_pruning_and_restoring_a_memory_file(vault: Path) -> None:
    done = apply_decision(vault, Decision("prune", MEMORY), NOW, confirm=lambda plan: True)
    assert done.outcome == "act"
    assert saved(vault)["held_out"] == []
    apply_decision(vault, Decision("restore", done.id or ""), NOW)
    [back] = saved(vault)["held_out"]
    assert (back["path"], back["name"], back["line"]) == (MEMORY, "flaky", 8)


def test_skip_and_a_queued_prune_are_marked_not_dropped(vault: Path, runner: CliRunner) -> None:
    skipped = vk(runner, vault, "apply", "skip", "gamma", "--reason", "used weekly")
    assert skipped.exit_code == 0
    queued = vk(runner, vault, "apply", "prune", "beta")  # no terminal: waits for a person
    assert queued.exit_code == 3
    lines = vk(runner, vault, "report").stdout.splitlines()
    assert lines[0].startswith("SELF-MAINTAIN: prune candidates 2 |")  # still candidates
    beta = next(x for x in lines if x.startswith("prune     beta "))
    gamma = next(x for x in lines if x.startswith("prune     gamma "))
    assert "-- waiting for a person: `vaultkeeper review` (ask " in beta
    assert gamma.endswith(f"-- left alone: used weekly ({dt.datetime.now(dt.timezone.utc).date()})")
    status = json.loads(vk(runner, vault, "status", "--json").stdout)
    prune = next(s for s in status["signals"] if s["name"] == "prune_waiting")
    assert prune["figure"] == 0 and "2 more decided since the scan" in prune["detail"]


def test_review_yes_drops_and_no_marks(vault: Path) -> None:
    now = dt.datetime.now(dt.timezone.utc)  # after the scan: a decision since it
    for name in ("beta", "gamma"):
        assert apply_decision(vault, Decision("prune", name), now).outcome == "ask"
    answers = {"beta": YES, "gamma": NO}
    review(vault, now, lambda item: answers[item.ask.target])
    [gamma] = saved(vault)["prune"]
    assert gamma["name"] == "gamma"
    assert gamma["handled"] == f"kept: a person answered no ({now.date()})"


def test_batch_updates_every_decision(vault: Path) -> None:
    batch = [
        {"action": "promote", "target": "alpha", "evidence": "projects/api/notes.md:4"},
        {"action": "revalidate", "target": MEMORY, "result": "fail",
         "evidence": "projects/api/notes.md:5"},
        {"action": "skip", "target": "nothing-like-it", "reason": "x"},  # deferred: no block
    ]  # fmt: skip
    result = run_batch(vault, json.dumps(batch), "b.json", NOW)
    assert [o.outcome for o in result.outcomes] == ["act", "act", "defer"]
    data = saved(vault)
    assert data["summary"] == {"prune": 2, "promote": 0, "held_out": 0}


def test_use_moves_a_block_between_lists(vault: Path, runner: CliRunner) -> None:
    # gamma: count 0, idle -> prune; one use makes it count 1, used today: no list
    assert vk(runner, vault, "use", "gamma").exit_code == 0
    data = saved(vault)
    assert [c["name"] for c in data["prune"]] == ["beta"]
    assert data["summary"] == {"prune": 1, "promote": 1, "held_out": 1}
    # beta used twice: count 2 -> promote eligible, listed in registry order
    vk(runner, vault, "use", "beta")
    vk(runner, vault, "use", "beta")
    data = saved(vault)
    assert [c["name"] for c in data["promote"]] == ["alpha", "beta"]
    assert data["prune"] == [] and data["promote"][1]["count"] == 2


def test_dry_runs_and_refusals_leave_the_report_alone(vault: Path, runner: CliRunner) -> None:
    before = saved(vault)
    vk(runner, vault, "apply", "promote", "alpha", "--evidence", "nope", "--dry-run")
    vk(
        runner,
        vault,
        "apply",
        "promote",
        "alpha",
        "--evidence",
        "projects/api/notes.md:4",
        "--dry-run",
    )
    vk(runner, vault, "apply", "promote", "beta", "--evidence", "projects/api/notes.md:4")
    assert saved(vault) == before


def test_no_scan_no_report(make_vault: Any) -> None:
    root: Path = make_vault({"patterns/registry.md": REGISTRY})
    done = apply_decision(root, Decision("skip", "beta", reason="later"), NOW)
    assert done.outcome == "silence"
    assert last_report(root) is None


NOW = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)


def test_an_apply_during_a_scan_is_not_undone_by_its_report(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = scan.classify_and_keep

    def classify_then_apply(*args: Any, **kwargs: Any) -> Any:
        found = real(*args, **kwargs)  # the files as they were when the scan read them
        done = apply_decision(
            vault, Decision("revalidate", MEMORY, "projects/api/notes.md:4", "pass"), NOW
        )
        assert done.outcome == "act", done.reason
        return found

    monkeypatch.setattr(scan, "classify_and_keep", classify_then_apply)
    outcome = scan.run_scan(vault, now=NOW, env={}, force=True, pid=os.getpid())
    assert outcome.report is not None and len(outcome.report.held_out) == 1  # as it read
    assert saved(vault)["held_out"] == []  # what the files say since
    assert "status: active" in (vault / MEMORY).read_text()


def test_a_lesson_archived_by_hand_is_not_due_at_the_next_status_or_brief(
    vault: Path, runner: CliRunner
) -> None:
    brief = vk(runner, vault, "report", "--brief").stdout
    assert MEMORY in brief
    lesson = vault / MEMORY
    lesson.write_text(lesson.read_text().replace("status: held_out", "status: archived"))
    status = json.loads(vk(runner, vault, "status", "--json").stdout)
    signals = {s["name"]: s for s in status["signals"]}
    assert signals["held_out_waiting"]["figure"] == 0
    assert signals["held_out_overdue"]["verdict"] == "ok"
    brief = vk(runner, vault, "report", "--brief").stdout
    assert "held-out due 0" in brief and MEMORY not in brief


def test_deleting_the_store_changes_no_output(
    vault: Path, runner: CliRunner, tmp_path: Path
) -> None:
    vk(runner, vault, "apply", "skip", "gamma", "--reason", "used weekly")
    vk(runner, vault, "apply", "prune", "beta")  # queued for a person
    other = tmp_path / "other"
    shutil.copytree(vault, other)
    commands = (
        ("status",),
        ("report", "--brief"),
        ("report", "--json"),
        ("apply", "promote", "alpha", "--evidence", "projects/api/notes.md:4"),
        ("report",),
        ("status",),
    )
    for args in commands:
        for name in ("vaultkeeper.db", "vaultkeeper.db-wal", "vaultkeeper.db-shm"):
            (other / "state" / name).unlink(missing_ok=True)
        kept, rebuilt = vk(runner, vault, *args), vk(runner, other, *args)
        assert kept.exit_code == rebuilt.exit_code or args == ("status",), args
        for a, b in ((kept.stdout, rebuilt.stdout), (kept.stderr, rebuilt.stderr)):
            if args == ("status",):  # the lint rows: lint/summary.py's, not this report's
                a, b = _no_lint_rows(a), _no_lint_rows(b)
            a, b = a.replace(str(vault), "V"), b.replace(str(other), "V")
            assert _timeless(a) == _timeless(b), args


def _no_lint_rows(text: str) -> str:
    rows = ("lint errors", "broken or ambiguous links", "orphans", "overall")
    return "\n".join(x for x in text.splitlines() if not any(r in x for r in rows))


def _timeless(text: str) -> str:
    """Without what differs a moment later: ages, clock times and ids."""
    import re

    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "TIME", text)
    text = re.sub(r'"age_seconds": \d+', "AGE", text)
    text = re.sub(r"\d{8}-\d{6}-[0-9a-f]{6}", "ID", text)
    return re.sub(r"\(\d+ (second|minute)s? ago\)", "(AGO)", text)


def test_use_leaves_the_report_as_a_fresh_scan_says(vault: Path, runner: CliRunner) -> None:
    assert vk(runner, vault, "use", "alpha").exit_code == 0
    after_use = saved(vault)
    assert vk(runner, vault, "scan", "--force").exit_code == 0
    fresh = saved(vault)
    for data in (after_use, fresh):
        del data["generated_at"], data["duration_ms"]
    assert after_use == fresh


def test_a_decision_in_the_scans_own_second_is_placed_by_the_journal_not_the_clock(
    vault: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A prune queued before a scan that begins within the same second is not "since the
    scan"; a skip after it in that second is. (Seen in CI: with the second as the rule,
    two copies of one vault gave different reports, by when each ran.)"""
    from vaultkeeper import clock

    tomorrow = dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)
    monkeypatch.setenv("VAULTKEEPER_TODAY", tomorrow.date().isoformat())
    monkeypatch.setattr(clock, "real_now", lambda: tomorrow.replace(microsecond=500_000))

    def line(name: str) -> str:
        lines = vk(runner, vault, "report").stdout.splitlines()
        return next(x for x in lines if x.startswith(f"prune     {name} "))

    assert vk(runner, vault, "apply", "prune", "beta").exit_code == 3  # queued
    assert "waiting for a person" in line("beta")  # since the fixture's scan
    assert vk(runner, vault, "scan", "--force").exit_code == 0  # the same second
    assert "waiting for a person" not in line("beta")  # queued before this scan
    assert vk(runner, vault, "apply", "skip", "gamma", "--reason", "used weekly").exit_code == 0
    assert "left alone: used weekly" in line("gamma")  # after it, in that second


def test_a_reader_that_derived_an_older_scans_report_keeps_the_newer_row(vault: Path) -> None:
    # A reader (status, a brief) that read the state file before a scan finished derives
    # the report as of the previous scan, for seconds on a big vault; its row then
    # replaced the row the scan had just kept, and the next brief derived everything
    # again (the session-end scan's row is what serves the next session's brief).
    import sqlite3

    from vaultkeeper.scan import last, reportrow
    from vaultkeeper.scan.statefile import read_state

    when = last.started(read_state(vault).data)
    assert when is not None
    found = reportrow.inputs(vault)
    assert last._from_rows(vault, when, found) is not None  # the scan's own rows
    last._whole(vault, (when[0] - 60_000, 5), found)  # the late reader, kept where it may
    with sqlite3.connect(vault / "state" / "vaultkeeper.db") as conn:
        assert conn.execute("SELECT started FROM scan_report").fetchall() == [(when[0],)]
    assert last._from_rows(vault, when, found) is not None


def test_a_journal_that_is_a_symlink_is_never_read_through(vault: Path, tmp_path: Path) -> None:
    # The journal travels through git, so it may arrive as a symlink: to a file outside
    # the vault, or to /dev/zero (every report, status and brief then read for ever until
    # memory ran out). Like `log` and every writer, the report's readers refuse the link.
    outside = tmp_path / "elsewhere.jsonl"
    record = {"ts": "2999-01-01T00:00:00Z", "action": "prune", "target": "beta"}
    outside.write_text(json.dumps({**record, "outcome": "ask", "id": "x"}) + "\n")
    journal = vault / "state" / "journal.jsonl"
    journal.unlink(missing_ok=True)
    journal.symlink_to(outside)
    assert [c["handled"] for c in saved(vault)["prune"]] == [None, None]


def test_a_folder_where_the_journal_belongs_is_no_error(vault: Path, runner: CliRunner) -> None:
    # A folder just made at state/journal.jsonl (changed within the racy window) once made
    # report, status and the brief fail with "vaultkeeper: error: 3: Is a directory".
    journal = vault / "state" / "journal.jsonl"
    journal.unlink(missing_ok=True)
    journal.mkdir()
    for args in (["report"], ["status"], ["report", "--brief"]):
        result = vk(runner, vault, *args)
        assert "error:" not in result.stderr and result.stdout, result.output
        assert result.exit_code == (1 if args == ["status"] else 0), result.output  # status: FAIL


def test_a_journal_archived_and_begun_again_since_the_scan_loses_no_decision(
    vault: Path, runner: CliRunner
) -> None:
    """status asks a person to archive a big journal: the new one is not the one the
    scan measured, so its lines are not cut at the old length (review: decisions lost)."""
    assert vk(runner, vault, "apply", "skip", "gamma", "--reason", "weekly").exit_code == 0
    assert vk(runner, vault, "scan", "--force").exit_code == 0
    journal = vault / "state" / "journal.jsonl"
    journal.rename(journal.with_name("journal-2026.jsonl"))  # archived by a person
    assert vk(runner, vault, "apply", "skip", "gamma", "--reason", "used weekly").exit_code == 0
    assert vk(runner, vault, "apply", "prune", "beta").exit_code == 3  # queued
    lines = vk(runner, vault, "report").stdout.splitlines()
    assert any(x.startswith("prune     gamma ") and "left alone: used weekly" in x for x in lines)
    assert any(x.startswith("prune     beta ") and "waiting for a person" in x for x in lines)
