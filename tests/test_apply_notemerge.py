"""A lesson both machines re-checked between two syncs: its receipt lists merge as a union."""

from __future__ import annotations

from vaultkeeper.apply.notemerge import is_note_path, merge_note_bytes


def note(status: str, provenance: str, body: str = "") -> bytes:
    return (
        f"---\nname: flaky\ndescription: Retry once\ntype: memory\nstatus: {status}\n"
        f"label: inferred\nprovenance: {provenance}\n---\n\n# flaky\n\nRetry once.\n{body}"
    ).encode()


def test_receipts_appended_on_both_sides_are_all_kept_once() -> None:
    base = note("held_out", '["a.md:1"]')
    ours = note("active", '["a.md:1", "b.md:2"]')
    theirs = note("active", '["a.md:1", "c.md:3", "b.md:2"]', body="Checked by hand.\n")
    result = merge_note_bytes(base, ours, theirs)
    assert result.conflicts == 0
    assert result.text == note("active", '["a.md:1", "b.md:2", "c.md:3"]', "Checked by hand.\n")
    other = merge_note_bytes(base, theirs, ours)
    assert (other.conflicts, other.text.count(b'"c.md:3"')) == (0, 1)


def test_one_machine_passes_the_lesson_the_other_fails_it_a_conflict() -> None:
    base = note("held_out", "[]")
    result = merge_note_bytes(base, note("active", '["b.md:2"]'), note("archived", '["c.md:3"]'))
    assert result.conflicts == 1
    assert b"<<<<<<< ours\nstatus: active\n" in result.text
    assert b'provenance: ["b.md:2", "c.md:3"]' in result.text


def test_a_list_in_another_shape_is_gits() -> None:
    base = note("held_out", "[]")
    ours = note("active", "[b.md:2, 3]")  # not all strings
    theirs = note("active", '["c.md:3"]')
    assert merge_note_bytes(base, ours, theirs).conflicts == 1


def test_which_paths_are_notes() -> None:
    assert is_note_path("projects/api/memory/flaky.md")
    assert not any(is_note_path(p) for p in (None, "patterns/registry.md", "projects.md"))
