"""What a merge of two memory or decision files carries into KEEP's merged part."""

from __future__ import annotations

from pathlib import Path

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
