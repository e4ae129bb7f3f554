"""apply merge: counts add, links follow, DROP goes to .trash/, restore undoes all of it.

These tests give the person's yes as the terminal prompt would (``confirm=yes``); the
gate itself (no yes, no merge) is tested at the end of this file.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import run_vaultkeeper, snapshot
from pty_helper import run_on_pty, vaultkeeper_argv

from vaultkeeper import config
from vaultkeeper.apply import journal as queue
from vaultkeeper.apply.batch import apply_decision
from vaultkeeper.apply.decision import Decision, Outcome
from vaultkeeper.apply.merge import MergePlan, carry_out
from vaultkeeper.apply.review import NO, review
from vaultkeeper.cli import cli
from vaultkeeper.errors import GateRefused
from vaultkeeper.index.build import build_index
from vaultkeeper.registry.blocks import find_block

NOW = dt.datetime(2026, 12, 1, 9, 30, tzinfo=dt.timezone.utc)
RECEIPT = "https://example.com/review/42"

KEEP_BLOCK = (
    "### pin-test-clock\nInject now into date logic in tests.\n\n"
    "**success count:** 2\n**last used:** 2026-10-03\n"
)
DROP_BLOCK = (
    "### pin-the-clock\nPin the clock in tests; see [[projects/p/memory/a]].\n"
    "Second line of its text.\n\n**success count:** 3\n**last used:** 2026-11-18\n"
)
OTHER_BLOCK = "### other\nSomething else.\n\n**success count:** 0\n**last used:** 2026-11-01\n"


def memory(name: str, desc: str, body: str, status: str = "active") -> str:
    return (
        f"---\nname: {name}\ndescription: {desc}\ntype: memory\nstatus: {status}\n"
        f'label: rule\nholdout_until: "2026-01-01"\nprovenance: ["{RECEIPT}"]\n---\n\n'
        f"# {name}\n\n{body}\n"
    )


def yes(plan: object) -> bool:
    return True  # the person typed y at the terminal prompt


def merge(vault: Path, keep: str, drop: str, **kw: object) -> Outcome:
    decision = Decision("merge", keep, evidence=kw.pop("evidence", RECEIPT), drop=drop)
    kw.setdefault("confirm", yes)
    return apply_decision(vault, decision, NOW, **kw)  # type: ignore[arg-type]


def restore(vault: Path, trash_id: str) -> Outcome:
    return apply_decision(vault, Decision("restore", trash_id), NOW)


def journal(vault: Path) -> list[dict[str, object]]:
    lines = (vault / "state/journal.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


@pytest.fixture
def vault(make_vault) -> Path:
    root = make_vault(
        {
            "patterns/registry.md": "# Registry\n\n" + KEEP_BLOCK + "\n" + OTHER_BLOCK,
            "patterns/more.md": "# More\n\n" + DROP_BLOCK,
            "projects/p/memory/a.md": memory(
                "a",
                "Retry a flaky CI job once",
                "Uses [[patterns/more#pin-the-clock|the clock pattern]] and\n"
                "| t | ![[more#pin-the-clock\\|x]] |\nand [[b]] and [[projects/p/memory/b#Why]].",
            ),
            "projects/p/memory/b.md": memory(
                "b", "Retry flaky CI jobs once", "Also see [[a]].\n\n## Why\n\nBecause."
            ),
            "projects/q/memory/c.md": memory("c", "Retry a flaky CI job once", "q's copy."),
            "projects/p/research/r.md": '---\nname: r\nrelated: "[[b]]"\n---\nsee [[b|B]]\n',
        }
    )
    build_index(root)  # the index as `index` writes it, so restore can match it byte for byte
    return root


def test_blocks_merge_counts_last_used_text_and_links(vault: Path) -> None:
    before = snapshot(vault)
    done = merge(vault, "pin-test-clock", "pin-the-clock")
    assert done.outcome == "act", done.reason
    assert "3 link(s) rewritten" not in done.reason and "2 link(s) rewritten" in done.reason
    keep = find_block(vault, "pin-test-clock")
    assert (keep.count, keep.last_used) == (5, dt.date(2026, 11, 18))
    assert keep.text == (
        "### pin-test-clock\nInject now into date logic in tests.\n\n"
        "**success count:** 5\n**last used:** 2026-11-18\n\n"
        f"#### {config.MERGED_FROM} pin-the-clock\n"
        "Pin the clock in tests; see [[projects/p/memory/a]].\nSecond line of its text.\n"
    )
    assert (vault / "patterns/more.md").read_text() == "# More\n"
    a = (vault / "projects/p/memory/a.md").read_text()
    assert "[[patterns/registry#pin-test-clock|the clock pattern]]" in a
    assert "![[patterns/registry#pin-test-clock\\|x]]" in a
    # only the link lines changed in a.md
    old = before["projects/p/memory/a.md"].decode().splitlines()
    changed = [i for i, (x, y) in enumerate(zip(old, a.splitlines(), strict=True)) if x != y]
    assert len(changed) == 2
    # the trash holds DROP's lines; the journal the decision
    trash_id = str(done.id)
    kept = (vault / config.TRASH_DIR / trash_id / "pin-the-clock.md").read_text()
    assert kept.strip("\n") == DROP_BLOCK.strip("\n")
    [record] = journal(vault)
    assert (record["action"], record["target"], record["drop"], record["outcome"]) == (
        "merge", "pin-test-clock", "pin-the-clock", "act",
    )  # fmt: skip
    assert record["evidence"] == RECEIPT
    # restore puts every file back byte for byte, the index included
    back = restore(vault, trash_id)
    assert back.outcome == "act", back.reason
    assert snapshot(vault) == before


def test_blocks_of_one_file_merge_and_restore_byte_for_byte(make_vault) -> None:
    text = "# Registry\r\n\r\n" + (DROP_BLOCK + "\n" + KEEP_BLOCK).replace("\n", "\r\n")
    vault = make_vault({"patterns/registry.md": b"\xef\xbb\xbf" + text.encode()})
    build_index(vault)
    before = snapshot(vault)
    done = merge(vault, "pin-test-clock", "pin-the-clock")
    assert done.outcome == "act", done.reason
    raw = (vault / "patterns/registry.md").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf# Registry\r\n\r\n### pin-test-clock\r\n")
    assert b"**success count:** 5\r\n**last used:** 2026-11-18\r\n" in raw
    assert b"### pin-the-clock" not in raw
    assert restore(vault, str(done.id)).outcome == "act"
    assert snapshot(vault) == before


def test_memory_files_merge_links_follow_and_restore_byte_for_byte(vault: Path) -> None:
    before = snapshot(vault)
    done = merge(vault, "projects/p/memory/a.md", "projects/p/memory/b")
    assert done.outcome == "act", done.reason
    assert not (vault / "projects/p/memory/b.md").exists()
    a = (vault / "projects/p/memory/a.md").read_text()
    assert a.startswith(before["projects/p/memory/a.md"].decode().split("and [[b]]")[0])
    assert "and [[projects/p/memory/a]] and [[projects/p/memory/a#Why]]." in a
    assert a.endswith(
        f"\n## {config.MERGED_FROM} b\n\nDescription: Retry flaky CI jobs once\n"
        f"Label: rule\nStatus: active\nProvenance: {RECEIPT}\n\n"
        "# b\n\nAlso see [[a]].\n\n## Why\n\nBecause.\n"
    )
    r = (vault / "projects/p/research/r.md").read_text()
    assert (
        r
        == '---\nname: r\nrelated: "[[projects/p/memory/a]]"\n---\nsee [[projects/p/memory/a|B]]\n'
    )
    assert "[[projects/p/memory/b]]" not in (vault / config.INDEX_FILE).read_text()
    assert restore(vault, str(done.id)).outcome == "act"
    assert snapshot(vault) == before


@pytest.mark.parametrize(
    ("keep", "drop", "why"),
    [
        ("pin-test-clock", "projects/p/memory/b.md", "not one of each"),
        ("projects/p/memory/a.md", "projects/q/memory/c.md", "within one project only"),
        ("pin-test-clock", "pin-test-clock", "the same entry"),
        ("projects/p/research/r.md", "projects/p/memory/b.md", "memory files"),
        ("pin-test-clock", "no-such-block", "no ### no-such-block block"),
    ],
)
def test_refusals_write_nothing_and_are_journaled(
    vault: Path, keep: str, drop: str, why: str
) -> None:
    before = snapshot(vault)
    done = merge(vault, keep, drop)
    assert done.outcome == "defer" and why in done.reason, done.reason
    assert done.exit_code == 1
    assert snapshot(vault) == before
    assert journal(vault)[-1]["outcome"] == "defer"


def test_no_evidence_no_merge(vault: Path) -> None:
    before = snapshot(vault)
    done = merge(vault, "pin-test-clock", "pin-the-clock", evidence=None)
    assert done.outcome == "defer" and "no evidence" in done.reason
    assert snapshot(vault) == before


def test_a_promoted_drop_and_an_archived_entry_are_refused(make_vault) -> None:
    promoted = DROP_BLOCK + "**promoted:** 2026-11-20 -> [[skills/pin-the-clock/SKILL]]\n"
    vault = make_vault(
        {
            "patterns/registry.md": "# R\n\n" + KEEP_BLOCK + "\n" + promoted,
            "projects/p/memory/a.md": memory("a", "x", "y"),
            "projects/p/memory/z.md": memory("z", "x", "y", status="archived"),
        }
    )
    before = snapshot(vault)
    assert "promoted to a skill" in merge(vault, "pin-test-clock", "pin-the-clock").reason
    assert "archived" in merge(vault, "projects/p/memory/a.md", "projects/p/memory/z.md").reason
    assert snapshot(vault) == before


def test_dry_run_shows_the_diff_and_writes_nothing(vault: Path) -> None:
    before = snapshot(vault, skip_state=False)
    done = merge(vault, "pin-test-clock", "pin-the-clock", dry_run=True)
    assert done.outcome == "act" and done.dry_run
    assert "+**success count:** 5" in done.diff and "-### pin-the-clock" in done.diff
    assert snapshot(vault, skip_state=False) == before


def test_replaying_a_merge_changes_nothing(vault: Path) -> None:
    assert merge(vault, "pin-test-clock", "pin-the-clock").outcome == "act"
    after = snapshot(vault)
    again = merge(vault, "pin-test-clock", "pin-the-clock")
    assert again.outcome == "silence" and "already applied" in again.reason
    assert snapshot(vault) == after


def test_restore_refuses_when_the_merged_part_was_edited_and_restores_nothing(
    vault: Path,
) -> None:
    done = merge(vault, "pin-test-clock", "pin-the-clock")
    registry = vault / "patterns/registry.md"
    text = registry.read_text()
    registry.write_text(text.replace("Second line of its text.", "Reworded by a person."))
    changed = snapshot(vault)
    back = restore(vault, str(done.id))
    assert back.outcome == "defer" and "was edited since, where the merge wrote" in back.reason
    assert snapshot(vault) == changed


def test_a_batch_merges_and_replaying_it_changes_nothing(vault: Path) -> None:
    from vaultkeeper.apply.batch import run_batch

    text = json.dumps(
        [
            {
                "action": "merge",
                "target": "pin-test-clock",
                "drop": "pin-the-clock",
                "evidence": RECEIPT,
            }
        ]
    )
    first = run_batch(vault, text, "b.json", NOW, confirm=yes)
    assert [o.outcome for o in first.outcomes] == ["act"] and first.exit_code == 0
    after = snapshot(vault)
    again = run_batch(vault, text, "b.json", NOW, confirm=yes)
    assert [o.outcome for o in again.outcomes] == ["silence"]
    assert snapshot(vault) == after


# -- the gate: merging takes DROP out of the vault, so only a person's yes merges ----------

PROMPT = "[y/N]:"
SAMPLE_KEEP, SAMPLE_DROP = "pin-test-clock", "pin-the-clock-in-tests"
MERGE_ARGS = ["apply", "merge", SAMPLE_KEEP, SAMPLE_DROP, "--evidence", RECEIPT]


def agent_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "VAULTKEEPER_VAULT"}
    return {**env, **extra}


def test_without_a_person_merge_queues_exits_3_and_changes_nothing(
    vault: Path, runner: CliRunner
) -> None:
    before = snapshot(vault)
    args = ["apply", "merge", "pin-test-clock", "pin-the-clock", "--evidence", RECEIPT]
    result = runner.invoke(cli, ["--vault", str(vault), *args])
    assert result.exit_code == 3, result.output
    [line] = result.stdout.splitlines()  # one line, saying what to run
    assert line.startswith("ask: merge pin-test-clock: merging takes pin-the-clock out")
    assert "a person must run `vaultkeeper review`" in line
    assert snapshot(vault) == before
    assert not (vault / config.TRASH_DIR).exists()
    [ask] = queue.pending(vault)
    assert (ask.action, ask.target, ask.drop, ask.evidence) == (
        "merge", "pin-test-clock", "pin-the-clock", RECEIPT,
    )  # fmt: skip
    [record] = journal(vault)
    assert (record["action"], record["outcome"], record["drop"], record["id"]) == (
        "merge", "ask", "pin-the-clock", ask.id,
    )  # fmt: skip
    again = runner.invoke(cli, ["--vault", str(vault), *args])
    assert again.exit_code == 3 and f"already queued as {ask.id}" in again.stdout
    assert len(queue.pending(vault)) == 1


def test_the_library_without_confirm_never_merges(vault: Path) -> None:
    before = snapshot(vault)
    done = merge(vault, "projects/p/memory/a.md", "projects/p/memory/b.md", confirm=None)
    assert (done.outcome, done.exit_code) == ("ask", 3)
    assert snapshot(vault) == before


ENVS = [
    {"VAULTKEEPER_YES": "1"}, {"VAULTKEEPER_CONFIRM": "yes"}, {"VAULTKEEPER_ASSUME_YES": "1"},
    {"YES": "1", "CI": "true"}, {"TERM": "xterm-256color", "PS1": "$ "},
    {"VAULTKEEPER_TODAY": "2026-12-01", "VAULTKEEPER_HOLDOUT_DAYS": "0"},
]  # fmt: skip


@pytest.mark.parametrize("extra", ENVS)
def test_an_agent_shell_piping_yes_with_any_env_never_merges(
    sample: Path, extra: dict[str, str]
) -> None:
    assert run_vaultkeeper(sample, "scan", "--force").returncode in (0, 1)  # listed as dups
    before = snapshot(sample)
    proc = subprocess.run(
        [*vaultkeeper_argv(), "--vault", str(sample), *MERGE_ARGS],
        input="y\nyes\n", capture_output=True, text=True, env=agent_env(**extra), timeout=60,
    )  # fmt: skip
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "vaultkeeper review" in proc.stdout
    assert snapshot(sample) == before


@pytest.mark.parametrize("flag", ["--yes", "-y", "--force", "--confirm", "--no-input"])
def test_no_flag_bypasses_the_person(vault: Path, runner: CliRunner, flag: str) -> None:
    before = snapshot(vault, skip_state=False)
    args = ["apply", "merge", "pin-test-clock", "pin-the-clock", "--evidence", RECEIPT, flag]
    result = runner.invoke(cli, ["--vault", str(vault), *args])
    assert result.exit_code == 2
    assert snapshot(vault, skip_state=False) == before


def test_a_batch_from_an_agent_queues_its_merges(vault: Path, runner: CliRunner) -> None:
    item = {"action": "merge", "target": "pin-test-clock", "drop": "pin-the-clock"}
    plain = json.dumps([{**item, "evidence": RECEIPT}])
    forged = json.dumps([{**item, "evidence": RECEIPT, "confirm": "yes"}])
    before = snapshot(vault)
    result = runner.invoke(cli, ["--vault", str(vault), "apply", "batch", "-"], input=plain)
    assert result.exit_code == 3
    assert [o["outcome"] for o in json.loads(result.stdout)] == ["ask"]
    result = runner.invoke(cli, ["--vault", str(vault), "apply", "batch", "-"], input=forged)
    [out] = json.loads(result.stdout)
    assert out["outcome"] == "defer" and "unknown field(s) confirm" in out["reason"]
    assert snapshot(vault) == before


def test_a_scan_listed_pair_still_waits_for_the_person(sample: Path) -> None:
    assert run_vaultkeeper(sample, "scan", "--force").returncode in (0, 1)
    before = snapshot(sample)
    decision = Decision("merge", SAMPLE_KEEP, RECEIPT, drop=SAMPLE_DROP)
    assert apply_decision(sample, decision, NOW).outcome == "ask"
    assert snapshot(sample) == before
    shown: list[str] = []

    def person(plan: MergePlan) -> bool:
        shown.append(plan.title)
        return False  # the person answers no

    kept = apply_decision(sample, decision, NOW, confirm=person)
    assert kept.outcome == "silence" and "kept both" in kept.reason
    assert "The scan listed them as possible duplicates (similarity" in shown[0]
    assert snapshot(sample) == before


def test_a_pair_the_scan_did_not_list_is_said_so_before_the_yes(vault: Path) -> None:
    assert run_vaultkeeper(vault, "scan", "--force").returncode in (0, 1)
    shown: list[str] = []
    merge(vault, "pin-test-clock", "other", confirm=lambda plan: shown.append(plan.title))
    assert "The scan did NOT list these two as possible duplicates" in shown[0]


def test_the_yes_holds_only_for_the_diff_shown(vault: Path) -> None:
    def person_while_keep_changes(plan: MergePlan) -> bool:
        registry = vault / "patterns/registry.md"
        registry.write_text(registry.read_text().replace("Inject now", "Inject the clock"))
        return True

    changed = merge(vault, "pin-test-clock", "pin-the-clock", confirm=person_while_keep_changes)
    assert changed.outcome == "defer" and "changed after the merge was shown" in changed.reason
    assert (vault / "patterns/more.md").read_text() == "# More\n\n" + DROP_BLOCK
    decision = Decision("merge", "pin-test-clock", RECEIPT, drop="pin-the-clock")
    with pytest.raises(GateRefused, match="nothing merged"):
        carry_out(vault, decision, NOW, "0" * 64, "a person answered yes")


def test_yes_on_a_terminal_merges_and_no_keeps_both(sample: Path) -> None:
    before = snapshot(sample)
    code, screen = run_on_pty(["--vault", str(sample), *MERGE_ARGS], ["n"], PROMPT)
    assert code == 0 and "silence: merge pin-test-clock: kept both" in screen, screen
    assert snapshot(sample) == before
    code, screen = run_on_pty(["--vault", str(sample), *MERGE_ARGS], ["y"], PROMPT)
    assert code == 0, screen
    assert screen.index("-### pin-the-clock-in-tests") < screen.index(PROMPT)  # diff first
    assert "act: merge pin-test-clock: a person answered yes: merged" in screen
    assert find_block(sample, SAMPLE_KEEP).count == 3
    [record] = [r for r in journal(sample) if r["outcome"] == "act"]
    assert record["confirmed_via"] == config.CONFIRMED_VIA_TERMINAL


def test_a_queued_merge_is_carried_out_by_a_yes_at_review(sample: Path, runner: CliRunner) -> None:
    assert runner.invoke(cli, ["--vault", str(sample), *MERGE_ARGS]).exit_code == 3
    listed = runner.invoke(cli, ["--vault", str(sample), "review", "--list"]).stdout
    assert f"merge {SAMPLE_DROP} into {SAMPLE_KEEP}:" in listed
    code, screen = run_on_pty(["--vault", str(sample), "review"], ["y"], "[q]uit:")
    assert code == 0, screen
    assert "-### pin-the-clock-in-tests" in screen and "0 still waiting" in screen
    assert "a person answered yes at review: merged" in screen
    assert find_block(sample, SAMPLE_KEEP).count == 3
    assert queue.pending(sample) == []


def test_a_no_at_review_keeps_both(sample: Path, runner: CliRunner) -> None:
    assert runner.invoke(cli, ["--vault", str(sample), *MERGE_ARGS]).exit_code == 3
    before = snapshot(sample)
    result = review(sample, NOW, lambda item: NO)
    assert [o.outcome for o in result.outcomes] == ["silence"] and result.remaining == 0
    assert snapshot(sample) == before
    assert journal(sample)[-1]["drop"] == SAMPLE_DROP


def test_dry_run_needs_no_person_and_writes_nothing(vault: Path, runner: CliRunner) -> None:
    before = snapshot(vault, skip_state=False)
    args = ["apply", "merge", "pin-test-clock", "pin-the-clock", "--evidence", RECEIPT]
    result = runner.invoke(cli, ["--vault", str(vault), *args, "--dry-run"])
    assert result.exit_code == 0 and "+**success count:** 5" in result.stdout
    assert snapshot(vault, skip_state=False) == before


def test_a_queued_merge_leaves_keeps_own_candidates_as_they_are(
    sample: Path, runner: CliRunner
) -> None:
    from vaultkeeper.scan.last import last_report

    assert run_vaultkeeper(sample, "scan", "--force").returncode in (0, 1)
    assert runner.invoke(cli, ["--vault", str(sample), *MERGE_ARGS]).exit_code == 3
    report = last_report(sample)
    assert report is not None
    [keep] = [c for c in report.promote if c.name == SAMPLE_KEEP]
    assert keep.handled is None  # KEEP's promotion is not what waits for the person
    assert [(p.target("a"), p.target("b")) for p in report.duplicates] == [
        (SAMPLE_KEEP, SAMPLE_DROP)
    ]


@pytest.mark.parametrize("drop", ["projects/p/memory/b", "pin-the-clock"])
def test_a_note_that_is_not_utf8_linking_to_drop_refuses_the_merge_and_lint_names_it(
    vault: Path, drop: str
) -> None:
    """Issue 32 item 15: a merge left ``[[DROP]]`` links in a note that is not valid
    UTF-8 (it cannot be read as text, so its links were never rewritten) and lint said
    only "not UTF-8". The merge is refused before anything changes, naming the note and
    line; and once DROP is gone some other way, lint names the broken link there."""
    from vaultkeeper.lint import lint_vault

    keep = "projects/p/memory/a.md" if drop.startswith("projects") else "pin-test-clock"
    link = "[[b]]" if drop.startswith("projects") else "[[more#pin-the-clock]]"
    odd = vault / "projects/p/research/odd.md"
    odd.write_bytes(b"---\nname: odd\n---\n\nCaf\xe9 notes.\nSee " + link.encode() + b".\n")
    before = snapshot(vault)
    done = merge(vault, keep, drop)
    assert done.outcome == "defer", done.reason
    assert f"projects/p/research/odd.md:6 links to what the merge takes away ({link})" in (
        done.reason
    )
    assert "not UTF-8 (byte 0xe9)" in done.reason
    assert snapshot(vault) == before
    # DROP gone by hand: lint names the link left in the note it cannot decode
    if drop.startswith("projects"):
        (vault / "projects/p/memory/b.md").unlink()
        code = "VK301"
    else:
        more = vault / "patterns/more.md"
        more.write_text(more.read_text().replace("### pin-the-clock", "### renamed"))
        code = "VK305"
    found = [
        (f.code, f.line)
        for f in lint_vault(vault, select=["VK001", "VK3"]).findings
        if f.path == "projects/p/research/odd.md"
    ]
    assert ("VK001", 5) in found and (code, 6) in found, found


def _queued(vault: Path, keep: str, drop: str) -> tuple[str, str, str | None]:
    """A merge queued without a person: its outcome, its reason, the digest asked about."""
    done = merge(vault, keep, drop, confirm=None)  # asked again: "already queued as"
    return done.outcome, done.reason.replace("already queued", "queued"), done.hash_before


@pytest.mark.parametrize(
    ("keep", "drop", "link"),
    [
        ("projects/p/memory/a.md", "projects/p/memory/b.md", "[[b]]"),
        ("pin-test-clock", "pin-the-clock", "[[more#pin-the-clock]]"),
    ],
)
def test_a_queued_merge_is_the_same_with_and_without_the_store_after_hand_edits(
    vault: Path, monkeypatch: pytest.MonkeyPatch, keep: str, drop: str, link: str
) -> None:
    """Each note's link names are kept in the store by its stat key, so a merge reads
    only the notes changed since; a hand edit adding or removing a link to DROP is seen
    at once: the digest queued and the refusals are those of a merge with no store."""
    import sqlite3

    from vaultkeeper.store import db

    monkeypatch.setattr(db, "RACY_NS", -(10**12))  # every file settled: its row is kept
    base = db.path_of(vault)

    def both() -> tuple[str, str, str | None]:
        kept = _queued(vault, keep, drop)
        with sqlite3.connect(base) as conn:
            assert conn.execute("SELECT count(*) FROM link_names").fetchone()[0] > 3
        for name in (base.name, base.name + "-wal", base.name + "-shm"):
            (base.parent / name).unlink(missing_ok=True)
        assert kept == _queued(vault, keep, drop)  # made anew from the files: identical
        return kept

    first = both()
    assert first[0] == "ask"
    research = vault / "projects/p/research/r.md"
    research.write_text(research.read_text() + f"and {link} again\n")  # a link added
    added = both()
    assert added[0] == "ask" and added[2] != first[2]
    research.write_text(research.read_text().replace(f"and {link} again\n", ""))
    assert both() == first  # and removed
    note = vault / "projects/p/memory/a.md"
    note.write_text(note.read_text().replace("[[b]] and ", "").replace("![[more#", "![[other#"))
    removed = both()
    assert removed[0] == "ask" and removed[2] not in (first[2], added[2])
    odd = vault / "projects/p/research/odd.md"
    odd.write_bytes(b"Caf\xe9 notes.\nSee " + link.encode() + b".\n")  # not UTF-8: refused
    refused = both()
    assert refused[0] == "defer"
    where = "projects/p/research/odd.md:2"
    assert f"{where} links to what the merge takes away ({link})" in refused[1]
