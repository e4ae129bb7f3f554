"""Minimal edits: one value changes one line (or one value's lines); every other byte stays."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.registry.blocks import parse_blocks
from vaultkeeper.store.edit import (
    append_to_list,
    get_frontmatter_raw,
    insert_line_after,
    quoted,
    replace_counter_value,
    replace_line,
    set_frontmatter_value,
    yaml_scalar,
)
from vaultkeeper.store.model import parse_note, split_lines

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# -- generating valid frontmatter whose line layout the test knows ------------------

YAML_WORDS = {"true", "false", "yes", "no", "on", "off", "null", "y", "n"}
keys_st = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True).filter(
    lambda k: k not in YAML_WORDS
)
texts = st.text(max_size=15)
comments = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=12).map(
    lambda c: "# " + c
)


@dataclass(frozen=True)
class Field:
    key: str
    kind: str  # scalar | quoted | int | flow | block | nested | empty | emptyflow
    head: str  # the key line's text after "key:", without the comment
    extra: tuple[str, ...]  # continuation lines (block items, nested keys)
    comment: str | None
    after: tuple[str, ...]  # comment / blank lines after the value: never part of it
    value: object

    def lines(self) -> list[str]:
        first = f"{self.key}:{self.head}" + (f" {self.comment}" if self.comment else "")
        return [first, *self.extra, *self.after]


@st.composite
def fields(draw: st.DrawFn, key: str) -> Field:
    kind = draw(
        st.sampled_from(
            ["scalar", "prose", "quoted", "int", "flow", "block", "nested", "empty", "emptyflow"]
        )
    )
    comment = draw(st.none() | comments)
    after = tuple(draw(st.lists(st.sampled_from(["", "# between keys"]), max_size=2)))
    extra: tuple[str, ...] = ()
    value: object
    if kind == "scalar":
        value = draw(texts)
        head = " " + yaml_scalar(value)  # type: ignore[arg-type]
    elif kind == "prose":  # a plain value with quotes inside: it's, 5'11
        value = draw(st.from_regex(r"[a-z]{1,4}'[a-z]{1,4}( [a-z'\"]{1,5}[a-z])?", fullmatch=True))
        head = " " + str(value)
    elif kind == "quoted":
        value = draw(texts)
        head = "   " + quoted(value)  # type: ignore[arg-type]  # aligned value
    elif kind == "int":
        value = draw(st.integers(0, 10**6))
        head = f" {value}"
    elif kind == "flow":
        items = draw(st.lists(texts, min_size=1, max_size=3))
        value = items
        head = " [" + ", ".join(quoted(i) for i in items) + "]"
    elif kind == "block":
        items = draw(st.lists(texts, min_size=1, max_size=3))
        indent = draw(st.sampled_from(["", "  ", "    "]))
        value = items
        head = ""
        extra = tuple(f"{indent}- {quoted(i)}" for i in items)
    elif kind == "nested":
        value = {"a": 1, "b": "x"}
        head = ""
        extra = ("  a: 1", "  b: x")
    elif kind == "emptyflow":
        value = []
        head = " []"
    else:
        value = None
        head = ""
    return Field(key, kind, head, extra, comment, after, value)


@dataclass(frozen=True)
class Doc:
    fields: tuple[Field, ...]
    nl: str
    body: str

    @property
    def text(self) -> str:
        lines = ["---"]
        for f in self.fields:
            lines.extend(f.lines())
        lines.append("---")
        return self.nl.join(lines) + self.nl + self.body.replace("\n", self.nl)

    def line_of(self, key: str) -> tuple[int, int]:
        """0-based index of the key line and one past its value's last line."""
        i = 1
        for f in self.fields:
            if f.key == key:
                return i, i + 1 + len(f.extra)
            i += len(f.lines())
        raise KeyError(key)

    @property
    def close(self) -> int:
        return 1 + sum(len(f.lines()) for f in self.fields)


@st.composite
def docs(draw: st.DrawFn) -> Doc:
    keys = draw(st.lists(keys_st, min_size=1, max_size=6, unique=True))
    fs = tuple(draw(fields(k)) for k in keys)
    nl = draw(st.sampled_from(["\n", "\r\n"]))
    body = draw(st.sampled_from(["", "\n# Title\n\nbody text\n", "---\nnot frontmatter\n"]))
    return Doc(fs, nl, body)


def meta(text: str) -> dict[str, object]:
    note = parse_note(Path("x.md"), "x.md", text)
    return dict(note.meta)


def assert_endings(text: str, nl: str) -> None:
    for line in split_lines(text):
        assert line.endswith(nl)
        if nl == "\n":
            assert not line.endswith("\r\n")


@SETTINGS
@given(doc=docs(), data=st.data())
def test_set_existing_value_changes_only_its_lines(doc: Doc, data: st.DataObject) -> None:
    text = doc.text
    before = meta(text)
    field = data.draw(st.sampled_from(doc.fields))
    new = data.draw(texts)
    out = set_frontmatter_value(text, field.key, yaml_scalar(new))
    old_lines, new_lines = split_lines(text), split_lines(out)
    start, end = doc.line_of(field.key)
    assert new_lines[:start] == old_lines[:start]
    assert new_lines[start + 1 :] == old_lines[end:]
    changed = new_lines[start]
    assert changed.startswith(f"{field.key}:")
    assert changed.endswith(doc.nl)
    if field.comment:
        assert changed.rstrip("\r\n").endswith(" " + field.comment)
    after = meta(out)
    assert after[field.key] == new
    assert list(after) == list(before)  # key order kept
    assert {k: v for k, v in after.items() if k != field.key} == {
        k: v for k, v in before.items() if k != field.key
    }
    assert_endings(out, doc.nl)
    assert get_frontmatter_raw(out, field.key) == yaml_scalar(new)


@SETTINGS
@given(doc=docs(), key=keys_st, new=texts)
def test_set_missing_key_adds_one_line_before_the_close(doc: Doc, key: str, new: str) -> None:
    assume(key not in {f.key for f in doc.fields})
    text = doc.text
    out = set_frontmatter_value(text, key, quoted(new))
    old_lines, new_lines = split_lines(text), split_lines(out)
    close = doc.close
    assert new_lines == old_lines[:close] + [f"{key}: {quoted(new)}{doc.nl}"] + old_lines[close:]
    after = meta(out)
    assert after[key] == new
    assert list(after) == [*meta(text), key]


@SETTINGS
@given(doc=docs(), data=st.data())
def test_append_to_list(doc: Doc, data: st.DataObject) -> None:
    lists = [f for f in doc.fields if f.kind in ("flow", "block", "emptyflow", "empty")]
    assume(lists)
    field = data.draw(st.sampled_from(lists))
    item = data.draw(texts)
    text = doc.text
    before = meta(text)
    out = append_to_list(text, field.key, item)
    after = meta(out)
    assert after[field.key] == [*(field.value or []), item]  # type: ignore[misc]
    assert {k: v for k, v in after.items() if k != field.key} == {
        k: v for k, v in before.items() if k != field.key
    }
    old_lines, new_lines = split_lines(text), split_lines(out)
    start, end = doc.line_of(field.key)
    if field.kind == "block":  # one new item line after the last item
        assert new_lines[:end] == old_lines[:end]
        assert new_lines[end + 1 :] == old_lines[end:]
        assert new_lines[end].lstrip().startswith("- ")
    else:  # the key's own line changes, nothing else
        assert len(new_lines) == len(old_lines)
        diff = [i for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=True)) if a != b]
        assert diff == [start]
        if field.comment:
            assert new_lines[start].rstrip("\r\n").endswith(" " + field.comment)
    assert_endings(out, doc.nl)


@SETTINGS
@given(doc=docs(), key=keys_st, item=texts)
def test_append_to_missing_list_adds_it(doc: Doc, key: str, item: str) -> None:
    assume(key not in {f.key for f in doc.fields})
    out = append_to_list(doc.text, key, item)
    assert meta(out)[key] == [item]
    assert len(split_lines(out)) == len(split_lines(doc.text)) + 1


# -- registry counters ------------------------------------------------------------------

names = st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True)


@st.composite
def registries(draw: st.DrawFn) -> tuple[str, str]:
    names_ = draw(st.lists(names, min_size=1, max_size=5, unique=True))
    nl = draw(st.sampled_from(["\n", "\r\n"]))
    parts = ["# Pattern registry", "", "Intro."]
    for name in names_:
        bullet = draw(st.sampled_from(["", "- ", "* "]))
        label = draw(st.sampled_from(["**success count:**", "**Success Count:**"]))
        gap = draw(st.sampled_from([" ", "  ", "\t"]))
        count = draw(st.integers(0, 10**4))
        day = draw(st.dates(dt.date(2000, 1, 1), dt.date(2099, 12, 31)))
        parts += ["", f"### {name}", draw(st.sampled_from(["", "Some text.", "#### sub"]))]
        parts += [f"{bullet}{label}{gap}{count}", f"{bullet}**last used:** {day.isoformat()}"]
    return nl.join(parts) + nl, nl


@SETTINGS
@given(reg=registries(), data=st.data())
def test_replace_counter_changes_one_line(reg: tuple[str, str], data: st.DataObject) -> None:
    text, nl = reg
    blocks = parse_blocks(Path("r"), "r", text)
    block = data.draw(st.sampled_from(blocks))
    new = data.draw(st.integers(0, 10**6))
    assert block.count_line is not None and block.last_used_line is not None
    lines = split_lines(text)
    out = replace_line(
        text, block.count_line, replace_counter_value(lines[block.count_line - 1], str(new))
    )
    day = data.draw(st.dates(dt.date(2000, 1, 1), dt.date(2099, 12, 31)))
    out = replace_line(
        out,
        block.last_used_line,
        replace_counter_value(lines[block.last_used_line - 1], day.isoformat()),
    )
    new_lines = split_lines(out)
    assert len(new_lines) == len(lines)
    diff = [i + 1 for i, (a, b) in enumerate(zip(lines, new_lines, strict=True)) if a != b]
    assert set(diff) <= {block.count_line, block.last_used_line}
    # the label keeps its spelling, bullet and spacing; only the number changes
    old_count = lines[block.count_line - 1].rstrip("\r\n")
    kept = old_count[: len(old_count) - len(str(block.count))]
    assert new_lines[block.count_line - 1] == f"{kept}{new}{nl}"
    after = {b.name: b for b in parse_blocks(Path("r"), "r", out)}
    assert after[block.name].count == new
    assert after[block.name].last_used == day
    for other in blocks:
        if other.name != block.name:
            assert after[other.name].text == other.text
    assert_endings(out, nl)


# -- specific cases ----------------------------------------------------------------------

FM = """---
name: x   # the name
description: it's fine # keep me
"status":   held_out
sources: [a, b,]
provenance:
  - one
  # trailing note
relations: {}
---
body
"""


def test_comment_after_a_plain_value_with_an_apostrophe_is_kept() -> None:
    out = set_frontmatter_value(FM, "description", yaml_scalar("new: value"))
    assert 'description: "new: value" # keep me\n' in out
    assert (
        out.replace('description: "new: value" # keep me', "description: it's fine # keep me") == FM
    )


def test_quoted_key_and_aligned_spacing_are_kept() -> None:
    out = set_frontmatter_value(FM, "status", "active")
    assert out == FM.replace('"status":   held_out', '"status":   active')
    assert meta(out)["status"] == "active"


def test_comment_lines_after_a_block_value_are_not_part_of_it() -> None:
    out = set_frontmatter_value(FM, "provenance", "[]")
    assert "  # trailing note\n" in out
    assert meta(out)["provenance"] == []


def test_flow_list_with_trailing_comma() -> None:
    out = append_to_list(FM, "sources", "c")
    assert 'sources: [a, b, "c"]\n' in out
    assert meta(out)["sources"] == ["a", "b", "c"]


def test_a_duplicated_key_is_refused_not_half_edited() -> None:
    text = "---\nstatus: active\nname: x\nstatus: held_out\n---\n"
    with pytest.raises(VaultkeeperError, match="'status' appears on lines 2 and 4"):
        set_frontmatter_value(text, "status", "archived")
    assert set_frontmatter_value(text, "name", "y") == text.replace("name: x", "name: y")


def test_append_to_a_non_list_is_refused() -> None:
    with pytest.raises(VaultkeeperError, match="not a list"):
        append_to_list(FM, "name", "y")


@pytest.mark.parametrize(
    "text", ["no frontmatter\n", "---\nname: x\nnever closed\n"], ids=["none", "unclosed"]
)
def test_files_without_usable_frontmatter_are_refused(text: str) -> None:
    with pytest.raises(VaultkeeperError):
        set_frontmatter_value(text, "status", "active")


@pytest.mark.parametrize(
    "value",
    [
        "0x1f",
        "0b101",
        "yes",
        "No",
        "null",
        "~",
        "2026-09-02",
        "1_000",
        "1e3",
        "a: b",
        "#x",
        "- x",
        "[x]",
        "it's",
        "",
        " lead",
        "trail ",
        "caf\u00e9",
        "a\u2028b",
        "\x7f",
        "\U0001f600",
    ],
)
def test_yaml_scalar_reads_back_and_is_ascii(value: str) -> None:
    for rendered in (yaml_scalar(value), quoted(value)):
        assert rendered.isascii()
        assert yaml.safe_load(f"k: {rendered}\n") == {"k": value}
    assert yaml_scalar("plain-name") == "plain-name"
    assert quoted("2026-09-02") == '"2026-09-02"'


def test_counter_edits_keep_endings_and_add_a_missing_space() -> None:
    assert replace_counter_value("**last used:**\r\n", "2026-01-01") == "**last used:** 2026-01-01"
    assert replace_counter_value("- **success count:**\t7  \n", "8") == "- **success count:**\t8  "
    with pytest.raises(VaultkeeperError):
        replace_counter_value("no counter here", "1")
    text = "a\r\nb\r\nc"
    assert replace_line(text, 2, "B") == "a\r\nB\r\nc"
    assert insert_line_after(text, 1, "x") == "a\r\nx\r\nb\r\nc"
    assert insert_line_after(text, 3, "x") == "a\r\nb\r\nc\r\nx"
