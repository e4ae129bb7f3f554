"""apply promote: the gate (fresh count, receipt, promoted once, stale hash), skill and merge."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import snapshot
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultkeeper import config
from vaultkeeper.apply.batch import apply_decision
from vaultkeeper.apply.decision import Decision
from vaultkeeper.cli import cli
from vaultkeeper.index import delta, rows
from vaultkeeper.index.build import build_index
from vaultkeeper.registry.blocks import find_block

NOW = dt.datetime(2026, 12, 1, 9, 30, tzinfo=dt.timezone.utc)
RECEIPT = "projects/p/research/notes.md:2"
REGISTRY = """# Pattern registry

### alpha
Bisect before reading diffs. See [[projects/p/research/notes]].
Second line of the first paragraph.

More detail in a second paragraph.

**success count:** 3
**last used:** 2026-10-01

### beta
Beta body.

**success count:** 1
**last used:** 2026-11-01
"""
PROMOTED = "**promoted:** 2026-12-01 -> [[skills/alpha/SKILL]]"


@pytest.fixture
def vault(make_vault) -> Path:
    return make_vault(
        {"patterns/registry.md": REGISTRY, "projects/p/research/notes.md": "a\nb\nc\n"}
    )


def promote(vault: Path, name: str = "alpha", evidence: str | None = RECEIPT, **kw):
    return apply_decision(vault, Decision("promote", name, evidence, **kw), NOW)


def test_promote_writes_the_skill_and_one_registry_line(vault: Path) -> None:
    outcome = promote(vault)
    assert (outcome.outcome, outcome.exit_code) == ("act", 0)
    skill = (vault / "skills/alpha/SKILL.md").read_text()
    assert skill == (
        "---\n"
        "name: alpha\n"
        'description: "Bisect before reading diffs. See [[projects/p/research/notes]]. Second line'
        ' of the first paragraph."\n'
        "---\n\n"
        "# alpha\n\n"
        "Bisect before reading diffs. See [[projects/p/research/notes]].\n"
        "Second line of the first paragraph.\n\n"
        "More detail in a second paragraph.\n\n"
        "Promoted from [[patterns/registry#alpha]] on 2026-12-01 (success count 3).\n\n"
        "## Evidence\n\n"
        f"- {RECEIPT} (added 2026-12-01)\n"
    )
    expected = REGISTRY.replace(
        "**last used:** 2026-10-01\n", f"**last used:** 2026-10-01\n{PROMOTED}\n"
    )
    assert (vault / "patterns/registry.md").read_text() == expected
    assert find_block(vault, "alpha").promoted is not None
    assert outcome.hash_before != outcome.hash_after
    assert outcome.hash_after == find_block(vault, "alpha").hash


def test_count_is_read_fresh_from_the_file(vault: Path) -> None:
    # a report said alpha had 3 uses; someone edited the registry since
    registry = vault / "patterns/registry.md"
    registry.write_text(REGISTRY.replace("**success count:** 3", "**success count:** 1"))
    before = snapshot(vault)
    outcome = promote(vault)
    assert outcome.outcome == "defer"
    assert "success count 1 is below 2" in outcome.reason
    assert snapshot(vault) == before


def test_low_count_refused(vault: Path, runner: CliRunner) -> None:
    before = snapshot(vault)
    result = runner.invoke(
        cli, ["--vault", str(vault), "apply", "promote", "beta", "--evidence", RECEIPT]
    )
    assert result.exit_code == 1
    assert "patterns/registry.md:15: success count 1 is below 2" in result.stderr
    assert snapshot(vault) == before


def test_unreadable_count_refused(make_vault) -> None:
    vault = make_vault(
        {
            "patterns/registry.md": REGISTRY.replace(
                "**success count:** 3", "**success count:** lots"
            ),
            "projects/p/research/notes.md": "a\nb\n",
        }
    )
    outcome = promote(vault)
    assert outcome.outcome == "defer" and "not a whole number" in outcome.reason


@pytest.mark.parametrize("evidence", [None, "worked great", "projects/p/research/notes.md:7"])
def test_receipt_gate(vault: Path, evidence: str | None) -> None:
    before = snapshot(vault)
    assert promote(vault, evidence=evidence).outcome == "defer"
    assert snapshot(vault) == before


def test_url_receipt_passes(vault: Path) -> None:
    assert promote(vault, evidence="https://ci.example/run/41").outcome == "act"


def test_stale_hash_refused_fresh_hash_passes(vault: Path) -> None:
    report_hash = find_block(vault, "alpha").hash
    registry = vault / "patterns/registry.md"
    registry.write_text(REGISTRY.replace("More detail", "Edited detail"))
    before = snapshot(vault)
    stale = promote(vault, expect_hash=report_hash)
    assert stale.outcome == "defer" and "changed since the report" in stale.reason
    assert snapshot(vault) == before
    fresh = find_block(vault, "alpha").hash
    assert promote(vault, expect_hash=fresh[:12]).outcome == "act"


def test_already_promoted(vault: Path) -> None:
    assert promote(vault).outcome == "act"
    after = snapshot(vault)
    again = promote(vault)
    assert again.outcome == "silence" and again.reason.startswith("already applied")
    assert snapshot(vault) == after


def test_a_new_receipt_joins_the_evidence_of_a_promoted_skill(vault: Path) -> None:
    """As the docs say: re-promoting adds the receipt to the skill's Evidence (one line),
    journaled; the registry keeps its one **promoted:** line; the same receipt again is
    silence."""
    assert promote(vault).outcome == "act"
    skill = vault / "skills/alpha/SKILL.md"
    registry = (vault / "patterns/registry.md").read_bytes()
    before = skill.read_text()
    other = promote(vault, evidence="https://example.org/other")
    assert (other.outcome, other.exit_code) == ("act", 0), other.reason
    assert "added the receipt to the Evidence of skills/alpha/SKILL.md" in other.reason
    assert skill.read_text() == before + "- https://example.org/other (added 2026-12-01)\n"
    assert (vault / "patterns/registry.md").read_bytes() == registry
    last = json.loads((vault / "state/journal.jsonl").read_text().splitlines()[-1])
    assert (last["action"], last["outcome"], last["evidence"]) == (
        "promote", "act", "https://example.org/other",
    )  # fmt: skip
    after = snapshot(vault)
    again = promote(vault, evidence="https://example.org/other")
    assert again.outcome == "silence" and snapshot(vault) == after


def test_a_new_receipt_goes_where_the_registry_says_the_skill_is(
    vault: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "claude-skills"
    assert promote(vault, skills_dir=outside).outcome == "act"
    other = promote(vault, evidence="https://example.org/other")  # no --skills-dir now
    assert other.outcome == "act", other.reason
    assert "- https://example.org/other" in (outside / "alpha/SKILL.md").read_text()
    assert not (vault / "skills").exists()


def test_a_new_receipt_for_a_skill_that_is_gone_is_refused(vault: Path) -> None:
    assert promote(vault).outcome == "act"
    (vault / "skills/alpha/SKILL.md").unlink()
    after = snapshot(vault)
    other = promote(vault, evidence="https://example.org/other")
    assert other.outcome == "defer" and "which is not there; nothing changed" in other.reason
    bad = promote(vault, evidence="projects/p/research/notes.md:99")
    assert bad.outcome == "defer"
    assert snapshot(vault) == after


def test_merge_adds_only_new_evidence_and_overwrites_nothing(vault: Path) -> None:
    existing = (
        "---\nname: alpha\ndescription: Written by hand\n---\n\n# alpha\n\nHand-written body.\n\n"
        "## Evidence\n\n- https://example.org/old\n\n## Notes\n\nkeep me\n"
    )
    skill = vault / "skills/alpha/SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(existing)
    outcome = promote(vault)
    assert outcome.outcome == "act" and "merged" in outcome.reason
    assert skill.read_text() == existing.replace(
        "- https://example.org/old\n",
        f"- https://example.org/old\n- {RECEIPT} (added 2026-12-01)\n",
    )


def test_merge_does_not_duplicate_evidence(vault: Path) -> None:
    existing = f"# alpha\n\n## Evidence\n\n- {RECEIPT}\n"
    skill = vault / "skills/alpha/SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(existing)
    assert promote(vault).outcome == "act"
    assert skill.read_text() == existing
    assert PROMOTED in (vault / "patterns/registry.md").read_text()


def test_merge_adds_an_evidence_section_when_missing(vault: Path) -> None:
    skill = vault / "skills/alpha/SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("# alpha\n\nbody\n")
    promote(vault)
    assert (
        skill.read_text() == f"# alpha\n\nbody\n\n## Evidence\n\n- {RECEIPT} (added 2026-12-01)\n"
    )


def test_skills_dir_elsewhere(vault: Path, tmp_path: Path, runner: CliRunner) -> None:
    skills = tmp_path / "project" / ".claude" / "skills"
    result = runner.invoke(
        cli,
        ["--vault", str(vault), "apply", "promote", "alpha", "--evidence", RECEIPT,
         "--skills-dir", str(skills)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    text = (skills / "alpha/SKILL.md").read_text()
    assert text.startswith("---\nname: alpha\ndescription: ")
    assert not (vault / "skills").exists()
    assert "**promoted:** 2026-" in (vault / "patterns/registry.md").read_text()
    assert f"-> `{skills / 'alpha/SKILL.md'}`" in (vault / "patterns/registry.md").read_text()


def test_symlinked_skills_folder_leading_out_is_refused(vault: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (vault / "skills").symlink_to(outside)
    before = snapshot(vault)
    outcome = promote(vault)
    assert outcome.outcome == "defer" and "outside the vault" in outcome.reason
    assert list(outside.iterdir()) == []
    assert snapshot(vault) == before


def test_dry_run_prints_both_diffs_and_writes_nothing(vault: Path, runner: CliRunner) -> None:
    before = snapshot(vault, skip_state=False)
    result = runner.invoke(
        cli,
        ["--vault", str(vault), "apply", "promote", "alpha", "--evidence", RECEIPT, "--dry-run"],
    )
    assert result.exit_code == 0
    assert "--- /dev/null\n+++ b/skills/alpha/SKILL.md\n" in result.stdout
    assert "+++ b/patterns/registry.md\n" in result.stdout
    assert "\n+**promoted:** " in result.stdout
    assert snapshot(vault, skip_state=False) == before


def test_crlf_registry_keeps_its_line_endings(make_vault) -> None:
    vault = make_vault(
        {
            "patterns/registry.md": REGISTRY.replace("\n", "\r\n"),
            "projects/p/research/notes.md": "a\nb\n",
        }
    )
    promote(vault)
    raw = (vault / "patterns/registry.md").read_bytes()
    assert (
        raw
        == REGISTRY.replace(
            "**last used:** 2026-10-01\n", f"**last used:** 2026-10-01\n{PROMOTED}\n"
        )
        .replace("\n", "\r\n")
        .encode()
    )


def test_unknown_name_is_refused_and_journaled(vault: Path) -> None:
    outcome = promote(vault, name="nope")
    assert outcome.outcome == "defer" and "no ### nope block" in outcome.reason
    record = json.loads((vault / "state/journal.jsonl").read_text().splitlines()[-1])
    assert record["target"] == "nope" and record["outcome"] == "defer"


def test_two_patterns_with_one_skill_folder_are_never_merged(make_vault) -> None:
    # "C#" and "C++" both slug to skills/c/: the second once merged its evidence into the
    # first's skill and was marked promoted, its own text never becoming a skill.
    registry = (
        "# Pattern registry\n\n### C#\nUse records for DTOs.\n\n**success count:** 3\n"
        "**last used:** 2026-11-01\n\n### C++\nPrefer RAII.\n\n**success count:** 3\n"
        "**last used:** 2026-11-01\n"
    )
    vault = make_vault({"patterns/registry.md": registry})
    assert promote(vault, "C#", "https://ci.example/1").outcome == "act"
    skill = (vault / "skills/c/SKILL.md").read_bytes()
    registry_after = (vault / "patterns/registry.md").read_bytes()
    outcome = promote(vault, "C++", "https://ci.example/2")
    assert outcome.outcome == "defer"
    assert outcome.reason == (
        "patterns/registry.md:10: ### C++ and ### C# (patterns/registry.md:3, promoted) "
        "would share skills/c/SKILL.md; rename this one"
    )
    assert (vault / "skills/c/SKILL.md").read_bytes() == skill
    assert (vault / "patterns/registry.md").read_bytes() == registry_after


def test_a_skill_inside_the_vault_joins_the_index(vault: Path, runner: CliRunner) -> None:
    assert runner.invoke(cli, ["--vault", str(vault), "index"]).exit_code == 0
    assert promote(vault).outcome == "act"
    assert "- [[skills/alpha/SKILL]] - Bisect before" in (vault / "_index.md").read_text()
    assert runner.invoke(cli, ["--vault", str(vault), "index", "--check"]).exit_code == 0


@pytest.mark.parametrize("outside", [False, True])
def test_dry_runs_and_skills_outside_leave_the_index_alone(
    vault: Path, tmp_path: Path, outside: bool
) -> None:
    before = (vault / "_index.md").read_bytes()  # stale: a regeneration would change it
    skills = tmp_path / "elsewhere" if outside else None
    decision = Decision("promote", "alpha", RECEIPT, skills_dir=skills)
    outcome = apply_decision(vault, decision, NOW, dry_run=not outside)
    assert outcome.outcome == "act"
    assert (vault / "_index.md").read_bytes() == before


@pytest.mark.parametrize("named", ["`{other}`", "[[projects/p/research/notes]]"])
def test_a_promoted_line_naming_a_file_that_is_no_skill_gets_no_receipt(
    make_vault, tmp_path: Path, named: str
) -> None:
    # the **promoted:** line is vault text anyone may write: re-promoting edits only a
    # SKILL.md, never another file (outside the vault or in it) that line names
    other = tmp_path / "elsewhere" / "notes.txt"
    other.parent.mkdir()
    other.write_text("keep me\n")
    line = f"**promoted:** 2026-11-01 -> {named.format(other=other)}\n"
    registry = REGISTRY.replace("**last used:** 2026-10-01\n", "**last used:** 2026-10-01\n" + line)
    vault = make_vault(
        {"patterns/registry.md": registry, "projects/p/research/notes.md": "a\nb\nc\n"}
    )
    before = snapshot(vault)
    outcome = promote(vault, evidence="https://example.org/other")
    assert outcome.outcome == "defer", outcome.reason
    assert other.read_text() == "keep me\n"
    assert snapshot(vault) == before


def test_dry_run_is_no_file_oracle_outside_the_vault(
    vault: Path, runner: CliRunner, tmp_path: Path
) -> None:
    """Issue 32 item 3: ``apply promote --dry-run`` (CLI and MCP ``dry_run``) answers the
    same for a ``path:line`` outside the vault whatever the file: there or not, long
    enough or not, readable or not."""
    from vaultkeeper.mcp.tools import VaultTools

    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("one line\n")
    unreadable = tmp_path / "outside" / "shadow"
    unreadable.write_text("root:x\n")
    unreadable.chmod(0)
    receipts = [
        f"{secret}:1",
        f"{secret}:2",
        f"{secret}:999999",
        f"{tmp_path}/outside/no-such-file:1",
        f"{tmp_path}/outside:1",
        f"{unreadable}:1",
        "/etc/shadow:1",
    ]
    before = snapshot(vault)
    said_cli, said_mcp = set(), set()
    tools = VaultTools(vault, lambda: NOW, "oracle-test")
    for receipt in receipts:
        run = runner.invoke(
            cli,
            ["--vault", str(vault), "apply", "promote", "alpha", "--evidence", receipt]
            + ["--dry-run", "--json"],
        )
        said_cli.add((run.exit_code, run.output.replace(receipt, "R")))
        got = tools.apply(Decision("promote", "alpha", receipt), dry_run=True)
        said_mcp.add((got.outcome, got.reason, (got.evidence or "").replace(receipt, "R")))
    assert len(said_cli) == 1 and len(said_mcp) == 1, (said_cli, said_mcp)
    assert snapshot(vault) == before


_BODY = st.lists(
    st.sampled_from(
        [
            "Para words.",
            "More words.",
            "",
            "**last used:** 2026-10-01",
            "**note:** x",
            "- **tag:** y",
        ]
    ),
    max_size=7,
)


@settings(max_examples=40, deadline=None)
@given(before=_BODY, after=_BODY, split=st.booleans())
def test_a_promote_changes_no_index_line_of_its_registry_and_renders_none(
    tmp_path_factory: pytest.TempPathFactory, before: list[str], after: list[str], split: bool
) -> None:
    """The **promoted:** line joins after the heading or a counter line, so the block's
    first paragraph, all the index lists of it, stays: the registry's key follows, its
    lines are neither read nor rendered, and the index is what a regeneration writes."""
    body = "\n".join([*before, "**success count:** 3", *after])
    text = f"# Pattern registry\n\n### alpha\n{body}\n\n### beta\nBeta body.\n"
    vault = tmp_path_factory.mktemp("v")
    for name, content in {
        "patterns/registry.md": text,
        "projects/p/research/notes.md": "a\nb\n",
    }.items():
        (vault / name).parent.mkdir(parents=True, exist_ok=True)
        (vault / name).write_text(content)
    (vault / "state").mkdir()
    read: list[str] = []
    real = delta.Listing.__init__

    def counting(self: delta.Listing, name: str, text: str, *, new: bool = False) -> None:
        read.append(name)
        real(self, name, text, new=new)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(rows, "RACY_NS", 0)  # files just written count as settled
        m.setattr(config, "INDEX_MAX_LINES", 3 if split else config.INDEX_MAX_LINES)
        build_index(vault)
        m.setattr(delta.Listing, "__init__", counting)
        assert promote(vault).outcome == "act"
        m.undo()
        m.setattr(config, "INDEX_MAX_LINES", 3 if split else config.INDEX_MAX_LINES)
        m.setattr(rows, "_load", lambda vault, query: None)  # every note read again
        assert build_index(vault, check=True).changed == ()
    assert read and not any("patterns" in name for name in read)
