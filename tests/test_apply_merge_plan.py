"""What a merge of two memory or decision files carries into KEEP's merged part."""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultkeeper import config
from vaultkeeper.apply.decision import Decision
from vaultkeeper.apply.merge import plan


def entry(name: str, kind: str, extra: str) -> str:
    return (
        f"---\nname: {name}\ndescription: Retry a flaky CI job once\ntype: {kind}\n{extra}---\n"
        f"\n# {name}\n\nbody of {name}\n"
    )


def test_label_status_and_falsification_condition_go_into_the_merged_part(make_vault) -> None:
    drop = entry(
        "b", "decision",
        "status: held_out\nlabel: validated-override\n"
        'holdout_until: "2026-01-01"\nfalsification_condition: CI flakes\n  twice in a week\n',
    )  # fmt: skip
    vault: Path = make_vault(
        {
            "projects/p/memory/a.md": entry("a", "memory", "status: active\nlabel: rule\n"),
            "projects/p/memory/b.md": drop,
        }
    )
    found = plan(vault, Decision("merge", "projects/p/memory/a.md", drop="projects/p/memory/b.md"))
    _, text = found.texts["projects/p/memory/a.md"]
    part = text.split(f"## {config.MERGED_FROM} b\n", 1)[1]
    assert part.startswith(
        "\nDescription: Retry a flaky CI job once\nLabel: validated-override\n"
        "Status: held_out\nFalsification condition: CI flakes twice in a week\n"
    )
    assert "+Label: validated-override" in found.diff_text  # what the person is shown


def test_a_merge_queued_for_a_person_does_not_derive_the_report(make_vault, monkeypatch) -> None:
    """What the scan said of the pair is in the title a person is shown; a merge queued
    without one shows nobody a title, so it does not pay for the report (0.5 s at 50k)."""
    import datetime as dt

    from vaultkeeper.apply import merge
    from vaultkeeper.scan import last

    vault: Path = make_vault(
        {
            "projects/p/memory/a.md": entry("a", "memory", "status: active\n"),
            "projects/p/memory/b.md": entry("b", "memory", "status: active\n"),
        }
    )

    def derived(_: Path) -> None:
        raise AssertionError("the report was derived")

    monkeypatch.setattr(last, "last_report", derived)
    now = dt.datetime(2026, 12, 1, tzinfo=dt.timezone.utc)
    decision = Decision(
        "merge", "projects/p/memory/a.md", "https://x.test/1", drop="projects/p/memory/b.md"
    )
    assert merge.merge(vault, decision, now).outcome == "ask"
    with pytest.raises(AssertionError, match="derived"):
        assert merge.plan(vault, decision).title  # a person shown the title: the scan's word
