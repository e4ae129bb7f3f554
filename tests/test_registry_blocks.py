"""Registry blocks: `### name` blocks under patterns/, their counters, and their problems."""

from __future__ import annotations

import datetime as dt
import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import reference
from tests.conftest import CORPORA, REPO, SAMPLE_VAULT, MakeVault
from vaultkeeper.cli import cli
from vaultkeeper.errors import NotFoundError, VaultkeeperError
from vaultkeeper.learn.count import record_uses
from vaultkeeper.registry.blocks import (
    block_hash,
    find_block,
    is_counter_line,
    load_heads,
    load_registry,
    parse_blocks,
)

REGISTRY = """# Pattern registry

Intro text.

### alpha
Use alpha when things are alpha-shaped.

**success count:** 3
**last used:** 2026-08-26

### beta
- **success count:** 0
- **last used:** 2025-01-02
#### a sub-heading stays inside beta
more beta text

## Another section
### gamma ###
**Success Count:**   12{TRAILING}
**last used:** 2026-11-01
**promoted:** 2026-11-02 -> [[skills/gamma/SKILL]]
""".replace("{TRAILING}", "  ")  # trailing blanks after a counter are allowed


def test_blocks_and_counters() -> None:
    blocks = parse_blocks(Path("r.md"), "patterns/r.md", REGISTRY)
    got = [(b.name, b.line, b.end_line, b.count, b.count_line, b.last_used) for b in blocks]
    assert got == [
        ("alpha", 5, 9, 3, 8, dt.date(2026, 8, 26)),
        ("beta", 11, 15, 0, 12, dt.date(2025, 1, 2)),
        ("gamma", 18, 21, 12, 19, dt.date(2026, 11, 1)),
    ]
    gamma = blocks[2]
    assert gamma.promoted == "2026-11-02 -> [[skills/gamma/SKILL]]"
    assert gamma.promoted_line == 21
    assert gamma.count_raw == "12"
    assert blocks[0].promoted is None
    for b in blocks:
        assert b.problems() == []
        # the block's text is exactly its lines in the file, blank gap excluded
        lines = REGISTRY.split("\n")
        assert b.text == "\n".join(lines[b.line - 1 : b.end_line]) + "\n"
        assert b.hash == block_hash(b.text)


def test_block_ends_at_next_heading_of_level_one_to_three() -> None:
    text = (
        "### a\n**success count:** 1\n# top\n**success count:** 9\n"
        "### b\ntext\n## two\n**last used:** 2026-01-01\n"
    )
    blocks = {b.name: b for b in parse_blocks(Path("r"), "r", text)}
    assert blocks["a"].end_line == 2
    assert blocks["a"].count == 1
    assert blocks["b"].end_line == 6
    assert blocks["b"].last_used_raw is None  # the ## two section is not part of b


def test_fenced_code_with_hashes_is_not_a_block() -> None:
    text = (
        "### real\n"
        "Example:\n"
        "```markdown\n"
        "### not-a-block\n"
        "**success count:** 99\n"
        "```\n"
        "~~~~text\n"
        "## not a heading either\n"
        "```\n"
        "### still fenced\n"
        "~~~~\n"
        "**success count:** 2\n"
        "**last used:** 2026-02-01\n"
    )
    blocks = parse_blocks(Path("r"), "r", text)
    assert [b.name for b in blocks] == ["real"]
    assert blocks[0].count == 2  # the fenced example's 99 is not the counter
    assert blocks[0].count_line == 12
    assert blocks[0].end_line == 13


def test_crlf_registry() -> None:
    crlf = REGISTRY.replace("\n", "\r\n")
    lf = parse_blocks(Path("r"), "r", REGISTRY)
    blocks = parse_blocks(Path("r"), "r", crlf)
    assert [(b.name, b.line, b.end_line, b.count, b.last_used) for b in blocks] == [
        (b.name, b.line, b.end_line, b.count, b.last_used) for b in lf
    ]
    assert blocks[0].text.endswith("**last used:** 2026-08-26\r\n")


def test_heading_rules() -> None:
    text = (
        "### C#\n**success count:** 1\n"
        "   ### indented\n**success count:** 2\n"
        "    ### code block, not a heading\n"
        "###no-space is not a heading\n"
        "###\n"
    )
    blocks = parse_blocks(Path("r"), "r", text)
    assert [(b.name, b.count) for b in blocks] == [("C#", 1), ("indented", 2)]
    # the empty ### heading ends "indented" but starts nothing
    assert blocks[1].end_line == 6


def test_frontmatter_of_a_registry_file_is_not_a_block() -> None:
    text = "---\nname: more\n### in yaml: a comment\n---\n### real\n**success count:** 1\n"
    assert [b.name for b in parse_blocks(Path("r"), "r", text)] == ["real"]


def test_line_numbers_count_newlines_only() -> None:
    text = "intro\u2028still line one\n### a\n**success count:** 1\n"
    (block,) = parse_blocks(Path("r"), "r", text)
    assert (block.line, block.count_line) == (2, 3)


MALFORMED = """### no-count
**last used:** 2026-01-01

### bad-count
**success count:** three
**last used:** 2026-01-01

### negative
**success count:** -1
**last used:** 2026-01-01

### no-last-used
**success count:** 1

### bad-date
**success count:** 1
**last used:** 2026-02-30

### prose-date
**success count:** 1
**last used:** last tuesday
"""


def test_malformed_counters_are_problems_with_lines() -> None:
    blocks = {b.name: b for b in parse_blocks(Path("r"), "patterns/registry.md", MALFORMED)}
    got = {name: [(p.line, p.reason) for p in b.problems()] for name, b in blocks.items()}
    assert got == {
        "no-count": [(1, "### no-count: no **success count:** line")],
        "bad-count": [(5, "### bad-count: success count 'three' is not a whole number")],
        "negative": [(9, "### negative: success count '-1' is not a whole number")],
        "no-last-used": [(12, "### no-last-used: no **last used:** line")],
        "bad-date": [(17, "### bad-date: last used '2026-02-30' is not an ISO date (YYYY-MM-DD)")],
        "prose-date": [
            (21, "### prose-date: last used 'last tuesday' is not an ISO date (YYYY-MM-DD)")
        ],
    }
    for b in blocks.values():
        for p in b.problems():
            assert str(p).startswith(f"patterns/registry.md:{p.line}: ### {b.name}")


def test_blocks_in_any_md_under_patterns(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "patterns/registry.md": "# R\n\n### one\n**success count:** 1\n"
            "**last used:** 2026-01-01\n",
            "patterns/more/tools.md": "### two\n**success count:** 2\n**last used:** 2026-01-01\n",
            "patterns/notes.txt": "### not-md\n**success count:** 5\n",
            "projects/p/memory/x.md": "### outside\n**success count:** 5\n",
            "patterns/bad.md": b"### latin\n\xe9\n",
        }
    )
    blocks, problems = load_registry(vault)
    assert sorted((b.name, b.rel) for b in blocks) == [
        ("one", "patterns/registry.md"),
        ("two", "patterns/more/tools.md"),
    ]
    assert [(p.path, p.line) for p in problems] == [("patterns/bad.md", 2)]
    assert "not UTF-8" in problems[0].reason


def test_find_block(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "patterns/registry.md": "### dup\n**success count:** 1\n\n"
            "### Bisect\n**success count:** 1\n",
            "patterns/other.md": "### dup\n**success count:** 2\n",
        }
    )
    with pytest.raises(NotFoundError, match="^nope: no ### nope block in patterns/$"):
        find_block(vault, "nope")
    with pytest.raises(NotFoundError, match="did you mean 'Bisect' at patterns/registry.md:4"):
        find_block(vault, "bisect")
    with pytest.raises(VaultkeeperError, match="2 registry blocks share this name"):
        find_block(vault, "dup")
    assert find_block(vault, "Bisect").count == 1


def test_find_block_mentions_an_unreadable_registry(make_vault: MakeVault) -> None:
    vault = make_vault({"patterns/registry.md": b"### x\n**success count:** 1\n\xff\n"})
    with pytest.raises(NotFoundError, match="could not be read; first: patterns/registry.md:3"):
        find_block(vault, "x")


def test_no_patterns_folder_means_no_blocks(make_vault: MakeVault) -> None:
    vault = make_vault(init=False)
    assert load_registry(vault) == ([], [])


HUGE = "1" * 5000  # int() refuses more than 4300 digits (sys.get_int_max_str_digits)


def test_a_count_too_long_for_int_is_a_problem_never_a_count() -> None:
    registry = "".join(
        f"### {name}\n**success count:** {count}\n**last used:** 2026-01-01\n\n"
        for name, count in [
            ("huge", HUGE),
            ("nineteen", "1" * 19),
            ("eighteen", "9" * 18),
            ("huge-text", HUGE + "x"),
        ]
    )
    blocks = {b.name: b for b in parse_blocks(Path("r"), "patterns/registry.md", registry)}
    assert {name: b.count for name, b in blocks.items()} == {
        "huge": None,
        "nineteen": None,
        "eighteen": 10**18 - 1,
        "huge-text": None,
    }
    assert [str(p) for p in blocks["huge"].problems()] == [
        "patterns/registry.md:2: ### huge: success count of 5000 digits is too long (at most 18)"
    ]
    assert [str(p) for p in blocks["nineteen"].problems()] == [
        "patterns/registry.md:6: ### nineteen: success count of 19 digits is too long (at most 18)"
    ]
    assert str(blocks["huge-text"].problems()[0]).endswith("is not a whole number")


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["use", "huge"], 1, "patterns/registry.md:2: ### huge: success count of 5000 digits"),
        (["lint"], 1, "VK401 ### huge: success count of 5000 digits is too long"),
        (["new", "pattern", "other", "-d", "another one"], 0, "created patterns/registry.md"),
        (["status"], 1, "fail     lint errors"),
    ],
)
def test_commands_read_a_too_long_count_without_a_traceback(
    make_vault: MakeVault, runner: CliRunner, args: list[str], code: int, message: str
) -> None:
    text = f"### huge\n**success count:** {HUGE}\n**last used:** 2026-01-01\n"
    vault = make_vault({"patterns/registry.md": text})
    before = (vault / "patterns/registry.md").read_bytes()
    if args == ["status"]:  # status shows the last whole-vault lint's figures
        runner.invoke(cli, ["--vault", str(vault), "lint"])
    result = runner.invoke(cli, ["--vault", str(vault), *args])
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "internal error" not in result.output and "Traceback" not in result.output
    assert (result.exit_code, message in result.output) == (code, True), result.output
    if args[0] != "new":
        assert (vault / "patterns/registry.md").read_bytes() == before


def test_use_refuses_a_count_that_would_grow_too_long(make_vault: MakeVault) -> None:
    top = "9" * 18
    vault = make_vault(
        {"patterns/registry.md": f"### top\n**success count:** {top}\n**last used:** 2026-01-01\n"}
    )
    before = (vault / "patterns/registry.md").read_bytes()
    _, refused = record_uses(vault, {"top": (1, dt.date(2026, 9, 1))})
    assert "would be too large" in str(refused["top"])
    assert (vault / "patterns/registry.md").read_bytes() == before


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_under_patterns_is_a_problem_not_a_hang(make_vault: MakeVault) -> None:
    vault = make_vault({"patterns/registry.md": "### real\n**success count:** 1\n"})
    os.mkfifo(vault / "patterns" / "pipe.md")  # no writer: a blocking open would wait for ever

    def vk(*args: str) -> subprocess.CompletedProcess[str]:
        # a subprocess with a timeout, so a regression fails instead of hanging the suite
        command = [sys.executable, "-m", "vaultkeeper", "--vault", str(vault), *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=60)

    used = vk("use", "real")
    assert (used.returncode, used.stdout.split(":")[0]) == (0, "real"), used
    assert "success count:** 2" in (vault / "patterns/registry.md").read_text()
    missing = vk("use", "nope")
    assert missing.returncode == 1
    assert "first: patterns/pipe.md: not a regular file" in missing.stderr
    created = vk("new", "pattern", "another", "-d", "one more")
    assert created.returncode == 0, created.stderr
    assert "### another" in (vault / "patterns/registry.md").read_text()
    blocks, problems = load_registry(vault)  # in-process too, now that it is known not to hang
    assert [b.name for b in blocks] == ["real", "another"]
    assert [str(p) for p in problems] == ["patterns/pipe.md: not a regular file"]


# -- the whole-text parser gives what the line-by-line one gave --------------------------

LINE_PIECES = [
    "### alpha",
    "### beta ###",
    "###  spaced  name  ##  ",
    "### C#",
    "### #",
    "### # #",
    "###",
    "### ",
    "   ### indented",
    "    ### four spaces",
    "###x",
    "#### deeper",
    "## section",
    "# title",
    "##",
    "```",
    "````",
    "~~~",
    "``` text",
    "  ```",
    "```` x",
    "**success count:** 3",
    "- **Success Count:**  12  ",
    "* **success count:** -1",
    "**success count:**",
    "**success count:** \u0663",
    "**\u017fuccess count:** 4",
    "\t**last used:** 2026-08-26",
    "**last used:** 2026-02-30",
    "**LAST USED:**2026-01-01 ",
    "**promoted:** 2026-09-01 -> [[skills/x/SKILL]]",
    "**promoted:**",
    "text with **success count:** 9 inside",
    "",
    "   ",
    "\x85",
    "\u2028",
    "---",
    "...",
    "a:b",
]


@st.composite
def registries(draw: st.DrawFn) -> str:
    lines = draw(st.lists(st.sampled_from(LINE_PIECES), max_size=30))
    ends = draw(st.lists(st.sampled_from(["\n", "\r\n", "\r\r\n", " \r\n"]), min_size=1))
    text = "".join(line + ends[i % len(ends)] for i, line in enumerate(lines))
    if draw(st.booleans()):
        text = text.rstrip("\n")  # no final newline
    if draw(st.integers(0, 3)) == 0:
        heads = ["---\na: 1\n---\n", "---\n### in yaml\n...\n", "---\n"]
        text = draw(st.sampled_from(heads)) + text
    return text


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(registries())
def test_whole_text_parser_equals_the_line_parser(text: str) -> None:
    path = Path("r.md")
    found = [reference.fields(b) for b in parse_blocks(path, "r.md", text)]
    assert found == reference.parse_blocks(path, "r.md", text)


def real_markdown() -> list[Path]:
    paths = sorted(SAMPLE_VAULT.rglob("*.md")) + sorted((CORPORA / "kepano-obsidian").rglob("*.md"))
    return [p for p in paths if p.is_file()]


def test_parsers_agree_on_real_and_generated_markdown(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "bench"))
    from gen import generate

    generate(300, tmp_path / "gen", seed=3, anchor=dt.date(2026, 9, 1))
    paths = real_markdown() + sorted((tmp_path / "gen").rglob("*.md"))
    assert len(paths) > 150
    for path in paths:
        text = path.read_bytes().decode("utf-8", "replace")
        found = [reference.fields(b) for b in parse_blocks(path, "x", text)]
        assert found == reference.parse_blocks(path, "x", text), path


def test_is_counter_line_is_unchanged() -> None:
    pieces = ["", " ", "\t", "-", "*", "**success count:**", "**Last Used:**", "**promoted:**"]
    pieces += ["x", "\n", "\r", "**", "\u017f", "**\u017fuccess count:**"]
    for k in range(1, 4):
        for combo in itertools.product(pieces, repeat=k):
            line = "".join(combo)
            assert is_counter_line(line) == reference.is_counter_line(line), repr(line)


ONE = "### alpha\nAlpha.\n\n**success count:** 1\n**last used:** 2026-01-01\n"


def test_a_text_is_parsed_once_and_an_edited_file_again(make_vault: MakeVault) -> None:
    vault = make_vault({"patterns/registry.md": ONE})
    first, _ = load_heads(vault)
    again, _ = load_heads(vault)
    assert again[0] is first[0]  # the same text: parsed once
    (vault / "patterns/registry.md").write_text(ONE.replace("** 1", "** 7"))
    edited, _ = load_heads(vault)
    assert [h.count for h in edited] == [7]


def test_a_name_only_mentioned_elsewhere_is_no_block(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "patterns/registry.md": ONE,
            "patterns/other.md": "# Other\n\nSee [[alpha]]; `### alpha` in prose.\n\n"
            "```\n### alpha\n```\n",
        }
    )
    assert find_block(vault, "alpha").rel == "patterns/registry.md"


def test_use_counts_and_refuses_as_before(make_vault: MakeVault, runner: CliRunner) -> None:
    vault = make_vault(
        {"patterns/registry.md": ONE, "patterns/two.md": ONE.replace("alpha", "Alpha")}
    )
    done = runner.invoke(cli, ["--vault", str(vault), "use", "alpha"])
    assert done.exit_code == 0, done.output
    assert "**success count:** 2\n" in (vault / "patterns/registry.md").read_text()
    missing = runner.invoke(cli, ["--vault", str(vault), "use", "ALPHA"])
    assert missing.exit_code != 0
    assert "did you mean 'alpha' at patterns/registry.md:1?" in missing.output
