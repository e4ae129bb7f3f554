"""revalidate --reopen (a stale lesson back to a hold-out) and `apply merge` on the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import snapshot

from vaultkeeper.cli import cli

STALE = "projects/api/memory/paginate-with-cursors.md"
ENV = {"VAULTKEEPER_TODAY": "2026-12-01", "VAULTKEEPER_HOLDOUT_DAYS": "14"}


def run(
    runner: CliRunner, vault: Path, *args: str, answer: str | None = None
) -> tuple[int, str, str]:
    result = runner.invoke(cli, ["--vault", str(vault), *args], env=ENV, input=answer)
    return result.exit_code, result.stdout, result.stderr


def merge_yes(
    runner: CliRunner, vault: Path, monkeypatch: pytest.MonkeyPatch, *args: str
) -> tuple[int, str, str]:
    """`apply merge ARGS` as at a terminal where the person answers y (a real pty run is in
    test_apply_merge.py); the prompt goes to stdout, so --json output follows it."""
    with monkeypatch.context() as m:
        m.setattr("vaultkeeper.apply.review.is_terminal", lambda *_: True)
        code, out, err = run(runner, vault, "apply", "merge", *args, answer="y\n")
    return code, out[out.rindex("\n{") + 1 :] if "\n{" in out else out, err


def test_reopen_moves_a_stale_lesson_to_held_out_with_two_one_line_edits(
    sample: Path, runner: CliRunner
) -> None:
    before = (sample / STALE).read_text().splitlines()
    code, out, _ = run(
        runner, sample, "apply", "revalidate", STALE, "--reopen", "--evidence", "https://x.org/1"
    )
    assert code == 0, out
    assert out == (
        f"act: revalidate {STALE}: status active -> held_out, holdout_until 2026-12-15: "
        "the next re-check decides whether it is still true\n"
    )
    after = (sample / STALE).read_text().splitlines()
    diff = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
    assert diff == [
        ("status: active", "status: held_out"),
        ('holdout_until: "2025-03-01"', 'holdout_until: "2026-12-15"'),
    ]
    record = json.loads((sample / "state/journal.jsonl").read_text().splitlines()[-1])
    assert (record["action"], record["outcome"], record["reopen"]) == ("revalidate", "act", True)
    # the scan now waits for the new hold-out instead of calling it stale
    code, out, _ = run(runner, sample, "scan", "--force")
    assert "stale: re-validate" not in out


def test_reopen_is_refused_for_a_held_out_entry_and_without_evidence(
    sample: Path, runner: CliRunner
) -> None:
    before = snapshot(sample)
    held = "projects/api/memory/flaky-ci-retries.md"
    code, _, err = run(
        runner, sample, "apply", "revalidate", held, "--reopen", "--evidence", "https://x.org/1"
    )
    assert code == 1 and "only an active entry is re-opened" in err
    code, _, err = run(runner, sample, "apply", "revalidate", STALE, "--reopen")
    assert code == 2 and "missing option --evidence" in err
    assert snapshot(sample) == before


def test_reopen_never_demotes_a_validated_override(make_vault, runner: CliRunner) -> None:
    text = (
        "---\nname: m\ndescription: d\ntype: memory\nstatus: active\nlabel: validated-override\n"
        'holdout_until: "2020-01-01"\n---\nbody\n'
    )
    vault = make_vault({"projects/p/memory/m.md": text})
    code, _, err = run(
        runner, vault, "apply", "revalidate", "projects/p/memory/m.md", "--reopen",
        "--evidence", "https://x.org/1",
    )  # fmt: skip
    assert code == 1 and "never demoted automatically" in err
    assert (vault / "projects/p/memory/m.md").read_text() == text


def test_merge_on_the_command_line_then_restore(
    sample: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = snapshot(sample)  # sample_vault's _index.md is as `index` writes it
    code, out, _ = merge_yes(
        runner, sample, monkeypatch, "pin-test-clock", "pin-the-clock-in-tests",
        "--evidence", "https://x.org/pr/9", "--json",
    )  # fmt: skip
    assert code == 0, out
    outcome = json.loads(out)
    assert (outcome["action"], outcome["target"], outcome["drop"]) == (
        "merge", "pin-test-clock", "pin-the-clock-in-tests",
    )  # fmt: skip
    code, out, _ = run(runner, sample, "scan", "--force")
    assert "duplicate " not in out
    assert "promote   pin-test-clock -- success count 3, last used 2026-11-18" in out
    code, out, _ = run(runner, sample, "restore", outcome["id"])
    assert code == 0, out
    assert snapshot(sample) == before


def test_merge_needs_two_names_and_evidence(sample: Path, runner: CliRunner) -> None:
    code, _, err = run(runner, sample, "apply", "merge", "pin-test-clock", "--evidence", "u")
    assert code == 2 and "missing argument DROP" in err


def test_the_saved_report_follows_merge_reopen_and_restore(
    sample: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultkeeper.scan.last import last_report

    def saved() -> tuple[list[tuple[str, str]], list[str]]:
        report = last_report(sample)
        assert report is not None
        pairs = [(p.target("a"), p.target("b")) for p in report.duplicates]
        return pairs, [s.path for s in report.stale]

    assert run(runner, sample, "scan", "--force")[0] == 0
    assert saved() == ([("pin-test-clock", "pin-the-clock-in-tests")], [STALE])
    code, out, _ = merge_yes(
        runner, sample, monkeypatch, "pin-test-clock", "pin-the-clock-in-tests",
        "--evidence", "https://x.org/pr/9", "--json",
    )  # fmt: skip
    assert code == 0, out
    code, _, _ = run(
        runner, sample, "apply", "revalidate", STALE, "--reopen", "--evidence", "https://x.org/1"
    )
    assert code == 0
    assert saved() == ([], [])  # no scan in between: the applies kept it true
    assert run(runner, sample, "restore", json.loads(out)["id"])[0] == 0
    assert saved() == ([("pin-test-clock", "pin-the-clock-in-tests")], [])
