"""A changed registry file read again only where it changed gives exactly what parsing
the whole file gives: random edits of random registries, with small pages so that the
unchanged ends and the region between them are exercised on small texts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultkeeper.registry import delta as registrydelta
from vaultkeeper.registry.blocks import parse_heads
from vaultkeeper.registry.keptheads import _candidate

PATH, REL = Path("/v/patterns/registry.md"), "patterns/registry.md"
LINES = [
    "### alpha",
    "### beta",
    "### alpha",  # a name used twice
    "###",
    "## Section",
    "# Title",
    "#### deeper",
    "**success count:** 3",
    "**success count:** 0",
    "**success count:** many",
    "- **last used:** 2026-01-02",
    "**last used:** someday",
    "**promoted:** 2026-01-03 -> [[skills/a/SKILL]]",
    "Retry flaky calls. Then more.",
    "Caf\u00e9 notes \u2014 ok.",
    "```",
    "```python",
    "~~~",
    "",
    "plain text",
    "---",
    "...",  # closes a frontmatter too
    "### gamma\r",  # a CRLF file's lines
    "**success count:** 2\r",
    "```\r",
]


def shown(head: Any) -> tuple[Any, ...]:
    return (
        head.name,
        head.line,
        head.count,
        head.count_raw,
        head.last_used,
        head.last_used_raw,
        head.promoted,
        head.sentence(),
        head.hash() if _candidate(head.count, head.promoted) else None,  # as a scan asks
        # asked, and kept, only of a block whose counters do not read (a second counter
        # line of a readable block is lint's to report, not a scan's)
        [(p.line, p.reason) for p in head.problems()]
        if head.count is None or head.last_used is None
        else None,
    )


def round_trip(value: Any) -> Any:
    return json.loads(json.dumps(value))  # the cache is JSON


def check(old_text: str, new_text: str) -> bool:
    """Whether the region path was taken; asserts it agrees with a whole parse."""
    _, kept, shape = registrydelta.reread(PATH, REL, old_text, None, {})
    whole = [shown(h) for h in parse_heads(PATH, REL, new_text)]
    _, fresh_kept, fresh_shape = registrydelta.reread(PATH, REL, new_text, None, {})
    parsed: list[int] = []
    real = registrydelta.parse_heads

    def counting(*args: Any) -> Any:
        parsed.append(1)
        return real(*args)

    registrydelta.parse_heads = counting  # type: ignore[assignment]
    try:
        heads, new_kept, new_shape = registrydelta.reread(
            PATH, REL, new_text, round_trip([kept, shape]), {}
        )
    finally:
        registrydelta.parse_heads = real  # type: ignore[assignment]
    assert [shown(h) for h in heads] == whole
    assert round_trip(new_kept) == round_trip(fresh_kept) and new_shape == fresh_shape
    return not parsed


@st.composite
def edited(draw: st.DrawFn) -> tuple[str, str]:
    lines = draw(st.lists(st.sampled_from(LINES), max_size=40))
    old = "\n".join(lines) + draw(st.sampled_from(["", "\n"]))
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(lines)))
        kind = draw(st.sampled_from(["insert", "delete", "replace"]))
        if kind == "insert":
            lines.insert(at, draw(st.sampled_from(LINES)))
        elif lines and at < len(lines):
            if kind == "delete":
                del lines[at]
            else:
                lines[at] = draw(st.sampled_from(LINES))
    new = "\n".join(lines) + draw(st.sampled_from(["", "\n"]))
    for _ in range(draw(st.integers(0, 2))):  # a character in or out: lines join and split
        at = draw(st.integers(0, len(new)))
        if draw(st.booleans()):
            new = new[:at] + draw(st.sampled_from(list("\n#` *~-a\u00e9"))) + new[at:]
        else:
            new = new[:at] + new[at + 1 :]
    return old, new


@pytest.mark.parametrize("page", [1, 8, 32, 4096])
@settings(max_examples=200, deadline=None)
@given(edited())
def test_reading_where_it_changed_is_reading_it_all(page: int, texts: tuple[str, str]) -> None:
    old, new = texts
    registrydelta.PAGE, saved = page, registrydelta.PAGE
    try:
        check(old, new)
    finally:
        registrydelta.PAGE = saved


def test_a_moved_count_reads_only_its_own_block(monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = [
        f"### p{k}\nWhat p{k} does. More.\n\n**success count:** {k % 3}\n"
        f"**last used:** 2026-0{1 + k % 9}-01\n\n"
        for k in range(400)
    ]
    old = "# Patterns\n\n" + "".join(blocks)
    new = old.replace("### p200\nWhat p200 does. More.\n\n**success count:** 2", "### p200\n"
                      "What p200 does. More.\n\n**success count:** 3")  # fmt: skip
    assert new != old
    seen: list[tuple[int, int]] = []
    real = registrydelta.index_range

    def spying(nl_text: str, start: int, end: int) -> Any:
        seen.append((start, end))
        return real(nl_text, start, end)

    monkeypatch.setattr(registrydelta, "index_range", spying)
    assert check(old, new)
    [(start, end)] = seen
    assert end - start < 3 * registrydelta.PAGE  # a page or two around the change, not 40 KB
    # a block put in the middle moves the lines of all after it
    moved = new.replace("### p300\n", "### inserted\n**success count:** 1\n\n### p300\n")
    assert check(new, moved)


def test_a_fence_left_open_makes_the_file_read_whole() -> None:
    body = "".join(f"### b{k}\n**success count:** 1\n\n" for k in range(3000))
    old = "# R\n\n" + body
    new = old.replace("### b100\n", "### b100\n```\n", 1)  # everything after is code now
    assert not check(old, new)
    assert len(parse_heads(PATH, REL, new)) == 101


def test_kept_blocks_not_as_written_are_not_trusted() -> None:
    text = "".join(f"### b{k}\n**success count:** {k}\n\n" for k in range(2000))
    _, kept, shape = registrydelta.reread(PATH, REL, text, None, {})
    new = text.replace("### b5\n**success count:** 5", "### b5\n**success count:** 6")
    whole = [shown(h) for h in parse_heads(PATH, REL, new)]
    for broken in (
        [[[*k[:9], k[10], k[9]] for k in kept], shape],  # start after stop
        [kept[::-1], shape],  # out of order
        [[[*k[:1], "one", *k[2:]] for k in kept], shape],  # a line as text
        [kept, [shape[0], shape[1], [None]]],
        [kept[:-1] + [kept[-1][:-1]], shape],
        [[[*k[:7], "not a list", *k[8:]] for k in kept], shape],
    ):
        heads, _, _ = registrydelta.reread(PATH, REL, new, round_trip(broken), {})
        assert [shown(h) for h in heads] == whole


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # the "\n" before a heading goes: the heading joins the line before it
        ("### a\nx\n### b\n**success count:** 1\n", "### a\nx### b\n**success count:** 1\n"),
        ("### a\nx\n### b\n**success count:** 1\n", "### a\nx\n\n### b\n**success count:** 1\n"),
        # the heading itself changes level: it ends, or stops ending, the block before
        ("### a\n**success count:** 1\n### b\n", "### a\n**success count:** 1\n## b\n"),
        ("### a\n**success count:** 1\n\n### b\n", "### a\n**success count:** 1\n\n#### b\n"),
        ("### a\n**success count:** 1\n#### b\n", "### a\n**success count:** 1\n### b\n"),
        ("---\nx: 1\n---\n### a\n", "---\nx: 2\n---\n### a\n"),  # frontmatter
        # a kept block with a second count line: readable, so no problem is kept for it
        (
            "### a\n**success count:** 3\n**success count:** 3\n**last used:** 2026-01-02\n"
            "### b\n### c\n",
        )
        * 2,  # fmt: skip
    ],
)
def test_edits_at_the_edge_of_the_change(
    old: str, new: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(registrydelta, "PAGE", 1)  # the change is exactly the edited text
    check(old, new)


@pytest.mark.parametrize("page", [1, 8])
@pytest.mark.parametrize(
    "closing",
    [
        lambda old: old + "---\n",  # an opening --- that never closed, closed at the end
        lambda old: old + "...\n",
        lambda old: old.replace("### b\n", "---\n### b\n"),  # or before the last block
    ],
    ids=["dashes-at-end", "dots-at-end", "dashes-before-last"],
)
def test_a_frontmatter_closed_only_now_hides_the_blocks_kept_before_it(
    page: int, closing: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file opening with --- and no closing line has no frontmatter: its blocks count.
    A closing line written further down makes all above it frontmatter, though the
    text before the change, and so the blocks kept from it, is as it was."""
    monkeypatch.setattr(registrydelta, "PAGE", page)
    old = "---\n### a\n**success count:** 1\n\n### c\nsome text here\n\n### b\nx\n"
    assert callable(closing)
    check(old, closing(old))
