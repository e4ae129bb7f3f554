"""The merge of a skill `apply promote` wrote: its figures merge the same whichever side
is ours; a person's own edits merge as git merges them (conflicts included)."""

from __future__ import annotations

from vaultkeeper.apply.notemerge import is_skill_path, merge_skill_bytes


def skill(date: str, count: int, *evidence: str, extra: str = "") -> bytes:
    items = "".join(f"- {e}\n" for e in evidence)
    return (
        "---\nname: pin-clock\ndescription: Pin the clock.\n---\n\n# pin-clock\n\n"
        f"Pin the clock.{extra}\n\nPromoted from [[patterns/registry#pin-clock]] on {date} "
        f"(success count {count}).\n\n## Evidence\n\n{items}"
    ).encode()


A = "patterns/registry.md:3 (added 2026-11-02)"
B = "references/vault-spec.md:1 (added 2026-11-04)"
C = "https://example.com/ci (added 2026-11-03)"


def merged(base: bytes, ours: bytes, theirs: bytes) -> tuple[bytes, int]:
    result = merge_skill_bytes(base, ours, theirs)
    return result.text, result.conflicts


def test_added_on_both_sides_takes_the_earlier_promotion_and_every_receipt() -> None:
    ours, theirs = skill("2026-11-04", 3, B), skill("2026-11-02", 2, A)
    want = skill("2026-11-02", 2, A, B)
    assert merged(b"", ours, theirs) == (want, 0)
    assert merged(b"", theirs, ours) == (want, 0)


def test_receipts_added_on_both_sides_to_one_skill_are_all_kept_in_date_order() -> None:
    base = skill("2026-11-02", 2, A)
    ours, theirs = skill("2026-11-02", 2, A, B), skill("2026-11-02", 2, A, C)
    assert merged(base, ours, theirs) == (skill("2026-11-02", 2, A, C, B), 0)
    assert merged(base, theirs, ours) == (skill("2026-11-02", 2, A, C, B), 0)


def test_a_receipt_removed_on_one_side_stays_removed() -> None:
    base = skill("2026-11-02", 2, A, C)
    assert merged(base, skill("2026-11-02", 2, C), skill("2026-11-02", 2, A, C, B)) == (
        skill("2026-11-02", 2, C, B),
        0,
    )


def test_a_persons_edits_of_one_line_on_both_sides_stay_a_conflict() -> None:
    base = skill("2026-11-02", 2, A)
    text, conflicts = merged(
        base, skill("2026-11-02", 2, A, extra=" (a)"), skill("2026-11-02", 2, A, extra=" (b)")
    )
    assert conflicts == 1 and b"<<<<<<< ours\nPin the clock. (a)\n" in text


def test_which_paths_are_skills() -> None:
    assert is_skill_path("skills/pin-clock/SKILL.md") and is_skill_path("v/skills/x/SKILL.md")
    assert not any(is_skill_path(p) for p in (None, "SKILL.md", "skills/SKILL.md", "x/y/SKILL.md"))
