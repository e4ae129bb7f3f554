"""``apply supersede OLD --by NEW`` and its undo through ``apply reactivate OLD``."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from tests.conftest import MakeVault, snapshot
from vaultkeeper import config
from vaultkeeper.apply.batch import apply_decision, run_batch
from vaultkeeper.apply.decision import Decision, Outcome
from vaultkeeper.index.build import build_index
from vaultkeeper.store.links import Resolver
from vaultkeeper.store.model import read_note
from vaultkeeper.upkeep.supersession import is_superseded, supersedes

NOW = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.timezone.utc)
OLD = "projects/web/memory/webpack-build.md"
NEW = "projects/web/memory/vite-build.md"
RECEIPT = f"{NEW}:1"


def note(name: str, *, status: str | None = "active", extra: str = "", nl: str = "\n") -> str:
    lines = [
        "---",
        f"name: {name}",
        f"description: how {name} works",
        "type: memory",
        *([f"status: {status}"] if status is not None else []),
        "label: rule  # weight 2x",
        "provenance: []",
        *extra.splitlines(),
        "---",
        "",
        f"# {name}",
        "",
        "Body text.",
    ]
    return nl.join(lines) + nl


def vault_of(make_vault: MakeVault, old: str, new: str, **more: str) -> Path:
    vault = make_vault({OLD: old, NEW: new, **more})
    build_index(vault)
    return vault


def act(vault: Path, action: str, target: str, **kw: str | None) -> Outcome:
    return apply_decision(vault, Decision(action, target, **kw), NOW)  # type: ignore[arg-type]


NEW_FORMS = {
    "no supersedes key": "",
    "an empty flow list": "supersedes: []",
    "a flow list": 'supersedes: ["[[projects/web/memory/grunt-build]]"]',
    "a block list": 'supersedes:\n  - "[[projects/web/memory/grunt-build]]"',
}
OLD_FORMS = {"active": "active", "held_out": "held_out", "no status key": None}


@pytest.mark.parametrize("new_form", NEW_FORMS, ids=list(NEW_FORMS))
@pytest.mark.parametrize("old_status", OLD_FORMS, ids=list(OLD_FORMS))
@pytest.mark.parametrize("nl", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_supersede_then_reactivate_restores_every_byte(
    make_vault: MakeVault, new_form: str, old_status: str, nl: str
) -> None:
    old = note("webpack-build", status=OLD_FORMS[old_status], nl=nl)
    new = note("vite-build", extra=NEW_FORMS[new_form], nl=nl)
    vault = vault_of(make_vault, old, new)
    before = snapshot(vault)
    done = act(vault, "supersede", OLD, by=NEW, evidence=RECEIPT)
    assert done.outcome == "act", done.reason
    old_after = read_note(vault, vault / OLD)
    assert old_after.meta["superseded_by"] == "[[projects/web/memory/vite-build]]"
    assert old_after.meta["status"] == "archived"
    assert (
        "[[projects/web/memory/webpack-build]]" in read_note(vault, vault / NEW).meta["supersedes"]
    )
    undone = act(vault, "reactivate", OLD, evidence=RECEIPT)
    assert undone.outcome == "act", undone.reason
    assert snapshot(vault) == before


def _changed_lines(before: str, after: str) -> tuple[list[str], list[str]]:
    a, b = before.splitlines(), after.splitlines()
    return [x for x in a if x not in b], [x for x in b if x not in a]


def test_each_side_is_a_one_line_edit(make_vault: MakeVault) -> None:
    vault = vault_of(make_vault, note("webpack-build"), note("vite-build"))
    old_before, new_before = (vault / OLD).read_text(), (vault / NEW).read_text()
    act(vault, "supersede", OLD, by=NEW, evidence=RECEIPT)
    gone, added = _changed_lines(old_before, (vault / OLD).read_text())
    assert gone == ["status: active"]
    assert added == ["status: archived", 'superseded_by: "[[projects/web/memory/vite-build]]"']
    gone, added = _changed_lines(new_before, (vault / NEW).read_text())
    assert gone == []
    assert added == ['supersedes: ["[[projects/web/memory/webpack-build]]"]']


def test_journaled_and_replay_is_silence(make_vault: MakeVault) -> None:
    vault = vault_of(make_vault, note("webpack-build"), note("vite-build"))
    act(vault, "supersede", OLD, by=NEW, evidence=RECEIPT)
    again = act(vault, "supersede", OLD, by=NEW, evidence=RECEIPT)
    assert again.outcome == "silence"
    lines = (vault / "state" / config.JOURNAL_FILE).read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert [(r["action"], r["outcome"]) for r in records] == [
        ("supersede", "act"),
        ("supersede", "silence"),
    ]
    assert records[0]["by"] == NEW and records[0]["evidence"] == RECEIPT


def test_a_first_supersession_walks_no_name_table(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = vault_of(make_vault, note("webpack-build"), note("vite-build"))
    walked: list[Path] = []
    real = Resolver.for_vault

    def counting(vault: Path) -> Resolver:
        walked.append(vault)
        return real(vault)

    monkeypatch.setattr(Resolver, "for_vault", counting)
    assert act(vault, "supersede", OLD, by=NEW, evidence=RECEIPT).outcome == "act"
    assert walked == []  # nothing to resolve: OLD named no newer entry
    assert act(vault, "supersede", OLD, by=NEW, evidence=RECEIPT).outcome == "silence"
    assert walked == [vault]


GATES = {
    "no --by": ({"by": None}, "needs --by NEW"),
    "no evidence": ({"evidence": None}, "no evidence"),
    "NEW missing": ({"by": "projects/web/memory/nothing.md"}, "no such file"),
    "NEW is OLD": ({"by": OLD}, "cannot supersede itself"),
    "NEW archived": ({"by": "projects/web/memory/archived.md"}, "archived, not live"),
    "NEW superseded": ({"by": "projects/web/memory/gulp-build.md"}, "is itself superseded"),
    "NEW a skill": ({"by": "skills/pin/SKILL.md"}, "only entries supersede"),
}


@pytest.mark.parametrize("case", GATES, ids=list(GATES))
def test_gates_refuse_and_write_nothing(make_vault: MakeVault, case: str) -> None:
    vault = vault_of(
        make_vault,
        note("webpack-build"),
        note("vite-build"),
        **{
            "projects/web/memory/archived.md": note("archived", status="archived"),
            "projects/web/memory/gulp-build.md": note(
                "gulp-build", extra='superseded_by: "[[projects/web/memory/vite-build]]"'
            ),
            "skills/pin/SKILL.md": "---\nname: pin\ndescription: a skill\n---\n\nBody.\n",
        },
    )
    before = snapshot(vault)
    given: dict[str, str | None] = {"by": NEW, "evidence": RECEIPT}
    change, reason = GATES[case]
    given.update(change)
    outcome = act(vault, "supersede", OLD, **given)
    assert outcome.outcome == "defer"
    assert reason in outcome.reason
    assert snapshot(vault) == before


def test_an_entry_superseded_already_is_refused(make_vault: MakeVault) -> None:
    vault = vault_of(
        make_vault,
        note("webpack-build"),
        note("vite-build"),
        **{"projects/web/memory/rollup-build.md": note("rollup-build")},
    )
    act(vault, "supersede", OLD, by=NEW, evidence=RECEIPT)
    again = act(vault, "supersede", OLD, by="projects/web/memory/rollup-build.md", evidence=RECEIPT)
    assert again.outcome == "defer"
    assert "already superseded" in again.reason


def test_dry_run_shows_both_diffs_and_writes_nothing(make_vault: MakeVault) -> None:
    vault = vault_of(make_vault, note("webpack-build"), note("vite-build"))
    before = snapshot(vault, skip_state=False)
    outcome = apply_decision(vault, Decision("supersede", OLD, RECEIPT, by=NEW), NOW, dry_run=True)
    assert outcome.outcome == "act" and outcome.dry_run
    assert f"+++ b/{OLD}" in outcome.diff and f"+++ b/{NEW}" in outcome.diff
    assert snapshot(vault, skip_state=False) == before


def test_index_marks_the_superseded_entry(make_vault: MakeVault) -> None:
    vault = vault_of(make_vault, note("webpack-build"), note("vite-build"))
    act(vault, "supersede", OLD, by=NEW, evidence=RECEIPT)
    index = (vault / config.INDEX_FILE).read_text()
    assert (
        "- [[projects/web/memory/webpack-build]] - (superseded by "
        "[[projects/web/memory/vite-build]]) how webpack-build works"
    ) in index
    assert "- [[projects/web/memory/vite-build]] - how vite-build works" in index


def test_reactivating_a_hand_written_supersession_clears_both_sides(
    make_vault: MakeVault,
) -> None:
    old = note(
        "webpack-build",
        status="archived",
        extra='superseded_by: "[[vite-build]]"',
    )
    new = note(
        "vite-build",
        extra='supersedes: ["[[webpack-build]]", "[[projects/web/memory/grunt-build]]"]',
    )
    vault = vault_of(make_vault, old, new)
    outcome = act(vault, "reactivate", OLD, evidence=RECEIPT)
    assert outcome.outcome == "act", outcome.reason
    after_old, after_new = read_note(vault, vault / OLD), read_note(vault, vault / NEW)
    assert not is_superseded(after_old)
    assert after_old.meta["status"] == "active"
    assert supersedes(after_new) == ["projects/web/memory/grunt-build"]


def test_batch_takes_supersede_with_by(make_vault: MakeVault) -> None:
    vault = vault_of(make_vault, note("webpack-build"), note("vite-build"))
    text = json.dumps([{"action": "supersede", "target": OLD, "by": NEW, "evidence": RECEIPT}])
    result = run_batch(vault, text, "<stdin>", NOW)
    assert [o.outcome for o in result.outcomes] == ["act"]
    assert is_superseded(read_note(vault, vault / OLD))


def test_a_superseded_entry_is_never_a_held_out_candidate(make_vault: MakeVault) -> None:
    from vaultkeeper.scan.classify import classify

    due = 'holdout_until: "2026-08-01"'
    vault = vault_of(
        make_vault,
        note("webpack-build", status="held_out", extra=due),
        note("vite-build", status="held_out", extra=due),
    )
    assert {c.path for c in classify(vault, NOW).held_out} == {OLD, NEW}
    # hand-written: the link alone, status left held_out
    text = (vault / OLD).read_text().replace(due, f'{due}\nsuperseded_by: "[[vite-build]]"')
    (vault / OLD).write_text(text)
    assert {c.path for c in classify(vault, NOW).held_out} == {NEW}


def test_cli_supersede_and_reactivate(make_vault: MakeVault) -> None:
    from click.testing import CliRunner

    from vaultkeeper.cli import cli

    runner = CliRunner()
    vault = vault_of(make_vault, note("webpack-build"), note("vite-build"))
    before = snapshot(vault)
    base = ["--vault", str(vault), "apply"]
    refused = runner.invoke(cli, [*base, "supersede", OLD, "--by", OLD, "--evidence", RECEIPT])
    assert refused.exit_code == 1
    assert refused.output.count("\n") == 1 and "cannot supersede itself" in refused.output
    done = runner.invoke(cli, [*base, "supersede", OLD, "--by", NEW, "--evidence", RECEIPT])
    assert done.exit_code == 0, done.output
    assert done.output == (
        f"act: supersede {OLD}: {OLD} superseded by {NEW}; status active -> archived\n"
    )
    undone = runner.invoke(cli, [*base, "reactivate", OLD, "--evidence", RECEIPT, "--json"])
    assert undone.exit_code == 0, undone.output
    assert json.loads(undone.output)["to"] == "active"
    assert snapshot(vault) == before


def test_names_work_as_well_as_paths(make_vault: MakeVault) -> None:
    vault = vault_of(make_vault, note("webpack-build"), note("vite-build"))
    before = snapshot(vault)
    done = act(vault, "supersede", "webpack-build", by="vite-build", evidence=RECEIPT)
    assert (done.outcome, done.target, done.extra["by"]) == ("act", OLD, NEW)
    undone = act(vault, "reactivate", "webpack-build", evidence=RECEIPT)
    assert undone.outcome == "act" and undone.reason.startswith("supersession undone")
    assert snapshot(vault) == before


@pytest.mark.parametrize("empty", ['superseded_by: ""', "superseded_by: null", "superseded_by:"])
def test_an_empty_superseded_by_is_superseded_and_undone_byte_for_byte(
    make_vault: MakeVault, empty: str
) -> None:
    vault = vault_of(make_vault, note("webpack-build", extra=empty), note("vite-build"))
    before = snapshot(vault)
    done = act(vault, "supersede", OLD, by=NEW, evidence=RECEIPT)
    assert done.outcome == "act", done.reason
    assert read_note(vault, vault / OLD).meta["superseded_by"] == (
        "[[projects/web/memory/vite-build]]"
    )
    undone = act(vault, "reactivate", OLD, evidence=RECEIPT)
    assert undone.outcome == "act", undone.reason
    assert snapshot(vault) == before
