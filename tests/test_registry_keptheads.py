"""A registry file's blocks as the scan's rows keep them read back exactly as parsing the
file gives them, and a changed file's blocks that take their sentence and hash from the
old row (by the fingerprint of their text) are exactly what parsing gives: random edits
of random registries."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultkeeper.registry.blocks import parse_heads
from vaultkeeper.registry.keptheads import CachedHead, _candidate, _kept_heads

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
        head.hash if _candidate(head.count, head.promoted) else None,  # as a scan asks
        # asked, and kept, only of a block whose counters do not read (a second counter
        # line of a readable block is lint's to report, not a scan's)
        [(p.line, p.reason) for p in head.problems()]
        if head.count is None or head.last_used is None
        else None,
    )


def round_trip(value: Any) -> Any:
    return json.loads(json.dumps(value))  # the rows are JSON


def kept(text: str, old: Any = None) -> list[Any]:
    return round_trip(_kept_heads(parse_heads(PATH, REL, text), text, old))


def check(old_text: str, new_text: str) -> None:
    """The new text's blocks, kept with the old text's row and read back, are as parsed."""
    whole = [shown(h) for h in parse_heads(PATH, REL, new_text)]
    again = kept(new_text, kept(old_text))
    assert again == kept(new_text)
    assert [shown(CachedHead(PATH, REL, k, {})) for k in again] == whole


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


@settings(max_examples=300, deadline=None)
@given(edited())
def test_kept_blocks_read_back_as_parsed(texts: tuple[str, str]) -> None:
    check(*texts)


def test_an_unchanged_block_takes_its_sentence_from_the_old_row() -> None:
    text = "".join(
        f"### b{k}\nWhat b{k} does. More.\n**success count:** {k}\n\n" for k in range(50)
    )
    old = kept(text)
    old[7][5] = "kept sentence"  # only a block whose text is the same could have it
    new = text.replace("**success count:** 3\n", "**success count:** 4\n")
    again = _kept_heads(parse_heads(PATH, REL, new), new, old)
    assert again[7][5] == "kept sentence" and again[3][5] == "What b3 does."


def test_kept_blocks_not_as_written_are_not_trusted() -> None:
    rows = kept("".join(f"### b{k}\n**success count:** {k}\n\n" for k in range(20)))
    for broken in (
        [*rows[0][:1], "one", *rows[0][2:]],  # a line as text
        rows[0][:-1],  # a field short
        [*rows[0][:7], "not a list", *rows[0][8:]],
        [*rows[0][:2], 5, *rows[0][3:]],  # a count as a number
    ):
        with pytest.raises((TypeError, ValueError)):
            CachedHead(PATH, REL, round_trip(broken), {})
