"""``[[note#Heading]]`` and ``[[note#^block]]``: anchors read with mistune, VK305 in lint."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from tests.conftest import MakeVault
from vaultkeeper.cli import cli
from vaultkeeper.index.headings import AnchorTable, heading_key, missing, read_anchors
from vaultkeeper.lint import lint_vault
from vaultkeeper.lint.codes import CODES

TARGET = """\
# Top **bold** `code`

Setext heading
--------------

## Can I link? (yes: [[note]])

```markdown
## Fenced, not a heading
a fenced line ^fenced
```

    ## indented code, not a heading ^indented

A paragraph
that ends with an id ^para-1

- an item ^Item2
- an item with `code ^inline`

| a | b |
| - | - |
| 1 | 2 |

^table

## Next
"""


def test_headings_are_found_outside_code() -> None:
    found = read_anchors(TARGET)
    assert found.headings == (
        "top bold code",
        "setext heading",
        "can i link yes note",
        "next",
    )
    assert found.blocks == {"para-1", "item2", "table"}


def test_heading_matching_ignores_case_punctuation_and_spaces() -> None:
    found = read_anchors(TARGET)
    assert heading_key("Can I  link?  (yes: [[Top]])") == heading_key("can i link yes Top")
    for ok in ("Top bold code", "TOP **bold** `code`", "Can I link? (yes: note)", "Setext heading"):
        assert missing(found, ok) is None, ok
    assert missing(found, "Fenced, not a heading") == "no heading 'Fenced, not a heading'"
    assert missing(found, "Topbold") == "no heading 'Topbold'"


def test_heading_chains_and_blocks() -> None:
    found = read_anchors(TARGET)
    assert missing(found, "Top bold code#Next") is None
    assert (
        missing(found, "Next#Setext heading") == "no heading 'Setext heading' after heading 'Next'"
    )
    assert missing(found, "^PARA-1") is None  # block ids compare case-insensitively
    assert missing(found, "^item2") is None and missing(found, "^table") is None
    for absent in ("fenced", "indented", "inline"):
        assert missing(found, f"^{absent}") == f"no block ^{absent}"


def test_only_linked_notes_are_parsed_once() -> None:
    asked: list[str] = []

    def body_of(rel: str) -> str | None:
        asked.append(rel)
        return {"a.md": "# A\n"}.get(rel)

    table = AnchorTable(body_of)
    assert table.missing("a.md", "A") is None
    assert table.missing("a.md", "B") == "no heading 'B'"
    assert table.missing("gone.md", "B") is None  # unreadable: VK001 says so, not VK305
    assert table.missing("Movies.base", "Director") is None  # a view of a base, not a heading
    assert table.missing("doc.pdf", "page=3") is None
    assert asked == ["a.md", "gone.md"]


NOTE = """\
---
name: n
description: d
type: memory
label: fact
relations: ["[[target#Nowhere]]"]
---

[[target#can I link yes note]] [[target#Missing]] ![[target#^para-1]] [[target#^nope]]
[[#Local]] [[#Elsewhere]] [[target#Top bold code#Next]] `[[target#In code]]`

# Local
"""


def _vault(make_vault: MakeVault, ours: bool) -> Path:
    files = {"notes/target.md": TARGET, "notes/note.md": NOTE}
    if ours:
        index = "# Index\n\n- [[references/vault-spec]]\n- [[note]]\n- [[target]]\n"
        return make_vault({**files, "_index.md": index})
    return make_vault({**files, ".obsidian/app.json": "{}"}, init=False)


def test_lint_reports_broken_heading_and_block_links(
    make_vault: MakeVault, runner: CliRunner
) -> None:
    vault = _vault(make_vault, ours=True)
    result = runner.invoke(cli, ["--vault", str(vault), "lint", "--select", "VK3"])
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "notes/note.md:6:14: VK305 broken link [[target#Nowhere]]:"
        " notes/target.md has no heading 'Nowhere'",
        "notes/note.md:9:32: VK305 broken link [[target#Missing]]:"
        " notes/target.md has no heading 'Missing'",
        "notes/note.md:9:71: VK305 broken link [[target#^nope]]:"
        " notes/target.md has no block ^nope",
        "notes/note.md:10:12: VK305 broken link [[#Elsewhere]]:"
        " notes/note.md has no heading 'Elsewhere'",
        "4 finding(s): 4 error(s), 0 warning(s) in 5 file(s)",
    ]


def test_vk305_is_a_warning_on_a_foreign_vault_and_can_be_ignored(make_vault: MakeVault) -> None:
    vault = _vault(make_vault, ours=False)
    found = lint_vault(vault, select=["VK305"]).findings
    assert [(f.line, f.severity) for f in found] == [
        (6, "warning"),
        (9, "warning"),
        (9, "warning"),
        (10, "warning"),
    ]
    assert lint_vault(vault, ignore=["VK305"]).findings == ()
    data = json.loads(
        CliRunner().invoke(cli, ["lint", "--json", "--select", "VK305", str(vault)]).stdout
    )
    assert {d["severity"] for d in data} == {"warning"} and "soft" not in data[0]


def test_the_lint_page_lists_every_code_with_its_severity() -> None:
    page = (Path(__file__).resolve().parent.parent / "docs" / "lint.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| (VK\d{3}) \| (error|warning) \|", page, re.M))
    assert rows == {code: severity for code, (severity, _) in CODES.items()}


# -- the glance that spares most notes a parse: it must agree with mistune exactly ----
from hypothesis import example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from vaultkeeper.index.headings import _glance, quick_missing  # noqa: E402

_WORDS = st.sampled_from(["alpha", "Beta", "gamma", "délta", "x-y", "a.b", "Über", "ß"])
_TEXT = st.lists(_WORDS, min_size=1, max_size=3).map(" ".join)
_LINE = st.one_of(
    _TEXT.map(lambda t: f"# {t}"),
    _TEXT.map(lambda t: f"## {t} ##"),
    _TEXT.map(lambda t: f"   ### {t}"),
    _TEXT.map(lambda t: f"    # {t}"),
    _TEXT.map(lambda t: f"- # {t}"),
    _TEXT.map(lambda t: f"  # {t}"),
    _TEXT.map(lambda t: f"> # {t}"),
    _TEXT.map(lambda t: f"#{t}"),
    _TEXT.map(lambda t: f"1. # {t}"),
    _TEXT.map(lambda t: f"{t} ^blk"),
    _TEXT.map(lambda t: f"- {t} ^Blk"),
    _TEXT.map(lambda t: f"`{t} ^blk`"),
    _TEXT.map(lambda t: f"**{t}** `x` [[y]] <b>z</b> ^blk"),
    _TEXT.map(lambda t: f"[{t}]: /url ^blk"),
    _TEXT.map(lambda t: f"`{t}` ^blk"),
    _TEXT.map(lambda t: f"*{t} ^blk"),
    _TEXT.map(lambda t: f"`{t}"),
    _TEXT.map(lambda t: f"{t} ^blk\r"),
    _TEXT.map(lambda t: f">^blk {t}"),
    _TEXT,
    _TEXT.map(lambda t: f"- {t}"),
    st.sampled_from(["```", "~~~", "````", "  ```", "    ```", "``` py", "```a`b", "", "===",
                     "---", "<div>", "</div>", "> quote", "1. item", "\t# tab", "^blk",
                     ">^blk", "x ^blk`", "[a]: /b", "text ^blk\r\rmore", "- <div>", "> <div>",
                     "  <div>", "<p>x</p>", "<span>", "a <b>b</b>", "<!-- c", "-->", "<pre>",
                     "</pre>", " \t", "<DIV class=x>", "   ```", " ```", "  ~~~", "   text",
                     "  - item", "10. item", "1) # x", "  ^blk", "- ```", "1. ~~~ py",
                     "* > ```", "<div>\r", "\r# x", "x\r==="]),
)  # fmt: skip
_ASKED = st.one_of(
    _TEXT,
    st.tuples(_TEXT, _TEXT).map("#".join),
    st.sampled_from(["^blk", "^BLK", "^other", "^"]),
)


@settings(max_examples=600, deadline=None)
@given(st.lists(_LINE, max_size=12), _ASKED)
@example(["- # alpha", "  ```", "```", "# Beta"], "alpha")  # a fence opened in a list item
@example(["- <div>", "  # alpha"], "alpha")  # an HTML block in a list item holds the line
@example(["<div>", "```", "", "# alpha", "```"], "alpha")  # and the fence's first line
@example(["- ```", "  # alpha", "  ```"], "alpha")  # a fence on a list item's marker line
@example(["* ```", "  alpha ^blk"], "^blk")  # unclosed: the item's code to its end
@example(["<div>\r\r# alpha"], "alpha")  # a lone CR ends a line: the blank one ends the HTML
@example(["# alpha\r# Beta"], "Beta")  # two headings
def test_the_glance_never_disagrees_with_the_parse(lines: list[str], asked: str) -> None:
    body = "\n".join(lines) + "\n"
    parsed = read_anchors(body)
    quick = _glance(body)
    for key in quick.sure:
        assert key in parsed.at, (body, key)
    settled = quick_missing(quick, asked)
    if settled is not True:
        assert settled == missing(parsed, asked), (body, asked)


def test_the_glance_settles_plain_notes_and_leaves_the_rest() -> None:
    plain = _glance("# Setup\n\nText.\n\n## Run it\n")
    assert quick_missing(plain, "Run it") is None
    assert quick_missing(plain, "Deploy") == "no heading 'Deploy'"
    fenced = _glance("```\n# not a heading\n```\n# Real\n")
    assert quick_missing(fenced, "Real") is None
    assert quick_missing(fenced, "not a heading") == "no heading 'not a heading'"
    assert quick_missing(_glance("<div>\n# x\n</div>\n"), "x") is True  # mistune decides
    html = _glance("<div>\n<b>x</b>\n</div>\n\n# Real\n\nText ^id\n")  # a blank line ends it
    assert quick_missing(html, "Real") is None and quick_missing(html, "^id") is None
    assert quick_missing(html, "Other") == "no heading 'Other'"
    assert quick_missing(_glance("<!--\n\n# x\n-->\n"), "x") is True  # runs past blanks
    assert quick_missing(_glance("> # x\n"), "x") is True
    assert quick_missing(_glance("Title\n===\n"), "Title") is True
    assert quick_missing(plain, "Setup#Run it") is None
    assert quick_missing(plain, "Run it#Setup") == "no heading 'Setup' after heading 'Run it'"
    assert quick_missing(plain, "^id") == "no block ^id"  # no "^id" in the text at all
    assert quick_missing(_glance("Text ^id\n"), "^id") is None  # ends a plain paragraph
    assert quick_missing(_glance("Text `^id`\n"), "^id") == "no block ^id"  # not at the end
    assert quick_missing(_glance("**Text** [[x]] ^id\n"), "^id") is None  # ends its block
    assert quick_missing(_glance("[a]: /b ^id\n"), "^id") is True  # mistune decides
