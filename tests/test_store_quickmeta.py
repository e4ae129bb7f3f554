"""The YAML-free frontmatter reader gives what YAML gives, or declines."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import CORPORA, REPO, SAMPLE_VAULT, corpus
from vaultkeeper.store.model import ParseError, parse_note, split_frontmatter
from vaultkeeper.store.quickmeta import read_front, read_keys, read_more

WANTED = ("name", "status", "label", "holdout_until", "falsification_condition")


# the scanner asks for these first, and for the rest only for a candidate
DECIDE = ("status", "holdout_until")
DETAILS = ("name", "label", "falsification_condition")


def yaml_keys(
    yaml_text: str, wanted: tuple[str, ...] = WANTED
) -> tuple[dict[str, Any], dict[str, int]] | str:
    """The plain parser's answer for the wanted keys, or the error it reports."""
    try:
        note = parse_note(Path("x.md"), "x.md", f"---\n{yaml_text}---\n")
    except ParseError as exc:
        return f"error: {exc.reason}"
    assert note.frontmatter is not None
    values = {k: v for k, v in note.frontmatter.data.items() if k in wanted}
    lines = {k: n for k, n in note.frontmatter.key_lines.items() if k in values}
    return values, lines


def agrees(yaml_text: str, wanted: tuple[str, ...] = WANTED) -> bool:
    """True when the fast reader answered (and so must equal YAML); False when it declined.

    An answer for all the keys implies one for any part of them (the scanner reads the
    keys in two steps), and every answer equals YAML's.
    """
    fast = read_keys(yaml_text, wanted)
    if fast is None:
        return False
    plain = yaml_keys(yaml_text, wanted)
    assert plain == fast, (yaml_text, plain, fast)
    # same types too: a date is not a string, 1 is not True
    assert isinstance(plain, tuple)
    assert {k: type(v) for k, v in plain[0].items()} == {k: type(v) for k, v in fast[0].items()}
    if wanted == WANTED:
        assert agrees(yaml_text, DECIDE) and agrees(yaml_text, DETAILS), yaml_text
    return True


TEMPLATE = (
    "name: retry-flaky-tests\n"
    "description: Retry a flaky CI job once; a second failure is real\n"
    "type: memory\n"
    "status: held_out\n"
    "label: inferred\n"
    'falsification_condition: "a job that failed twice in a row later passed"\n'
    'holdout_until: "2026-09-02"\n'
    "relations: {}\n"
    "sources: []\n"
    'provenance: ["projects/api/research/ci.md:9", "https://example.com/x#y"]\n'
)


def test_template_frontmatter_is_read_without_yaml() -> None:
    values, lines = read_keys(TEMPLATE, WANTED) or ({}, {})
    assert values["holdout_until"] == "2026-09-02" and lines["holdout_until"] == 8
    assert values["status"] == "held_out"
    assert agrees(TEMPLATE)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("holdout_until: 2026-08-01\n", dt.date(2026, 8, 1)),
        ("holdout_until: '2026-08-01'\n", "2026-08-01"),
        ("holdout_until: yesterday\n", "yesterday"),
        ("holdout_until:\n", None),
        ("holdout_until: null # none\n", None),
        ("holdout_until: 20260801\n", 20260801),
        ("holdout_until: yes\n", True),
        ("holdout_until: []\n", []),
        ("holdout_until: 2024-02-29\n", dt.date(2024, 2, 29)),  # a leap day: the slow way
        ("holdout_until: 2026-12-31\n", dt.date(2026, 12, 31)),
        ("holdout_until: 'it''s'\n", "it's"),
        ("holdout_until: ''''  # a quote\n", "'"),
    ],
)
def test_values_match_yaml(text: str, expected: object) -> None:
    assert agrees(text)
    fast = read_keys(text, WANTED)
    assert fast is not None and fast[0]["holdout_until"] == expected


@pytest.mark.parametrize(
    "text",
    [
        "holdout_until: 2026-02-30\n",  # YAML reports the impossible date
        "created: 2023-02-29\nstatus: active\n",  # not a leap year, under another key
        "created: 0000-01-01\n",
        "name: [unclosed\n",
        "description: Note: colons\n",
        "status: held_out\nstatus: active\n",  # repeated key
        "holdout_until:\n  - 2026-08-01\n",  # a list where a date belongs
        "name: >\n  folded\n",  # a block scalar under a wanted key
        "description: >2\n  folded\n",  # an explicit indentation indicator
        "description: > # why\n  folded\n",
        "description: >\n   \n  folded\n",  # an all-space line before the text
        "description: |\n    deep\n  shallow\n",
        "description: >\n  folded\n- item\n",
        "name: caf\u00e9 \u2028x\n",
        "name:\tx\n",
        "just a line\n",
        "sources:\n  - a\n - b\n",
        "key: value\n- item\n",
    ],
)
def test_declines_what_it_cannot_be_sure_of(text: str) -> None:
    assert read_keys(text, WANTED) is None


@pytest.mark.parametrize(
    "text",
    [
        "description: >-\n  folded\n  text\nstatus: held_out\n",
        "description: |\n  literal\n\n    deeper\n  back\nholdout_until: '2026-08-01'\n",
        "description: >\n\n  after a blank\n# a comment\nname: x\n",
        "notes: |+\n  kept: not a key\n  - not an item\nlabel: rule\n",
        "description: >\nstatus: active\n",  # an empty scalar
    ],
)
def test_block_scalars_of_other_keys_are_skipped(text: str) -> None:
    assert agrees(text)


@pytest.mark.parametrize(
    "text",
    [
        'relations:\n  supersedes: "[[a]]"\nstatus: held_out\n',  # bench/gen.py's form
        "relations: # why\n    a: 1\n    # note\n\n    b: '2026-01-01'\nlabel: rule\n",
        "relations:\n  a:\n  b: []\nholdout_until: '2026-08-01'\n",
    ],
)
def test_nested_mappings_of_other_keys_are_read(text: str) -> None:
    assert agrees(text)


@pytest.mark.parametrize(
    "text",
    [
        "relations:\n  a: 1\n    b: 2\n",  # deeper
        "relations:\n    a: 1\n  b: 2\n",  # shallower
        "relations:\n  a:\n  - x\n",  # a list where YAML reads a's value
        "relations:\n  - x\n  a: 1\n",
        "status:\n  a: 1\n",  # under a wanted key
        "relations:\n  a: x: y\n",
        "relations:\n  a: |\n    text\n",
        "relations: x\n  a: 1\n",  # a key with a value has no nested keys
    ],
)
def test_nested_mappings_it_leaves_to_yaml(text: str) -> None:
    assert read_keys(text, WANTED) is None


def test_block_lists_and_comments_are_read() -> None:
    text = (
        "# a comment\n"
        "name: x\n"
        "sources:\n"
        "  - https://example.com\n"
        '  - "quoted"\n'
        "  # between items\n"
        "\n"
        "tags:\n"
        "- a\n"
        "status: active  # why\n"
    )
    assert agrees(text)


def real_frontmatter() -> list[str]:
    out = []
    for root in (SAMPLE_VAULT, corpus()):
        for path in sorted(root.rglob("*.md")):
            try:
                yaml_text, _, _ = split_frontmatter(path.read_text(encoding="utf-8"))
            except (ParseError, UnicodeDecodeError):
                continue
            if yaml_text is not None:
                out.append(yaml_text)
    return out


def test_generated_vault_frontmatter_agrees(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "bench"))
    from gen import generate

    generate(600, tmp_path / "v", seed=5, anchor=dt.date(2026, 9, 1))
    blocks = []
    for path in sorted((tmp_path / "v" / "projects").rglob("*.md")):
        yaml_text, _, _ = split_frontmatter(path.read_text(encoding="utf-8"))
        assert yaml_text is not None
        blocks.append(yaml_text)
    answered = sum(agrees(text) for text in blocks)
    assert len(blocks) // 2 < answered < len(blocks), (answered, len(blocks))


@pytest.mark.corpora
def test_real_vaults_agree_and_most_need_no_yaml() -> None:
    blocks = real_frontmatter()
    assert len(blocks) > 20
    answered = sum(agrees(text) for text in blocks)
    assert answered >= len(blocks) // 2, (answered, len(blocks))


WANTED_KEYS = st.sampled_from(
    ["name", "status", "label", "holdout_until", "falsification_condition"]
)
OTHER_KEYS = st.sampled_from(["sources", "description", "tags", "_x", "Name", "on", "yes", "null"])
ODD_KEYS = st.sampled_from(["key ", "a.b", "1", "-x", "x-"])
KEYS = st.one_of(*[WANTED_KEYS] * 5, *[OTHER_KEYS] * 5, ODD_KEYS)


# values the fast reader answers for (mostly), and values that probe YAML's corners
COMMON = st.sampled_from(
    [
        "held_out",
        "active",
        "2026-08-01",
        '"2026-08-01"',
        "'2026-08-01'",
        "yesterday",
        "yes",
        "No",
        "null",
        "0",
        "17",
        "[]",
        "{}",
        '["a", "b"]',
        '"a #b"',
        "a #b",
        "a#b",
        "C#",
        "it's",
        "'it''s'",
        "''''",
        "'a'' #b'",
        "http://x",
        "a, b",
        '"[[link]]"',
        "caf\u00e9",
        "\u00a0x",
        "",
        "# c",
        "True",
        "Off",
        "y",
        "_x",
        "a: b",
        "x:",
        "a:b",
        "A line with words, commas and (parens)",
    ]
)
TRICKY = st.sampled_from(
    [
        "2026-02-30",
        "2024-02-29",
        "2023-02-29",
        "0000-01-01",
        "2026-04-31",
        "2026-12-31",
        "2026-13-01",
        "~",
        "012",
        "1_000",
        "0b_",
        ".5",
        "1.5",
        "-1",
        "+1",
        "[a, b]",
        '"a \\" b"',
        "'it''s'",
        "foo: bar",
        "[[link]]",
        "-",
        "- a",
        "|",
        ">",
        "&a",
        "*a",
        "!tag x",
        "%x",
        "@x",
        "`x`",
        "?x",
        "? x",
        "a\u0085b",
        "\ufeffx",
        "x\ty",
        "  ",
        '"unclosed',
        "'unclosed",
        "'a''",
        "'a'''b'",
        "{a: 1}",
        "=",
        "<<",
        ".inf",
        "n",
        "2026-8-1",
        "2026-08-01 10:00",
        "2026-08-01T10:00:00Z",
        "0x1F",
        "1e3",
        "a\u2028b",
        "\x7f",
        "a\rb",
    ]
)
SCALARS = st.one_of(*[COMMON] * 8, TRICKY)


SCALAR_HEADERS = st.sampled_from(["|", ">", "|-", ">-", "|+", ">+", ">2", "| # c", "|x", ">-  "])
SCALAR_LINES = st.sampled_from(
    [
        "  folded text",
        "  more: text # not a comment",
        "    deeper",
        " shallow",
        "",
        "  ",
        "  - not an item",
        '  "quoted"',
        "  [[link]]",
        "  2026-02-30",
    ]
)


@st.composite
def frontmatter(draw: st.DrawFn) -> str:
    lines = []
    for _ in range(draw(st.integers(0, 8))):
        form = draw(st.integers(0, 19))
        key, value = draw(KEYS), draw(SCALARS)
        if form >= 18:  # a nested mapping's key, at some indentation
            indent = draw(st.sampled_from(["  ", " ", "    ", "  "]))
            lines.append(f"{indent}{key}:" + ("" if value == "" else f" {value}"))
        elif form == 16:  # a block scalar and some lines that may (or may not) belong to it
            lines.append(f"{key}: {draw(SCALAR_HEADERS)}")
            lines.extend(draw(st.lists(SCALAR_LINES, max_size=4)))
        elif form == 17:
            lines.append(draw(SCALAR_LINES))
        elif form <= 9:
            lines.append(f"{key}: {value}")
        elif form <= 11:
            lines.append(f"{key}:")
        elif form <= 13:
            lines.append(f"{draw(st.sampled_from(['', '  ', ' ']))}- {value}")
        elif form == 14:
            lines.append(draw(st.sampled_from(["", "# comment", "  # indented", "   ", "x"])))
        else:
            lines.append(f"{key}:{value}")
    ending = draw(st.sampled_from(["\n", "\r\n"]))
    return "".join(line + ending for line in lines)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frontmatter())
def test_generated_frontmatter_agrees_with_yaml_whenever_answered(text: str) -> None:
    agrees(text)


@st.composite
def template_like(draw: st.DrawFn) -> str:
    """Blocks of unique keys and everyday values: most are answered, so values get compared."""
    pairs = draw(
        st.lists(st.tuples(st.one_of(WANTED_KEYS, OTHER_KEYS), COMMON), unique_by=lambda p: p[0])
    )
    lines = []
    for key, value in pairs:
        shape = draw(st.integers(0, 4))
        if shape == 4:  # a nested mapping (under a wanted key too: that one YAML must read)
            lines.append(f"{key}:")
            indent = draw(st.sampled_from(["  ", "    "]))
            subkeys = draw(st.lists(OTHER_KEYS, min_size=1, max_size=3))
            lines.extend(f"{indent}{sub}: {draw(COMMON)}" for sub in subkeys)
        elif shape == 3:  # a block scalar (under a wanted key too: that one YAML must read)
            lines.append(f"{key}: {draw(st.sampled_from(['|', '>', '>-', '|+']))}")
            depth = draw(st.sampled_from([" ", "  ", "    "]))
            for item in draw(st.lists(COMMON, max_size=3)):
                lines.append(draw(st.sampled_from(["", depth + item, depth + "  " + item])))
        elif shape and key not in ("name", "status", "label", "holdout_until"):
            items = draw(st.lists(COMMON, min_size=1, max_size=3))
            indent = draw(st.sampled_from(["", "  "]))
            lines.append(f"{key}:")
            lines.extend(f"{indent}- {item}" for item in items)
        else:
            lines.append(f"{key}: {value}")
    return "".join(line + "\n" for line in lines)


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(template_like())
def test_template_like_frontmatter_agrees_with_yaml(text: str) -> None:
    agrees(text)


# -- read_front: one regex for a whole file, the same answer as a split and read_keys --


def split_then_read(text: str) -> tuple[dict[str, Any], dict[str, int], str] | None:
    try:
        yaml_text = split_frontmatter(text)[0]
    except ParseError:
        return None
    if yaml_text is None:
        return None
    got = read_keys(yaml_text, WANTED)
    return None if got is None else (*got, yaml_text)


@st.composite
def files(draw: st.DrawFn) -> str:
    block = draw(st.one_of(template_like(), template_like(), template_like(), frontmatter()))
    close = draw(st.sampled_from(["---", "...", "--- ", "---\t", "---\r", "----", "--- x", ""]))
    end = draw(st.sampled_from(["\n", "\r\n", ""]))
    body = draw(st.sampled_from(["", "body\n", "---\n", "# title\nname: x\n"]))
    return draw(st.sampled_from(["---\n", "---\r\n", "--- \n", ""])) + block + close + end + body


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files())
def test_read_front_answers_as_split_and_read_keys(text: str) -> None:
    fast = read_front(text, WANTED)
    if fast is not None:
        assert fast == split_then_read(text), text


def test_read_front_on_real_and_generated_files(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "bench"))
    from gen import generate

    generate(300, tmp_path / "v", seed=9, anchor=dt.date(2026, 9, 1))
    paths = sorted((tmp_path / "v").rglob("*.md")) + sorted(SAMPLE_VAULT.rglob("*.md"))
    paths += sorted((CORPORA / "kepano-obsidian").rglob("*.md"))
    answered = 0
    for path in paths:
        text = path.read_bytes().decode("utf-8", "replace")
        fast = read_front(text, WANTED)
        if fast is not None:
            answered += 1
            assert fast == split_then_read(text), path
    assert answered > len(paths) // 3


MORE = ("label", "falsification_condition", "status", "type", "holdout_until")


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files())
def test_read_more_of_a_matched_block_answers_as_read_keys(text: str) -> None:
    # the scan reads a held-out candidate's other keys with read_more once read_front
    # matched its block (scan/memory.py): the same answer as read_keys gives
    fast = read_front(text, WANTED)
    if fast is not None:
        assert read_more(fast[2], MORE) == read_keys(fast[2], MORE), text
