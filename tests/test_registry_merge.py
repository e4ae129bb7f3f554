"""The registry merge: counters by arithmetic, every other line exactly as git merges it."""

from __future__ import annotations

import datetime as dt
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vaultkeeper.registry.merge import merge_bytes, merge_files, merge_texts

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

LABEL = "patterns/registry.md"


def block(name: str, body: str, count: int, last: str, promoted: str | None = None) -> str:
    text = f"### {name}\n{body}\n\n**success count:** {count}\n**last used:** {last}\n"
    return text + (f"**promoted:** {promoted} -> [[skills/{name}/SKILL]]\n" if promoted else "")


def registry(*blocks: str) -> str:
    return "# Pattern registry\n\n" + "\n".join(blocks)


def merge(base: str, ours: str, theirs: str) -> tuple[str, int, tuple[str, ...]]:
    result = merge_texts(base, ours, theirs, LABEL)
    return result.text.decode("utf-8"), result.conflicts, result.notes


def git_merge_file(tmp: Path, ours: bytes, base: bytes, theirs: bytes) -> tuple[bytes, int]:
    """git's own merge of three texts, run here independently of vaultkeeper.registry.merge."""
    tmp.mkdir(parents=True, exist_ok=True)
    names = []
    for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
        (tmp / name).write_bytes(data)
        names.append(str(tmp / name))
    labels = ["-L", "ours", "-L", "base", "-L", "theirs"]
    done = subprocess.run(["git", "merge-file", "-p", *labels, *names], capture_output=True)
    assert 0 <= done.returncode < 128, done.stderr
    return done.stdout, done.returncode


A = block("alpha", "Alpha body.", 2, "2026-01-01")
B = block("beta", "Beta body.", 0, "2025-01-01")
C = block("gamma", "Gamma body.", 1, "2025-06-01")


def test_uses_on_both_sides_add_up_and_the_later_date_wins() -> None:
    base = registry(A, B)
    ours = registry(block("alpha", "Alpha body.", 3, "2026-02-01"), B)
    theirs = registry(block("alpha", "Alpha body.", 5, "2026-01-15"), B)
    text, conflicts, notes = merge(base, ours, theirs)
    assert conflicts == 0 and notes == ()
    assert text == registry(block("alpha", "Alpha body.", 6, "2026-02-01"), B)


def test_plain_git_would_conflict_on_the_same_counts(tmp_path: Path) -> None:
    # the reason for the driver: git alone marks this as a conflict
    base = registry(A)
    ours = registry(block("alpha", "Alpha body.", 3, "2026-02-01"))
    theirs = registry(block("alpha", "Alpha body.", 4, "2026-02-02"))
    assert merge(base, ours, theirs)[1] == 0
    assert git_merge_file(tmp_path, ours.encode(), base.encode(), theirs.encode())[1] == 1


def test_a_block_new_on_both_sides_has_base_zero() -> None:
    base = registry(A)
    ours = registry(A, block("delta", "Delta.", 1, "2026-03-01"))
    theirs = registry(A, block("delta", "Delta.", 2, "2026-03-04"))
    text, conflicts, _ = merge(base, ours, theirs)
    assert conflicts == 0
    assert text == registry(A, block("delta", "Delta.", 3, "2026-03-04"))


def test_a_block_new_on_one_side_is_taken_as_is() -> None:
    base = registry(A, B)
    ours = registry(A, B, block("delta", "Delta.", 0, "2026-03-01"))
    theirs = registry(block("alpha", "Alpha body.", 3, "2026-02-01"), B)
    text, conflicts, _ = merge(base, ours, theirs)
    assert conflicts == 0
    assert text == registry(
        block("alpha", "Alpha body.", 3, "2026-02-01"), B, block("delta", "Delta.", 0, "2026-03-01")
    )


def test_promoted_is_kept_and_the_earlier_date_wins() -> None:
    base = registry(A)
    ours = registry(block("alpha", "Alpha body.", 3, "2026-02-01", promoted="2026-02-03"))
    theirs = registry(block("alpha", "Alpha body.", 2, "2026-01-01", promoted="2026-01-20"))
    text, conflicts, _ = merge(base, ours, theirs)
    assert conflicts == 0
    assert text == registry(block("alpha", "Alpha body.", 3, "2026-02-01", promoted="2026-01-20"))


def test_a_promoted_line_one_side_removed_is_kept() -> None:
    promoted = block("alpha", "Alpha body.", 2, "2026-01-01", promoted="2026-01-05")
    base = registry(promoted, B)
    ours = registry(A, B)
    theirs = registry(promoted, block("beta", "Beta body.", 1, "2026-04-01"))
    text, conflicts, _ = merge(base, ours, theirs)
    assert conflicts == 0
    assert text == registry(promoted, block("beta", "Beta body.", 1, "2026-04-01"))


def test_a_pruned_block_stays_deleted_and_the_uses_are_named() -> None:
    base = registry(A, B, C)
    ours = registry(A, C)  # a person pruned beta
    theirs = registry(A, block("beta", "Beta body.", 2, "2026-05-01"), C)
    text, conflicts, notes = merge(base, ours, theirs)
    assert conflicts == 0
    assert text == registry(A, C)
    assert len(notes) == 1
    assert "### beta was deleted on ours and stays deleted" in notes[0]
    assert "2 use(s) counted on theirs (last used 2026-05-01)" in notes[0]
    assert notes[0].startswith(f"{LABEL}:")


def test_a_renamed_block_is_not_taken_for_a_pruned_one() -> None:
    base = registry(A, B, C)
    ours = registry(A, B.replace("### beta", "### beta-renamed"), C)
    theirs = registry(A, block("beta", "Beta body.", 2, "2026-05-01"), C)
    text, conflicts, notes = merge(base, ours, theirs)
    assert (conflicts, notes) == (0, ())
    assert text == registry(A, block("beta-renamed", "Beta body.", 2, "2026-05-01"), C)
    # counted on the renaming side too: the counts still add up
    ours = registry(A, block("beta-renamed", "Beta body.", 1, "2026-05-03"), C)
    text, conflicts, notes = merge(base, ours, theirs)
    assert (conflicts, notes) == (0, ())
    assert text == registry(A, block("beta-renamed", "Beta body.", 3, "2026-05-03"), C)


def test_a_pruned_block_edited_on_the_other_side_is_a_conflict() -> None:
    base = registry(A, B, C)
    ours = registry(A, C)
    theirs = registry(A, block("beta", "Beta body, rewritten.", 2, "2026-05-01"), C)
    text, conflicts, notes = merge(base, ours, theirs)
    assert conflicts == 1 and notes == ()
    assert "<<<<<<< ours\n" in text and ">>>>>>> theirs\n" in text
    assert "Beta body, rewritten." in text and "**success count:** 2" in text


def test_both_sides_changing_one_other_line_is_a_conflict_counters_still_merged() -> None:
    base = registry(A, B)
    ours = registry(block("alpha", "Alpha, ours.", 3, "2026-02-01"), B)
    theirs = registry(block("alpha", "Alpha, theirs.", 4, "2026-02-02"), B)
    text, conflicts, _ = merge(base, ours, theirs)
    assert conflicts == 1
    assert "<<<<<<< ours\nAlpha, ours.\n=======\nAlpha, theirs.\n>>>>>>> theirs\n" in text
    assert "**success count:** 5\n**last used:** 2026-02-02\n" in text


def test_a_missing_last_used_line_added_on_both_sides() -> None:
    bare = "### alpha\nAlpha body.\n\n**success count:** 2\n"
    base = registry(bare)
    ours = registry(bare.replace("2\n", "3\n**last used:** 2026-02-01\n"))
    theirs = registry(bare.replace("2\n", "3\n**last used:** 2026-02-07\n"))
    text, conflicts, _ = merge(base, ours, theirs)
    assert conflicts == 0
    assert text == registry(bare.replace("2\n", "4\n**last used:** 2026-02-07\n"))


def test_crlf_lines_keep_their_endings() -> None:
    def crlf(s: str) -> str:
        return s.replace("\n", "\r\n")

    base = crlf(registry(A))
    ours = crlf(registry(block("alpha", "Alpha body.", 3, "2026-02-01")))
    theirs = crlf(registry(block("alpha", "Alpha body.", 3, "2026-01-02")))
    text, conflicts, _ = merge(base, ours, theirs)
    assert conflicts == 0
    assert text == crlf(registry(block("alpha", "Alpha body.", 4, "2026-02-01")))


def test_an_unreadable_count_is_merged_as_plain_text() -> None:
    base = registry(A)
    ours = registry(A.replace("**success count:** 2", "**success count:** two"))
    theirs = registry(A.replace("**success count:** 2", "**success count:** 3"))
    text, conflicts, _ = merge(base, ours, theirs)
    assert conflicts == 1
    assert "**success count:** two\n=======\n**success count:** 3\n" in text


def test_merge_files_writes_ours_and_keeps_its_bom(tmp_path: Path) -> None:
    bom = "\ufeff".encode()
    paths = {}
    for name, text in (
        ("base", registry(A)),
        ("ours", registry(block("alpha", "Alpha body.", 3, "2026-02-01"))),
        ("theirs", registry(block("alpha", "Alpha body.", 4, "2026-01-01"))),
    ):
        paths[name] = tmp_path / name
        paths[name].write_bytes(bom + text.encode())
    result = merge_files(paths["base"], paths["ours"], paths["theirs"], LABEL)
    assert result.conflicts == 0
    expected = bom + registry(block("alpha", "Alpha body.", 5, "2026-02-01")).encode()
    assert paths["ours"].read_bytes() == expected == result.text
    assert (
        paths["theirs"].read_bytes()
        == bom + registry(block("alpha", "Alpha body.", 4, "2026-01-01")).encode()
    )


def test_a_file_that_is_not_utf8_is_merged_by_git_alone(tmp_path: Path) -> None:
    base = b"a\n\xff\nb\n"
    ours = b"a2\n\xff\nb\n"
    theirs = b"a\n\xff\nb2\n"
    result = merge_bytes(base, ours, theirs, LABEL)
    assert (result.text, result.conflicts) == git_merge_file(tmp_path, ours, base, theirs)
    assert result.text == b"a2\n\xff\nb2\n"


# -- property: random registries, random uses and edits on both sides -------------------

NAMES = ("alpha", "beta", "gamma", "delta", "eps")
BODIES = ("Body one.", "Body two.", "Body three.")
DAY0 = dt.date(2026, 1, 1)


@st.composite
def scenario(draw: st.DrawFn) -> dict[str, object]:
    names = draw(st.lists(st.sampled_from(NAMES[:4]), min_size=1, max_size=4, unique=True))
    base = {
        n: (draw(st.sampled_from(BODIES)), draw(st.integers(0, 5)), draw(st.integers(0, 30)))
        for n in names
    }
    sides = []
    for _ in range(2):
        side: dict[str, object] = {}
        for n in names:
            side[n] = draw(
                st.one_of(
                    st.just(("keep",)),
                    st.tuples(st.just("use"), st.integers(1, 3), st.integers(0, 40)),
                    st.tuples(st.just("edit"), st.sampled_from(BODIES)),
                    st.tuples(st.just("promote"), st.integers(31, 60)),
                    st.just(("delete",)),
                )
            )
        side["__new__"] = draw(st.booleans())
        sides.append(side)
    return {"names": names, "base": base, "sides": sides}


State = dict[str, tuple[str, int, int, "int | None"]]  # name -> body, count, day, promoted day


def side_state(
    scn: dict[str, object], side: dict[str, object] | None
) -> tuple[State, dict[str, int]]:
    """One side's blocks (in file order) after its operations, and the uses it added."""
    base = scn["base"]
    assert isinstance(base, dict)
    out: State = {}
    uses: dict[str, int] = {}
    for name, (body, count, day) in base.items():
        op = side[name] if side else ("keep",)
        assert isinstance(op, tuple)
        promoted = None
        if op[0] == "delete":
            continue
        if op[0] == "use":
            count, day, uses[name] = count + op[1], day + op[2], op[1]
        elif op[0] == "edit":
            body = op[1]
        elif op[0] == "promote":
            promoted = op[1]
        out[name] = (body, count, day, promoted)
    if side and side["__new__"]:
        out["eps"], uses["eps"] = ("New here.", 1, 59, None), 1
    return out, uses


def text_of(state: State) -> str:
    def day(n: int) -> str:
        return (DAY0 + dt.timedelta(n)).isoformat()

    return registry(
        *(
            block(n, b, c, day(d), None if p is None else day(p))
            for n, (b, c, d, p) in state.items()
        )
    )


def spec_normalised(b: State, o: State, t: State, sides: list[dict[str, object]]) -> None:
    """Set every counter to the value the issue's rules give, in all three versions (in
    place): then git's merge of the three is the merge the driver must produce."""
    for name in {*o, *t}:
        if name in o and name in t:
            base_count = b[name][1] if name in b else 0
            count = o[name][1] + t[name][1] - base_count
            day = max(o[name][2], t[name][2])
            promos = [x[3] for x in (o[name], t[name]) if x[3] is not None]
            for state in (b, o, t):
                if name in state:
                    body, _, _, promoted = state[name]
                    state[name] = (body, count, day, min(promos) if promoted else None)
        elif name in b:
            kept, side = (o, sides[0]) if name in o else (t, sides[1])
            if side[name][0] == "use":  # only counted: the deletion goes through
                kept[name] = b[name]


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(scn=scenario())
def test_random_merges_are_gits_merge_with_counters_by_the_rules(
    scn: dict[str, object], tmp_path: Path
) -> None:
    sides = scn["sides"]
    assert isinstance(sides, list)
    b, _ = side_state(scn, None)
    o, ours_uses = side_state(scn, sides[0])
    t, theirs_uses = side_state(scn, sides[1])
    text, conflicts, _ = merge(text_of(b), text_of(o), text_of(t))

    spec_normalised(b, o, t, sides)
    # a block new on a side (or on both, the same once its counters are merged) is put
    # back whole after the merge (registry/merge.py set_aside): the rest is git's merge;
    # the block is there once, with its counters
    new = None
    for state in [x for x in (o, t) if "eps" in x]:
        body, count, day, _ = state.pop("eps")
        new = block("eps", body, count, (DAY0 + dt.timedelta(day)).isoformat())
    expected, git_conflicts = git_merge_file(tmp_path, *(text_of(x).encode() for x in (o, b, t)))
    if new is not None:  # with the blank line that parts it from the text above, or not
        assert text.count(new) == 1
        assert expected.decode() in (text.replace("\n" + new, ""), text.replace(new, ""))
    else:
        assert text == expected.decode()
    assert conflicts == git_conflicts
    if conflicts:
        return
    # the counter arithmetic, stated directly: base + every side's uses, the latest date
    got = {
        m.group(1): (int(m.group(2)), m.group(3))
        for m in re.finditer(
            r"^### (\w+)\n(?:.*\n)*?\*\*success count:\*\* (\d+)\n\*\*last used:\*\* (\S+)",
            text,
            re.M,
        )
    }
    base_counts = {n: c for n, (_, c, _, _) in side_state(scn, None)[0].items()}
    for name, (count, _) in got.items():
        assert count == base_counts.get(name, 0) + ours_uses.get(name, 0) + theirs_uses.get(name, 0)


def test_a_use_on_the_second_of_two_same_named_blocks_survives_the_first_s_removal() -> None:
    """Issue 21 item 9: the blocks were keyed by ordinal alone, so theirs' removal of the
    first `### foo` made ours' use on the second look deleted (and was dropped)."""
    first, second = (
        block("foo", "First foo.", 1, "2026-01-01"),
        block("foo", "Second foo.", 4, "2026-02-01"),
    )
    base = registry(A, first, second)
    ours = registry(A, first, block("foo", "Second foo.", 5, "2026-06-01"))
    theirs = registry(A, second)  # a person removed the duplicate
    text, conflicts, notes = merge(base, ours, theirs)
    assert (conflicts, notes) == (0, ())
    assert text == registry(A, block("foo", "Second foo.", 5, "2026-06-01"))


def test_a_deleted_block_s_use_does_not_move_to_a_new_block_with_its_body() -> None:
    """A pruned block and an unrelated new block sharing its body are two blocks."""
    base = registry(A, B, C)
    ours = registry(A, block("beta", "Beta body.", 2, "2026-05-01"), C)
    theirs = registry(A, C, block("gamma-new", "Beta body.", 0, "2026-06-01"))
    text, conflicts, notes = merge(base, ours, theirs)
    assert conflicts == 0
    assert text == registry(A, C, block("gamma-new", "Beta body.", 0, "2026-06-01"))
    assert len(notes) == 1 and "### beta was deleted on theirs and stays deleted" in notes[0]


def test_the_same_blocks_new_on_both_sides_in_another_order_are_kept_once_each() -> None:
    """Both machines first cited two auto memories, in the other order: each block once,
    its counts added up (a block new on a side counts from 0)."""
    x1, y1 = block("x", "X body.", 1, "2026-01-02"), block("y", "Y body.", 1, "2026-01-03")
    x2, y2 = block("x", "X body.", 1, "2026-01-04"), block("y", "Y body.", 1, "2026-01-01")
    text, conflicts, _ = merge(registry(A), registry(A, x1, y1), registry(A, y2, x2))
    assert conflicts == 0
    assert text == registry(
        A, block("x", "X body.", 2, "2026-01-04"), block("y", "Y body.", 2, "2026-01-03")
    )
