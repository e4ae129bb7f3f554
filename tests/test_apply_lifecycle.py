"""revalidate / reactivate: every allowed and refused move, override protection, minimal edits."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from click.testing import CliRunner
from conftest import snapshot
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultkeeper.apply import journal as queue
from vaultkeeper.apply.batch import apply_decision
from vaultkeeper.apply.decision import Decision
from vaultkeeper.apply.lifecycle import status_edit
from vaultkeeper.cli import cli
from vaultkeeper.store.model import file_hash, load_yaml, split_frontmatter

NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.timezone.utc)
RECEIPT = "projects/p/research/notes.md:2"
PATH = "projects/p/memory/lesson.md"


def entry(
    status: str = "held_out",
    label: str = "inferred",
    holdout: str = '"2026-11-01"',
    provenance: str = "[]",
    nl: str = "\n",
) -> str:
    lines = [
        "---",
        "name: lesson",
        "description: A lesson  # recall line",
        "type: memory",
        f"status: {status}   # lifecycle",
        f"label: {label}",
        'falsification_condition: "it stops holding"',
        f"holdout_until: {holdout}",
        "relations: {}",
        "sources: []",
        f"provenance: {provenance}",
        "---",
        "",
        "# lesson",
        "",
        "Body text stays.",
    ]
    return nl.join(lines) + nl


def make(make_vault, text: str) -> Path:
    return make_vault({PATH: text, "projects/p/research/notes.md": "a\nb\nc\n"})


def run(vault: Path, action: str, result: str | None = None, evidence: str | None = RECEIPT):
    return apply_decision(vault, Decision(action, PATH, evidence, result), NOW)


def changed_lines(before: str, after: str) -> list[tuple[str, str]]:
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    assert len(old) == len(new)
    return [(a, b) for a, b in zip(old, new, strict=True) if a != b]


def test_revalidate_pass_changes_status_and_provenance_lines_only(make_vault) -> None:
    vault = make(make_vault, entry())
    before = (vault / PATH).read_text()
    outcome = run(vault, "revalidate", "pass")
    assert (outcome.outcome, outcome.exit_code) == ("act", 0)
    after = (vault / PATH).read_text()
    assert changed_lines(before, after) == [
        ("status: held_out   # lifecycle\n", "status: active   # lifecycle\n"),
        ("provenance: []\n", f'provenance: ["{RECEIPT}"]\n'),
    ]
    assert outcome.hash_before != outcome.hash_after


def test_revalidate_pass_appends_to_a_block_list_and_keeps_crlf(make_vault) -> None:
    text = entry(provenance="", nl="\r\n").replace(
        "provenance: \r\n", 'provenance:\r\n  - "https://example.org/a"\r\n'
    )
    vault = make(make_vault, text)
    run(vault, "revalidate", "pass")
    after = (vault / PATH).read_bytes().decode()
    expected = text.replace("status: held_out ", "status: active ").replace(
        '  - "https://example.org/a"\r\n',
        f'  - "https://example.org/a"\r\n  - "{RECEIPT}"\r\n',
    )
    assert after == expected


def test_revalidate_fail_archives_with_one_changed_line(make_vault) -> None:
    vault = make(make_vault, entry())
    before = (vault / PATH).read_text()
    outcome = run(vault, "revalidate", "fail")
    assert outcome.outcome == "act"
    assert changed_lines(before, (vault / PATH).read_text()) == [
        ("status: held_out   # lifecycle\n", "status: archived   # lifecycle\n")
    ]


def test_revalidate_before_holdout_is_deferred_and_writes_nothing(
    make_vault, runner: CliRunner
) -> None:
    vault = make(make_vault, entry(holdout='"2099-01-01"'))
    before = snapshot(vault)
    result = runner.invoke(
        cli, ["--vault", str(vault), "apply", "revalidate", PATH, "--pass", "--evidence", RECEIPT]
    )
    assert result.exit_code == 1
    assert "hold-out runs until 2099-01-01" in result.stderr
    assert "deferred; nothing changed" in result.stderr
    assert snapshot(vault) == before
    record = json.loads((vault / "state/journal.jsonl").read_text().splitlines()[-1])
    assert (record["action"], record["outcome"]) == ("revalidate", "defer")


def test_revalidate_on_the_holdout_day_itself_is_allowed(make_vault) -> None:
    vault = make(make_vault, entry(holdout='"2026-12-01"'))
    assert run(vault, "revalidate", "pass").outcome == "act"


def test_revalidating_an_active_or_archived_entry_is_refused(make_vault) -> None:
    for status in ("active", "archived"):
        vault = make(make_vault, entry(status=status))
        before = snapshot(vault)
        outcome = run(vault, "revalidate", "pass", evidence="https://example.org/new")
        assert outcome.outcome == "defer"
        assert f"status is {status}: only a held_out entry" in outcome.reason
        assert snapshot(vault) == before


def test_revalidate_needs_a_receipt(make_vault) -> None:
    vault = make(make_vault, entry())
    before = snapshot(vault)
    for evidence in (None, "it worked", "projects/p/research/notes.md:9"):
        assert run(vault, "revalidate", "pass", evidence=evidence).outcome == "defer"
    assert snapshot(vault) == before


def test_override_fail_becomes_an_ask_for_a_person(make_vault, runner: CliRunner) -> None:
    vault = make(make_vault, entry(label="validated-override"))
    before = snapshot(vault)
    args = ["--vault", str(vault), "apply", "revalidate", PATH, "--fail", "--evidence", RECEIPT]
    result = runner.invoke(cli, args)
    assert result.exit_code == 3
    assert "never demoted automatically" in result.stdout
    assert "vaultkeeper review" in result.stdout
    assert snapshot(vault) == before
    [ask] = queue.pending(vault)
    assert (ask.action, ask.target, ask.result) == ("revalidate", PATH, "fail")
    # asking again does not queue it twice
    again = runner.invoke(cli, args)
    assert again.exit_code == 3 and "already queued" in again.stdout
    assert len(queue.pending(vault)) == 1


def test_override_pass_is_an_ordinary_promotion(make_vault) -> None:
    vault = make(make_vault, entry(label="validated-override"))
    assert run(vault, "revalidate", "pass").outcome == "act"
    assert "status: active " in (vault / PATH).read_text()


def test_reactivate_archived_on_new_evidence(make_vault) -> None:
    vault = make(make_vault, entry(status="archived", label="rule"))
    before = (vault / PATH).read_text()
    outcome = run(vault, "reactivate")
    assert outcome.outcome == "act"
    assert changed_lines(before, (vault / PATH).read_text()) == [
        ("status: archived   # lifecycle\n", "status: active   # lifecycle\n"),
        ("provenance: []\n", f'provenance: ["{RECEIPT}"]\n'),
    ]


def test_reactivate_an_archived_inferred_lesson_on_new_evidence(make_vault) -> None:
    # the spec's state machine: archived --> active : new evidence, whatever the label
    vault = make(make_vault, entry(status="archived", label="inferred"))
    before = (vault / PATH).read_text()
    outcome = run(vault, "reactivate")
    assert (outcome.outcome, outcome.reason) == (
        "act", "status archived -> active, receipt added to provenance",
    )  # fmt: skip
    assert changed_lines(before, (vault / PATH).read_text()) == [
        ("status: archived   # lifecycle\n", "status: active   # lifecycle\n"),
        ("provenance: []\n", f'provenance: ["{RECEIPT}"]\n'),
    ]


def test_reactivate_refusals(make_vault) -> None:
    cases = [
        (entry(status="held_out", label="rule"), "status is held_out: only an archived entry"),
        (entry(status="active", label="rule"), "status is active: only an archived entry"),
    ]
    for text, why in cases:
        vault = make(make_vault, text)
        before = snapshot(vault)
        outcome = run(vault, "reactivate")
        assert outcome.outcome == "defer" and why in outcome.reason
        assert snapshot(vault) == before


def test_replaying_a_move_is_silence(make_vault) -> None:
    vault = make(make_vault, entry())
    assert run(vault, "revalidate", "pass").outcome == "act"
    after = snapshot(vault)
    again = run(vault, "revalidate", "pass")
    assert (again.outcome, again.reason) == ("silence", "already applied: status is active")
    # a different fail receipt on the same (now active) entry is a refused move, not a replay
    assert run(vault, "revalidate", "fail").outcome == "defer"
    vault2 = make(make_vault, entry())
    assert run(vault2, "revalidate", "fail").outcome == "act"
    assert run(vault2, "revalidate", "fail").outcome == "silence"
    assert snapshot(vault) == after


def test_dry_run_prints_the_diff_and_writes_nothing(make_vault, runner: CliRunner) -> None:
    vault = make(make_vault, entry())
    before = snapshot(vault, skip_state=False)
    args = ["--vault", str(vault), "apply", "revalidate", PATH, "--pass", "--evidence", RECEIPT]
    result = runner.invoke(cli, [*args, "--dry-run"])
    assert result.exit_code == 0
    assert "-status: held_out   # lifecycle\n+status: active   # lifecycle\n" in result.stdout
    assert f'+provenance: ["{RECEIPT}"]' in result.stdout
    assert "dry run: would act" in result.stdout
    assert snapshot(vault, skip_state=False) == before
    assert not (vault / "state/journal.jsonl").exists()


def test_unparseable_frontmatter_is_refused(make_vault) -> None:
    vault = make(make_vault, "---\nstatus: [held_out\n---\nbody\n")
    outcome = run(vault, "revalidate", "pass")
    assert outcome.outcome == "defer" and "bad YAML" in outcome.reason


def test_path_escape_is_refused_and_journaled(make_vault, tmp_path: Path) -> None:
    vault = make(make_vault, entry())
    outside = tmp_path / "outside.md"
    outside.write_text(entry())
    before = outside.read_bytes()
    outcome = apply_decision(vault, Decision("revalidate", "../outside.md", RECEIPT, "pass"), NOW)
    assert outcome.outcome == "defer" and "outside the vault" in outcome.reason
    assert outside.read_bytes() == before


# -- property: a status change alters no other byte ------------------------------------

_KEY = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True).filter(lambda k: k != "status")
_PLAIN = st.from_regex(r"[A-Za-z][A-Za-z0-9 _.-]{0,20}[A-Za-z0-9]", fullmatch=True)
_QUOTED = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zl", "Zp")), max_size=15
).map(lambda s: json.dumps(s, ensure_ascii=False))
_SCALAR = st.one_of(_PLAIN, _QUOTED, st.integers().map(str), st.sampled_from(["[]", "{}", "true"]))
_COMMENT = st.one_of(st.just(""), st.from_regex(r"  # [a-z ]{0,12}", fullmatch=True))


@st.composite
def _frontmatter(draw: st.DrawFn) -> tuple[str, str]:
    """Valid frontmatter: random keys (scalars, lists, maps, comments) and a status line."""
    nl = draw(st.sampled_from(["\n", "\r\n"]))
    groups: list[list[str]] = []  # one group per key, so status lands between keys
    for key in draw(st.lists(_KEY, unique=True, max_size=6)):
        kind = draw(st.sampled_from(["scalar", "list", "map", "comment"]))
        if kind == "scalar":
            groups.append([f"{key}: {draw(_SCALAR)}{draw(_COMMENT)}"])
        elif kind == "list":
            items = draw(st.lists(_SCALAR, min_size=1, max_size=3))
            groups.append([f"{key}:", *(f"  - {item}" for item in items)])
        elif kind == "map":
            subkeys = draw(st.lists(_KEY, unique=True, min_size=1, max_size=3))
            groups.append([f"{key}:", *(f"  {k}: {draw(_SCALAR)}" for k in subkeys)])
        else:
            groups.append([f"# {key} note", f"{key}: {draw(_SCALAR)}"])
    old = draw(st.sampled_from(["held_out", "active", "archived", '"held_out"', "'active'"]))
    gap = draw(st.sampled_from([" ", "  ", "\t"]))
    status = [f"status:{gap}{old}{draw(_COMMENT)}"]
    if draw(st.booleans()):
        status.append("  # an indented comment after the status")
    groups.insert(draw(st.integers(0, len(groups))), status)
    lines = [line for group in groups for line in group]
    body = draw(st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40))
    text = "---" + nl + nl.join(lines) + nl + "---" + nl + body
    return text, draw(st.sampled_from(["active", "archived", "held_out"]))


def _meta(text: str) -> object:
    yaml_text, _, _ = split_frontmatter(text)
    assert yaml_text is not None
    return load_yaml(yaml_text)


@settings(max_examples=200, deadline=None)
@given(_frontmatter())
def test_status_change_alters_no_other_byte(case: tuple[str, str]) -> None:
    text, new_status = case
    data = _meta(text)
    assert isinstance(data, dict)
    after = status_edit(text, new_status)
    old_lines, new_lines = text.split("\n"), after.split("\n")
    assert len(old_lines) == len(new_lines)
    differing = [i for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=True)) if a != b]
    assert len(differing) <= 1
    if differing:
        assert new_lines[differing[0]].startswith("status:")
    assert _meta(after) == {**data, "status": new_status}


def test_missing_status_with_a_holdout_counts_as_held_out(make_vault) -> None:
    # the scanner lists such an entry as held-out due, so the applier must accept it
    text = entry().replace("status: held_out   # lifecycle\n", "")
    vault = make(make_vault, text)
    assert run(vault, "revalidate", "fail").outcome == "act"
    assert (vault / PATH).read_text() == text.replace("---\n\n#", "status: archived\n---\n\n#")


def test_expect_hash_on_an_entry(make_vault, runner: CliRunner) -> None:
    vault = make(make_vault, entry())
    digest = file_hash((vault / PATH).read_text())
    args = ["--vault", str(vault), "apply", "revalidate", PATH, "--pass", "--evidence", RECEIPT]
    stale = runner.invoke(cli, [*args, "--expect-hash", "0" * 64])
    assert stale.exit_code == 1 and "changed since the report" in stale.stderr
    assert runner.invoke(cli, [*args, "--expect-hash", digest]).exit_code == 0
