"""apply batch: each decision gated on its own, JSON outcomes, idempotent on replay."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import snapshot

from vaultkeeper.apply import journal as queue
from vaultkeeper.apply.batch import run_batch
from vaultkeeper.apply.review import review
from vaultkeeper.cli import cli

NOW = dt.datetime(2026, 12, 1, 9, 30, tzinfo=dt.timezone.utc)
REGISTRY = (
    "# Pattern registry\n\n"
    "### alpha\nAlpha body.\n\n**success count:** 3\n**last used:** 2026-10-01\n\n"
    "### beta\nBeta body.\n\n**success count:** 0\n**last used:** 2025-01-01\n"
)
HELD = (
    "---\nname: held\nstatus: held_out\nlabel: inferred\n"
    'holdout_until: "2026-11-01"\nprovenance: []\n---\nbody\n'
)
GONE = "---\nname: gone\nstatus: active\nlabel: inferred\nprovenance: []\n---\nbody\n"
RECEIPT = "projects/p/research/notes.md:1"
DECISIONS = [
    {"action": "promote", "target": "alpha", "evidence": RECEIPT},
    {"action": "prune", "target": "beta"},
    {
        "action": "revalidate",
        "target": "projects/p/memory/held.md",
        "result": "pass",
        "evidence": RECEIPT,
    },
    {"action": "reactivate", "target": "projects/p/memory/gone.md", "evidence": RECEIPT},
    {"action": "skip", "target": "alpha", "reason": "fine as it is"},
    {"action": "promote", "target": "alpha", "evidence": RECEIPT, "colour": "blue"},
]


@pytest.fixture
def vault(make_vault) -> Path:
    return make_vault(
        {
            "patterns/registry.md": REGISTRY,
            "projects/p/memory/held.md": HELD,
            "projects/p/memory/gone.md": GONE,
            "projects/p/research/notes.md": "a\n",
        }
    )


def run(runner: CliRunner, vault: Path, decisions: object, *extra: str):
    result = runner.invoke(
        cli, ["--vault", str(vault), "apply", "batch", "-", *extra], input=json.dumps(decisions)
    )
    return result, json.loads(result.stdout) if result.stdout.strip() else None


def test_each_decision_is_gated_on_its_own(vault: Path, runner: CliRunner) -> None:
    result, outcomes = run(runner, vault, DECISIONS)
    assert result.exit_code == 3  # one waits for a person
    assert [o["outcome"] for o in outcomes] == ["act", "ask", "act", "defer", "silence", "defer"]
    assert "status is active: only an archived entry" in outcomes[3]["reason"]
    assert "unknown field(s) colour" in outcomes[5]["reason"]
    assert "**promoted:**" in (vault / "patterns/registry.md").read_text()
    assert "status: active" in (vault / "projects/p/memory/held.md").read_text()
    lines = (vault / "state/journal.jsonl").read_text().splitlines()
    assert len(lines) == len(DECISIONS)


def test_replaying_a_batch_changes_nothing_and_says_so(vault: Path, runner: CliRunner) -> None:
    run(runner, vault, DECISIONS)
    after = snapshot(vault)
    result, outcomes = run(runner, vault, DECISIONS)
    assert snapshot(vault) == after
    assert result.exit_code == 3
    assert [o["outcome"] for o in outcomes] == [
        "silence",
        "ask",
        "silence",
        "defer",
        "silence",
        "defer",
    ]
    assert outcomes[0]["reason"].startswith("already applied")
    assert outcomes[2]["reason"].startswith("already applied")
    assert "already queued" in outcomes[1]["reason"]
    assert len(queue.pending(vault)) == 1


def test_replay_after_the_person_said_yes(vault: Path, runner: CliRunner) -> None:
    batch = [
        {"action": "prune", "target": "beta"},
        {"action": "promote", "target": "alpha", "evidence": RECEIPT},
    ]
    run(runner, vault, batch)
    assert review(vault, NOW, lambda item: "yes").outcomes[0].outcome == "act"
    result, outcomes = run(runner, vault, batch)
    assert result.exit_code == 0
    assert [o["outcome"] for o in outcomes] == ["silence", "silence"]
    assert outcomes[0]["reason"].startswith("already applied: pruned on")


def test_exit_codes(vault: Path, runner: CliRunner) -> None:
    ok, _ = run(runner, vault, [{"action": "skip", "target": "alpha", "reason": "r"}])
    refused, _ = run(runner, vault, [{"action": "promote", "target": "beta", "evidence": RECEIPT}])
    empty, outcomes = run(runner, vault, [])
    assert (ok.exit_code, refused.exit_code, empty.exit_code, outcomes) == (0, 1, 0, [])


def test_dry_run_writes_nothing(vault: Path, runner: CliRunner) -> None:
    before = snapshot(vault, skip_state=False)
    result, outcomes = run(runner, vault, DECISIONS, "--dry-run")
    assert snapshot(vault, skip_state=False) == before
    assert outcomes[0]["dry_run"] and "+**promoted:** " in outcomes[0]["diff"]
    assert outcomes[1]["outcome"] == "act" and "-### beta" in outcomes[1]["diff"]


@pytest.mark.parametrize(
    ("payload", "why"),
    [("not json", "not valid JSON"), ('{"action": "skip"}', "expected a JSON list")],
)
def test_bad_batches_are_refused_whole(
    vault: Path, runner: CliRunner, payload: str, why: str
) -> None:
    before = snapshot(vault, skip_state=False)
    result = runner.invoke(cli, ["--vault", str(vault), "apply", "batch", "-"], input=payload)
    assert result.exit_code == 1 and why in result.stderr
    assert snapshot(vault, skip_state=False) == before


@pytest.mark.parametrize(
    ("item", "why"),
    [
        ("just a string", "not a JSON object"),
        ({"action": "delete", "target": "alpha"}, "action must be one of"),
        ({"action": "restore", "target": "x"}, "action must be one of"),
        ({"action": "skip"}, "target is required"),
        ({"action": "skip", "target": "alpha", "reason": 3}, "reason must be a string"),
        (
            {"action": "revalidate", "target": "projects/p/memory/held.md", "evidence": RECEIPT},
            "pass or fail",
        ),
        ({"action": "skip", "target": "alpha"}, "skip needs --reason"),
        ({"action": "skip", "target": "nope", "reason": "r"}, "no ### nope block"),
    ],
)
def test_malformed_items_are_deferred_and_journaled(vault: Path, item: object, why: str) -> None:
    result = run_batch(vault, json.dumps([item]), "b.json", NOW)
    [outcome] = result.outcomes
    assert outcome.outcome == "defer" and why in outcome.reason
    record = json.loads((vault / "state/journal.jsonl").read_text().splitlines()[-1])
    assert record["outcome"] == "defer"


def test_batch_from_a_file_with_skills_dir_relative_to_the_vault(
    vault: Path, runner: CliRunner, tmp_path: Path
) -> None:
    batch = tmp_path / "decisions.json"
    batch.write_text(
        json.dumps(
            [
                {
                    "action": "promote",
                    "target": "alpha",
                    "evidence": RECEIPT,
                    "skills_dir": "agent-skills",
                }
            ]
        )
    )
    result = runner.invoke(cli, ["--vault", str(vault), "apply", "batch", str(batch)])
    assert result.exit_code == 0, result.output
    assert (vault / "agent-skills/alpha/SKILL.md").is_file()
    assert "-> [[agent-skills/alpha/SKILL]]" in (vault / "patterns/registry.md").read_text()


@pytest.mark.parametrize("key", ["target", "evidence", "skills_dir"])
def test_a_nul_in_a_field_is_deferred_not_a_traceback(
    vault: Path, runner: CliRunner, key: str
) -> None:
    item = {"action": "promote", "target": "alpha", "evidence": RECEIPT, key: "a\x00b"}
    result, outcomes = run(runner, vault, [item])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)  # no ValueError
    assert [o["reason"] for o in outcomes] == [
        f"<stdin>[0]: {key} must not contain a NUL character"
    ]


def test_an_os_error_is_a_deferred_outcome_and_the_batch_goes_on(
    vault: Path, runner: CliRunner, tmp_path: Path
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the skills folder should be\n")
    decisions = [
        {"action": "promote", "target": "alpha", "evidence": RECEIPT, "skills_dir": str(blocker)},
        {"action": "skip", "target": "alpha", "reason": "next week"},
    ]
    result, outcomes = run(runner, vault, decisions)
    assert result.exit_code == 1
    assert [o["outcome"] for o in outcomes] == ["defer", "silence"]
    assert outcomes[0]["reason"].startswith(str(blocker))
    assert "**promoted:**" not in (vault / "patterns/registry.md").read_text()
    journal = (vault / "state/journal.jsonl").read_text().splitlines()
    assert [json.loads(line)["outcome"] for line in journal] == ["defer", "silence"]


@pytest.mark.parametrize(
    ("payload", "why"),
    [
        (b"[\xff]", "<stdin>: not UTF-8 text (byte 0xff); nothing applied"),  # was a traceback
        (b"[" * 100_000, "<stdin>: not valid JSON (nested too deeply)"),  # was RecursionError
    ],
)
def test_undecodable_batches_are_refused_in_one_line(
    vault: Path, runner: CliRunner, payload: bytes, why: str
) -> None:
    before = snapshot(vault, skip_state=False)
    result = runner.invoke(cli, ["--vault", str(vault), "apply", "batch", "-"], input=payload)
    assert result.exit_code == 1
    assert json.loads(result.stdout) == {"error": why, "exit": 1}  # batch always prints JSON
    assert result.stderr == f"vaultkeeper: error: {why}\n"
    assert snapshot(vault, skip_state=False) == before


def test_a_batch_file_with_a_bom_is_read(vault: Path, runner: CliRunner, tmp_path: Path) -> None:
    batch = tmp_path / "notepad.json"  # Windows editors start UTF-8 files with a BOM
    batch.write_bytes(b"\xef\xbb\xbf" + json.dumps([DECISIONS[4]]).encode())
    result = runner.invoke(cli, ["--vault", str(vault), "apply", "batch", str(batch)])
    assert result.exit_code == 0, result.output
    assert [o["outcome"] for o in json.loads(result.stdout)] == ["silence"]


def test_a_write_refused_part_way_says_stopped_not_nothing_changed(
    vault: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultkeeper.store import fsio

    registry = vault / "patterns/registry.md"
    real_replace = fsio.os.replace

    def replace(src: str, dst: str) -> None:  # the skill lands, the registry edit does not
        if Path(dst) == registry:
            raise PermissionError(1, "Operation not permitted", src)
        real_replace(src, dst)

    monkeypatch.setattr(fsio.os, "replace", replace)
    args = ["--vault", str(vault), "apply", "promote", "alpha", "--evidence", RECEIPT]
    result = runner.invoke(cli, args)
    assert result.exit_code == 1
    assert result.stderr == (
        f"vaultkeeper: error: promote alpha: {registry}: Operation not permitted; stopped "
        "part-way, run it again once that is fixed (stopped)\n"
    )  # was "(deferred; nothing changed)" while skills/alpha/SKILL.md had been written
    assert (vault / "skills/alpha/SKILL.md").is_file()
    monkeypatch.setattr(fsio.os, "replace", real_replace)
    again = runner.invoke(cli, args)  # once fixed, running it again completes it
    assert again.exit_code == 0 and "merged the evidence" in again.stdout
    assert "**promoted:**" in registry.read_text()


def test_a_decision_that_cannot_be_journaled_says_so(
    vault: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(path: Path, line: str, **kw: object) -> None:
        raise PermissionError(1, "Operation not permitted", str(path))

    monkeypatch.setattr("vaultkeeper.apply.journal.append_line", refused)
    result, outcomes = run(runner, vault, [DECISIONS[4], DECISIONS[4]])
    assert result.exit_code == 0  # the batch went on: both outcomes printed
    journal = vault / "state/journal.jsonl"
    assert [o["reason"] for o in outcomes] == [
        f"left alone: fine as it is; NOT journaled: {journal}: Operation not permitted"
    ] * 2


def test_malformed_json_is_a_json_error_on_stdout(vault: Path, runner: CliRunner) -> None:
    before = snapshot(vault)
    result = runner.invoke(cli, ["--vault", str(vault), "apply", "batch", "-"], input="[{")
    assert result.exit_code == 1
    assert json.loads(result.stdout) == {
        "error": result.stderr.removeprefix("vaultkeeper: error: ").rstrip("\n"),
        "exit": 1,
    }
    assert "not valid JSON" in result.stdout and snapshot(vault) == before
