"""Decay: stale active lessons and unused skills, from dates and from the usage log."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from tests.conftest import SAMPLE_VAULT
from vaultkeeper import config
from vaultkeeper.report.candidates import render_text
from vaultkeeper.scan.classify import classify
from vaultkeeper.store.uses import UseEvent, append_events
from vaultkeeper.upkeep.decay import MemoryFacts, Usage, load_usage, stale_entries

NO_USAGE = Usage({}, None, {})

NOW = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.timezone.utc)
TODAY = NOW.date()
OLD = (TODAY - dt.timedelta(days=config.STALE_DAYS + 1)).isoformat()
RECENT = (TODAY - dt.timedelta(days=config.STALE_DAYS - 1)).isoformat()


def facts(**kw: object) -> MemoryFacts:
    base: dict[str, object] = {
        "rel": "projects/p/memory/m.md",
        "name": "m",
        "description": "d",
        "status": "active",
        "holdout_until": None,
        "last_validated": None,
        "provenance_date": None,
    }
    base.update(kw)
    return MemoryFacts(**base)  # type: ignore[arg-type]


def stale(f: MemoryFacts, usage: Usage = NO_USAGE) -> list[str]:
    return [s.line_text() for s in stale_entries([f], usage, TODAY)]


def test_the_window_is_180_days_and_only_active_entries_decay() -> None:
    assert config.STALE_DAYS == 180
    assert stale(facts(holdout_until=OLD)) == [
        f"stale: re-validate m -- last seen {OLD} (holdout_until, 181 days ago) -- "
        "projects/p/memory/m.md"
    ]
    assert stale(facts(holdout_until=RECENT)) == []
    assert stale(facts(holdout_until=OLD, status="held_out")) == []
    assert stale(facts(holdout_until=OLD, status="archived")) == []


def test_the_latest_date_wins_whichever_key_holds_it() -> None:
    assert stale(facts(holdout_until=OLD, last_validated=RECENT)) == []
    assert stale(facts(holdout_until=OLD, provenance_date=RECENT)) == []
    [line] = stale(facts(holdout_until="2020-01-01", last_validated=OLD))
    assert "(last_validated, 181 days ago)" in line


def test_without_any_date_an_entry_is_stale_only_when_the_log_covers_the_window() -> None:
    assert stale(facts()) == []  # nothing dates it: not listed
    short = Usage({}, TODAY - dt.timedelta(days=10), {})
    assert stale(facts(), short) == []
    long = Usage({}, TODAY - dt.timedelta(days=400), {})
    since = (TODAY - dt.timedelta(days=400)).isoformat()
    assert stale(facts(), long) == [
        f"stale: re-validate m -- never cited or read (uses log since {since}) -- "
        "projects/p/memory/m.md"
    ]


def test_a_recent_citation_in_the_log_keeps_an_old_lesson_fresh() -> None:
    seen = Usage({"projects/p/memory/m.md": TODAY - dt.timedelta(days=3)}, None, {})
    assert stale(facts(holdout_until="2020-01-01"), seen) == []
    by_stem = Usage({"projects/p/memory/m": TODAY - dt.timedelta(days=3)}, None, {})
    assert stale(facts(holdout_until="2020-01-01"), by_stem) == []


def cite(vault: Path, target: str, day: dt.date, kind: str = "read") -> None:
    event = UseEvent("s1", "claude-code", kind, target, day, "/t/s1.jsonl:3")
    append_events(vault, [event])


def test_the_usage_log_dates_entries_and_covers_the_window(make_vault) -> None:
    vault = make_vault(
        {
            "projects/p/memory/m.md": (
                "---\nname: m\ndescription: d\ntype: memory\nstatus: active\nlabel: rule\n"
                "---\nno dates at all\n"
            )
        }
    )
    assert load_usage(vault) == NO_USAGE
    assert classify(vault, NOW).stale == ()  # nothing dates it
    first = TODAY - dt.timedelta(days=400)
    cite(vault, "projects/other.md", first)
    assert load_usage(vault) == Usage({"projects/other.md": first}, first, {})
    [line] = [s.line_text() for s in classify(vault, NOW).stale]
    assert line.endswith(f"never cited or read (uses log since {first}) -- projects/p/memory/m.md")
    cite(vault, "projects/p/memory/m.md", TODAY - dt.timedelta(days=5))
    assert classify(vault, NOW).stale == ()


REGISTRY = (
    "# Registry\n\n"
    "### old-skill\nA promoted pattern.\n\n**success count:** 3\n**last used:** 2025-01-05\n"
    "**promoted:** 2025-02-01 -> [[skills/old-skill/SKILL]]\n\n"
    "### fresh-skill\nAnother.\n\n**success count:** 3\n**last used:** 2025-01-05\n"
    "**promoted:** 2026-11-01 -> [[skills/fresh-skill/SKILL]]\n\n"
    "### not-promoted\nNever promoted.\n\n**success count:** 1\n**last used:** 2024-01-01\n"
)


def test_a_promoted_skill_unused_for_180_days_is_listed_and_nothing_is_written(
    make_vault,
) -> None:
    vault = make_vault({"patterns/registry.md": REGISTRY})
    before = (vault / "patterns/registry.md").read_bytes()
    report = classify(vault, NOW)
    assert [s.name for s in report.skills_unused] == ["old-skill"]
    [line] = [x for x in render_text(report) if x.startswith("skill unused")]
    assert line == (
        "skill unused old-skill -- last seen 2025-02-01 (promoted, 668 days ago), "
        "promoted 2025-02-01 -> [[skills/old-skill/SKILL]] -- patterns/registry.md:3"
    )
    # an invocation in the log 10 days ago takes it off the list
    cite(vault, "old-skill", TODAY - dt.timedelta(days=10), kind="skill")
    assert classify(vault, NOW).skills_unused == ()
    assert (vault / "patterns/registry.md").read_bytes() == before


def test_the_sample_vault_shows_its_stale_lesson_whatever_the_day() -> None:
    for days in (0, 1, 365, 30 * 365):
        report = classify(SAMPLE_VAULT, NOW + dt.timedelta(days=days))
        paths = [s.path for s in report.stale]
        assert "projects/api/memory/paginate-with-cursors.md" in paths, days
    assert [s.path for s in classify(SAMPLE_VAULT, NOW).stale] == [
        "projects/api/memory/paginate-with-cursors.md"
    ]


def test_extra_sections_survive_the_saved_report_and_keep_the_summary_line() -> None:
    from tests.test_report_candidates import as_kept

    report = classify(SAMPLE_VAULT, NOW)
    again = as_kept(report)
    assert again.duplicates == report.duplicates and again.stale == report.stale
    assert again.skills_unused == report.skills_unused
    assert render_text(again) == render_text(report)
    lines = render_text(report)
    assert lines[0] == report.summary()
    assert lines[0] == (
        f"{config.SUMMARY_PREFIX} prune candidates 1 | promote eligible 2 | held-out due 1"
    )
    assert lines[-2].startswith("duplicate pin-test-clock ~ pin-the-clock-in-tests -- blocks")
    assert lines[-1].startswith("stale: re-validate paginate-with-cursors -- last seen 2025-03-01")


def test_the_brief_names_each_extra_section_with_its_command() -> None:
    from vaultkeeper.report.brief import render_brief

    brief = render_brief(classify(SAMPLE_VAULT, NOW), NOW)
    assert (
        "apply merge KEEP DROP --evidence RECEIPT\n- pin-test-clock ~ pin-the-clock-in-tests (0.83)"
        in brief
    )
    assert (
        "apply revalidate PATH --reopen --evidence RECEIPT\n"
        "- projects/api/memory/paginate-with-cursors.md: last seen 2025-03-01 "
        "(holdout_until, 640 days ago)"
    ) in brief


def test_a_passed_re_check_dates_the_lesson_fresh(make_vault) -> None:
    from vaultkeeper.apply.batch import apply_decision
    from vaultkeeper.apply.decision import Decision

    path = "projects/p/memory/m.md"
    vault = make_vault(
        {
            path: (
                "---\nname: m\ndescription: d\ntype: memory\nstatus: held_out\nlabel: rule\n"
                'holdout_until: "2025-01-01"\nprovenance: []\n---\nbody\n'
            )
        }
    )
    done = apply_decision(vault, Decision("revalidate", path, "https://x.org/1", "pass"), NOW)
    assert done.outcome == "act", done.reason
    assert classify(vault, NOW).stale == ()  # re-checked today, though its dates are old
    later = NOW + dt.timedelta(days=config.STALE_DAYS + 1)
    [line] = [s.line_text() for s in classify(vault, later).stale]
    assert "(re-checked, 181 days ago)" in line


def test_with_only_a_stale_lesson_the_brief_shows_it_not_nothing_waiting(make_vault) -> None:
    from vaultkeeper.report.brief import render_brief

    vault = make_vault(
        {
            "projects/p/memory/m.md": (
                "---\nname: m\ndescription: d\ntype: memory\nstatus: active\nlabel: rule\n"
                'holdout_until: "2020-01-01"\n---\nbody\n'
            )
        }
    )
    brief = render_brief(classify(vault, NOW), NOW)
    assert "- projects/p/memory/m.md: last seen 2020-01-01" in brief
    assert "Nothing is waiting." not in brief
    # where the spec's lists need the room, the extra sections give way
    assert "last seen 2020-01-01" not in render_brief(classify(vault, NOW), NOW, limit=400)


def test_provenance_dates_its_entry_by_the_latest_date_its_receipts_name() -> None:
    from vaultkeeper.scan.memory import facts_of

    receipts = ["transcripts/2026-03-01.jsonl:4", "no date here", "x 2026-02-30 y", 20260901]
    assert facts_of("projects/p/memory/m.md", {"provenance": receipts})[5] == "2026-03-01"
    assert facts_of("projects/p/memory/m.md", {"provenance": ["none"]})[5] is None
    assert facts_of("projects/p/memory/m.md", {"provenance": "2026-03-01"})[5] is None


def first(lines: list[str]) -> str:
    [line] = lines
    return line


def test_on_equal_dates_the_line_names_the_first_source_in_order() -> None:
    old = dt.date.fromisoformat(OLD)
    rel = "projects/p/memory/m.md"
    every = facts(holdout_until=OLD, last_validated=OLD, provenance_date=OLD)
    assert "(uses log, " in first(stale(every, Usage({rel: old}, None, {rel: old})))
    assert "(uses log, " in first(stale(every, Usage({rel: old, rel[:-3]: old}, None, {})))
    assert "(last_validated, " in first(stale(every, Usage({}, None, {rel: old})))
    assert "(re-checked, " in first(stale(facts(provenance_date=OLD), Usage({}, None, {rel: old})))
    assert "(provenance, " in first(stale(facts(holdout_until=OLD, provenance_date=OLD)))
    older = (old - dt.timedelta(days=5)).isoformat()
    assert "(uses log, " in first(
        stale(facts(last_validated=older), Usage({rel[:-3]: old}, None, {}))
    )
