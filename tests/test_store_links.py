"""Obsidian link extraction and resolution (vaultkeeper.store.links)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vaultkeeper.store.links import Resolver, code_spans, extract_links, find_fences, parse_link
from vaultkeeper.store.model import parse_note

FILES = [
    "Board games.md",
    "notes/sub/b.md",
    "notes/Deep Note.md",
    "a/dup.md",
    "b/dup.md",
    "root.md",
    "x/root.md",
    "Attachments/photo.PNG",
    "Templates/Bases/Books.base",
    "v1.2.md",
    "café.md",
]


@pytest.fixture
def resolver() -> Resolver:
    return Resolver(FILES)


def note(text: str, rel: str = "n.md") -> list[tuple[str, str, str, bool, int, int, bool]]:
    n = parse_note(Path(rel), rel, text)
    return [
        (lk.target, lk.subpath, lk.alias, lk.embed, lk.line, lk.col, lk.in_frontmatter)
        for lk in extract_links(n)
    ]


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("Board games", "Board games.md"),  # by unique name anywhere
        ("board GAMES", "Board games.md"),  # case-insensitive
        ("Board games.md", "Board games.md"),  # .md optional
        ("b", "notes/sub/b.md"),
        ("sub/b", "notes/sub/b.md"),  # path suffix
        ("notes/sub/b", "notes/sub/b.md"),  # full path
        ("/notes/sub/b.md", "notes/sub/b.md"),
        ("deep note", "notes/Deep Note.md"),
        ("photo.png", "Attachments/photo.PNG"),  # attachments of any type
        ("Books.base", "Templates/Bases/Books.base"),
        ("v1.2", "v1.2.md"),  # a dot in the name is not an extension
        ("CAFÉ", "café.md"),
        ("root", "root.md"),  # a full path from the vault root is definite
        ("x/root", "x/root.md"),
        ("a/dup", "a/dup.md"),
        ("./dup", "a/dup.md"),  # relative to the linking note (a/note.md)
    ],
)
def test_resolves_like_obsidian(resolver: Resolver, target: str, expected: str) -> None:
    found = resolver.resolve(target, "a/note.md")
    assert found.resolved == expected, found


def test_two_candidates_are_ambiguous_never_a_guess(resolver: Resolver) -> None:
    found = resolver.resolve("dup", "root.md")
    assert len(found.targets) == 2 and found.resolved is None
    assert set(found.targets) == {"a/dup.md", "b/dup.md"}


@pytest.mark.parametrize("target", ["missing", "sub/missing", "other/b", "Books", "photo", "b.png"])
def test_broken(resolver: Resolver, target: str) -> None:
    found = resolver.resolve(target, "root.md")
    assert found.broken and found.resolved is None


def test_heading_only_link_points_into_the_note_itself(resolver: Resolver) -> None:
    assert resolver.resolve("", "notes/sub/b.md").resolved == "notes/sub/b.md"


def test_resolver_reads_the_vault(tmp_path: Path) -> None:
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "a.jpg").write_bytes(b"\xff\xd8")
    (tmp_path / ".obsidian").mkdir()
    (tmp_path / ".obsidian" / "hidden.md").write_text("x")
    r = Resolver.for_vault(tmp_path)
    assert r.resolve("a.jpg", "n.md").resolved == "img/a.jpg"
    assert r.resolve("hidden", "n.md").broken  # hidden folders are not part of the vault


def test_every_link_form() -> None:
    text = "[[a]] [[b|shown]] [[c#Heading]] [[d#^block1]] ![[e.png]] [[f#H|alias]] [[#Local]]\n"
    assert note(text) == [
        ("a", "", "", False, 1, 1, False),
        ("b", "", "shown", False, 1, 7, False),
        ("c", "Heading", "", False, 1, 19, False),
        ("d", "^block1", "", False, 1, 33, False),
        ("e.png", "", "", True, 1, 47, False),
        ("f", "H", "alias", False, 1, 58, False),
        ("", "Local", "", False, 1, 72, False),
    ]


def test_table_escaped_pipe_is_an_alias() -> None:
    assert note("| [[target\\|shown]] | x |\n")[0][:3] == ("target", "", "shown")


def test_code_spans_and_fences_hold_no_links() -> None:
    text = (
        "real [[one]] and `[[not-a]]` and ``x [[not-b]] `` and [[two]]\n"
        "```python\n"
        "[[not-c]]\n"
        "```\n"
        "~~~~\n"
        "[[not-d]]\n"
        "~~~~\n"
        "- item\n"
        "    ```text\n"
        "    [[not-e]]\n"
        "    ```\n"
        "> ```text\n"
        "> [[not-f]]\n"
        "> ```\n"
        "after [[three]]\n"
    )
    assert [t[0] for t in note(text)] == ["one", "two", "three"]


def test_an_unclosed_fence_hides_the_rest() -> None:
    assert [t[0] for t in note("[[a]]\n```text\n[[b]]\n")] == ["a"]


def test_frontmatter_values_are_links() -> None:
    text = (
        "---\n"
        'categories:\n  - "[[Books]]"\n'
        'related: ["[[A|alias]]", "plain"]\n'
        'nested:\n  deep: "see [[Deep#H]]"\n'
        "# a comment [[NotALink]]\n"
        "bare: [[Bare]]\n"  # YAML reads this as a nested list, not a string: no link
        "---\n"
        "body [[C]]\n"
    )
    got = note(text)
    assert [(t[0], t[4], t[6]) for t in got] == [
        ("Books", 3, True),
        ("A", 4, True),
        ("Deep", 6, True),
        ("C", 10, False),
    ]


def test_fences_report_open_close_and_language() -> None:
    fences = find_fences("```python\nx\n```\n````\n```\n````\n~~~ \n")
    assert [(f.start, f.end, f.language) for f in fences] == [
        (1, 3, "python"),
        (4, 6, ""),  # a shorter fence inside does not close it
        (7, None, ""),
    ]


def test_inline_triple_backticks_are_not_a_fence() -> None:
    assert find_fences("```a``` text\n") == []


def test_code_spans() -> None:
    line = "a `b` c ``d ` e`` f ` g"
    assert [line[a:b] for a, b in code_spans(line)] == ["`b`", "``d ` e``"]


def test_parse_link() -> None:
    assert parse_link("path/to/x#Head|Alias") == ("path/to/x", "Head", "Alias")


@given(st.text(alphabet="abc XYZ-_.", min_size=1, max_size=20).filter(lambda s: s.strip()))
def test_a_link_inside_a_code_span_is_never_extracted(name: str) -> None:
    assert note(f"x `[[{name}]]` y\n") == []
    assert [t[0] for t in note(f"x [[{name}]] y\n")] == [name.strip()]


def test_line_numbers_count_newlines_only() -> None:
    # str.splitlines would also break at U+2028 and form feeds and shift every number
    text = "a\u2028b\x0c [[x]]\r\nline two [[y]]\n"
    assert [(t[0], t[4]) for t in note(text)] == [("x", 1), ("y", 2)]


# -- extract_links searches the whole body at once: it must find what a line-by-line
# reading finds (each line outside fences, each match outside a code span)
_PIECES = st.sampled_from(
    ["[[a]]", "![[b#H|c]]", "[[d\\|e]]", "`[[f]]`", "``x ` [[g]]``", "```", "~~~", "````py",
     "> ```", "  ```", "text", "!", "[[", "]]", "[[h]]![[i]]", "\r", "\u2028", "é", " "]
)  # fmt: skip
_LINES = st.lists(st.lists(_PIECES, max_size=5).map("".join), max_size=12)


def _line_by_line(text: str) -> list[tuple[str, str, str, bool, int, int, str]]:
    lines = text.split("\n")
    fenced: set[int] = set()
    for fence in find_fences(text):
        fenced.update(range(fence.start, (fence.end or len(lines)) + 1))
    found = []
    for number, line in enumerate(lines, start=1):
        spans = code_spans(line)
        for m in re.finditer(r"(!?)\[\[([^\[\]\r\n]+?)\]\]", line):
            if number in fenced or any(a <= m.start() < b for a, b in spans):
                continue
            target, sub, alias = parse_link(m.group(2))
            found.append((target, sub, alias, bool(m.group(1)), number, m.start() + 1, m.group()))
    return found


@given(_LINES)
def test_links_found_in_one_pass_are_those_of_each_line(lines: list[str]) -> None:
    text = "\n".join(lines)
    links = extract_links(parse_note(Path("n.md"), "n.md", text))
    got = [(k.target, k.subpath, k.alias, k.embed, k.line, k.col, k.raw) for k in links]
    assert got == _line_by_line(text)
