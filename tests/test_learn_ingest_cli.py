"""The command line of the learning loop: ingest, report --brief --cwd, scan --as-of."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from tests import transcript_fixtures as tf
from tests.conftest import snapshot
from vaultkeeper import config
from vaultkeeper.cli import cli


def vk(vault: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, ["--vault", str(vault), *args], env=env)


def transcript(tmp_path: Path, vault: Path) -> Path:
    return tf.write(
        tmp_path / f"{tf.SESSION}.jsonl",
        [
            tf.claude("user", "remember [[patterns/registry#grep-the-config-value]]"),
            tf.claude(
                "assistant",
                [
                    tf.text("Using [[patterns/registry#pin-test-clock|pinned clock]]."),
                    tf.text("And [[patterns/registry#pin-tset-clock]]."),
                    tf.tool(
                        "Read", file_path=str(vault / "projects/api/memory/flaky-ci-retries.md")
                    ),
                ],
            ),
        ],
        tail='{"type": "assistant", "mess',
    )


def test_ingest_prints_what_it_counted_and_recorded(tmp_path: Path, sample: Path) -> None:
    path = transcript(tmp_path, sample)
    result = vk(sample, "ingest", str(path))
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout.splitlines() == [
        f"read {path}: claude-code session {tf.SESSION} (1 unreadable line skipped)",
        "counted pin-test-clock: success count 2 -> 3, last used 2026-11-30 "
        f"(patterns/registry.md); receipt {path}:2",
        f"unknown pin-tset-clock: cited at {path}:2 but not in the registry (a typo or a "
        "pruned pattern?); not counted",
        "recorded 2 new uses (1 cite, 1 read); 0 already recorded",
    ]
    log = vk(sample, "log").stdout.splitlines()
    assert log[-1].endswith(
        f"act     use        pin-test-clock: cite in claude-code session {tf.SESSION} on "
        "2026-11-30: success count 2 -> 3"
    )
    again = vk(sample, "ingest", str(path))
    assert again.exit_code == 0
    assert again.stdout.splitlines()[-1] == "recorded 0 new uses; 2 already recorded"


def test_ingest_dry_run_and_json_write_nothing(tmp_path: Path, sample: Path) -> None:
    path = transcript(tmp_path, sample)
    before = snapshot(sample, skip_state=False)
    result = vk(sample, "ingest", "--dry-run", "--json", str(path))
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["dry_run"] is True
    assert [(c["name"], c["count_after"]) for c in data["counted"]] == [("pin-test-clock", 3)]
    assert [f["session"] for f in data["files"]] == [tf.SESSION]
    assert [e["target"] for e in data["unknown"]] == ["pin-tset-clock"]
    text = vk(sample, "ingest", "--dry-run", str(path))
    assert text.stdout.splitlines()[1].startswith(
        "would count pin-test-clock: success count 2 -> 3"
    )
    assert text.stdout.splitlines()[-1].startswith("would record 2 new uses")
    assert snapshot(sample, skip_state=False) == before


def test_ingest_reports_a_missing_file_and_reads_the_rest(tmp_path: Path, sample: Path) -> None:
    path = transcript(tmp_path, sample)
    result = vk(sample, "ingest", str(tmp_path / "gone.jsonl"), str(path))
    assert result.exit_code == 1
    assert (
        result.stderr
        == f"vaultkeeper: error: {tmp_path / 'gone.jsonl'}: No such file or directory\n"
    )
    assert "counted pin-test-clock" in result.stdout
    assert vk(sample, "ingest").exit_code == 2  # no transcript given


def test_ingest_honours_vaultkeeper_today(tmp_path: Path, sample: Path) -> None:
    line = json.loads(tf.claude("assistant", [tf.text("[[patterns/registry#pin-test-clock]]")]))
    del line["timestamp"]  # no date in the transcript: the use is dated today
    path = tf.write(tmp_path / "s.jsonl", [json.dumps(line)])
    result = vk(sample, "ingest", str(path), env={config.ENV_TODAY: "2027-02-03"})
    assert result.exit_code == 0, result.output
    assert "last used 2027-02-03" in result.stdout
    assert "**last used:** 2027-02-03" in (sample / "patterns/registry.md").read_text()
    journal = (sample / "state" / config.JOURNAL_FILE).read_text().splitlines()
    assert json.loads(journal[-1])["ts"].startswith("2027-02-03T")


def test_promote_takes_a_receipt_ingest_recorded(tmp_path: Path, sample: Path) -> None:
    path = transcript(tmp_path, sample)
    vk(sample, "ingest", str(path))
    scanned = vk(sample, "scan", "--force")
    assert scanned.exit_code == 0
    brief = vk(sample, "report", "--brief", "--cwd", str(tmp_path / "api"))
    line = next(x for x in brief.stdout.splitlines() if x.startswith("- pin-test-clock: "))
    assert line.endswith(f"; latest receipt: {path}:2")
    path.unlink()
    done = vk(sample, "apply", "promote", "pin-test-clock", "--evidence", f"{path}:2")
    assert done.exit_code == 0, done.output
    assert "**promoted:**" in (sample / "patterns/registry.md").read_text()


def test_report_brief_cwd_names_the_project(tmp_path: Path, sample: Path) -> None:
    api = vk(sample, "report", "--brief", "--cwd", str(tmp_path / "work" / "API"))
    web = vk(sample, "report", "--brief", "--cwd", str(tmp_path / "web"))
    assert (
        api.stdout.splitlines()[5] == "Lessons of project api (projects/api/memory/), active first:"
    )
    assert (
        web.stdout.splitlines()[5] == "Lessons of project web (projects/web/memory/), active first:"
    )
    wrong = vk(sample, "report", "--cwd", str(tmp_path))
    assert (wrong.exit_code, wrong.stderr) == (
        2,
        "vaultkeeper: error: report: --cwd goes with --brief (it names the session's project) "
        "(see vaultkeeper report --help)\n",
    )


def test_scan_as_of_previews_and_writes_nothing(sample: Path) -> None:
    before = snapshot(sample, skip_state=False)
    now = vk(sample, "scan", "--as-of", "2026-12-01")
    later = vk(sample, "scan", "--as-of", "2027-06-01")
    assert now.exit_code == later.exit_code == 0
    assert now.stdout.splitlines()[0] == (
        "SELF-MAINTAIN: prune candidates 1 | promote eligible 2 | held-out due 1"
    )
    # half a year on, every pattern with count 0 has idled past 90 days
    assert later.stdout.splitlines()[0] == (
        "SELF-MAINTAIN: prune candidates 2 | promote eligible 2 | held-out due 1"
    )
    assert snapshot(sample, skip_state=False) == before  # no report, no state, no lock
    bad = vk(sample, "scan", "--as-of", "tomorrow")
    assert (bad.exit_code, bad.stderr) == (
        2,
        "vaultkeeper: error: --as-of='tomorrow': not a date; use YYYY-MM-DD\n",
    )


def test_the_saved_report_follows_an_ingest(tmp_path: Path, sample: Path) -> None:
    assert vk(sample, "scan", "--force").exit_code == 0
    said = tf.claude("assistant", [tf.text("[[patterns/registry#grep-the-config-value]]")])
    path = tf.write(tmp_path / "s.jsonl", [said])
    assert vk(sample, "ingest", str(path)).exit_code == 0
    shown = vk(sample, "report").stdout.splitlines()
    assert shown[0] == "SELF-MAINTAIN: prune candidates 1 | promote eligible 3 | held-out due 1"


def test_ingest_counts_are_singular_for_one_and_plural_for_more(
    tmp_path: Path, sample: Path
) -> None:
    one = tf.write(
        tmp_path / "one.jsonl",
        [
            tf.claude(
                "assistant", [tf.text("Using [[patterns/registry#pin-test-clock]].")], session="one"
            )
        ],
        tail='{"type": "assistant", "mess',
    )
    result = vk(sample, "ingest", str(one))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"read {one}: claude-code session one (1 unreadable line skipped)"
    assert lines[-1] == "recorded 1 new use (1 cite); 0 already recorded"
    notes = ["projects/api/memory/flaky-ci-retries.md", "patterns/registry.md"]
    two = tf.write(
        tmp_path / "two.jsonl",
        [
            tf.claude(
                "assistant",
                [tf.tool("Read", file_path=str(sample / rel)) for rel in notes],
                session="two",
            ),
            '{"type": "assistant", "mess',
            '{"type": "assistant", "mess',
        ],
    )
    again = vk(sample, "ingest", str(one), str(two))
    assert again.exit_code == 0, again.output
    lines = again.stdout.splitlines()
    assert lines[1] == f"read {two}: claude-code session two (2 unreadable lines skipped)"
    assert lines[-1] == "recorded 2 new uses (2 reads); 1 already recorded"


def _session_running_use(tmp_path: Path, vault: Path, name: str, day: str = "2026-11-30") -> Path:
    """A session whose agent ran `vaultkeeper use` in a shell and linked the pattern too."""
    return tf.write(
        tmp_path / f"{name}.jsonl",
        [
            tf.claude(
                "assistant",
                [
                    tf.tool("Bash", command=f"vaultkeeper --vault {vault} use pin-test-clock"),
                    tf.text("Reused [[patterns/registry#pin-test-clock]]."),
                ],
                session=name,
                ts=f"{day}T10:00:00.000Z",
            )
        ],
    )


def test_a_session_s_own_vaultkeeper_use_is_not_counted_again_by_ingest(
    tmp_path: Path, sample: Path
) -> None:
    today = {"VAULTKEEPER_TODAY": "2026-11-30"}
    used = vk(sample, "use", "pin-test-clock", env=today)
    assert used.stdout.startswith("pin-test-clock: success count 2 -> 3,"), used.output
    path = _session_running_use(tmp_path, sample, "ran-use")
    result = vk(sample, "ingest", str(path), env=today)
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout.splitlines()[1:] == [
        "used pin-test-clock with `vaultkeeper use`: counted then, not again",
        "recorded 1 new use (1 cite); 0 already recorded",
    ]
    assert "**success count:** 3\n" in (sample / "patterns/registry.md").read_text()
    # a session whose `use` left no line in the log near its day (it failed) counts once
    other = _session_running_use(tmp_path, sample, "use-failed", day="2026-11-20")
    again = vk(sample, "ingest", str(other), env=today)
    assert again.stdout.splitlines()[1].startswith("counted pin-test-clock: success count 3 -> 4,")


def test_ingest_of_a_folder_reads_the_transcripts_under_it(tmp_path: Path, sample: Path) -> None:
    project = tmp_path / "claude-projects" / "-home-me-src-api"
    project.mkdir(parents=True)
    path = transcript(project, sample)
    sub = project / tf.SESSION / "subagents"
    sub.mkdir(parents=True)
    tf.write(sub / "agent-1.jsonl", [tf.claude("assistant", [tf.text("no citation")])])
    (project / "notes.txt").write_text("not a transcript\n")
    result = vk(sample, "ingest", str(project.parent))  # was: "not a regular file"
    assert (result.exit_code, result.stderr) == (0, ""), result.output
    read = [line for line in result.stdout.splitlines() if line.startswith("read ")]
    assert read == [
        f"read {path}: claude-code session {tf.SESSION} (1 unreadable line skipped)",
        f"read {sub / 'agent-1.jsonl'}: claude-code session {tf.SESSION}",
    ]  # the sub-agent once, with its parent's session
    assert "counted pin-test-clock: success count 2 -> 3" in result.stdout


def test_ingest_of_a_folder_without_transcripts_is_refused(tmp_path: Path, sample: Path) -> None:
    empty = tmp_path / "nothing-here"
    empty.mkdir()
    before = snapshot(sample, skip_state=False)
    result = vk(sample, "ingest", str(empty))
    assert result.exit_code == 1
    assert (
        result.stderr
        == f"vaultkeeper: error: {empty}: a folder with no transcript (*.jsonl) in it\n"
    )
    assert snapshot(sample, skip_state=False) == before
