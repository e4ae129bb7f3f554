"""status's merge-leftovers signal: markers and counterless blocks in vaultkeeper's files,
read now; nothing reached through a link out of the vault is read."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import MakeVault
from vaultkeeper.status.health import leftovers, merge_signal

MARKED = "a\n<<<<<<< ours\nb\n=======\nc\n>>>>>>> theirs\n"


def test_markers_in_a_skill_and_a_block_without_counters_are_named(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "skills/pin/SKILL.md": MARKED,
            "patterns/registry.md": "# R\n\n### lost\nNo counters.\n### kept\nx\n\n"
            "**success count:** 1\n**last used:** 2026-01-01\n",
            "projects/api/memory/shown.md": "```text\n" + MARKED + "```\n",  # not ours to check
        }
    )
    assert leftovers(vault) == [
        "patterns/registry.md:3: ### lost: no counter lines",
        "skills/pin/SKILL.md:2: conflict markers left by a merge (lines 2-6): keep what each "
        "side meant and delete the marker lines (an index file: `vaultkeeper index` writes "
        "its list again)",
    ]
    signal = merge_signal(vault)
    assert (signal.figure, signal.verdict) == (2, "fail")
    assert (
        signal.detail.startswith("patterns/registry.md:3: ### lost")
        and "(and 1 more)" in signal.detail
    )


def test_a_skills_folder_linked_out_of_the_vault_is_not_read(
    make_vault: MakeVault, tmp_path: Path
) -> None:
    outside = tmp_path / "outside" / "evil"
    outside.mkdir(parents=True)
    (outside / "SKILL.md").write_text(MARKED, encoding="utf-8")
    vault = make_vault()
    (vault / "skills").mkdir()
    (vault / "skills" / "evil").symlink_to(outside)
    assert leftovers(vault) == []
    assert merge_signal(vault).verdict == "ok"
