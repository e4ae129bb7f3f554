"""VK101 is one finding per line, with the count, in linear time."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import MakeVault, run_vaultkeeper
from vaultkeeper.lint.format import check_ascii
from vaultkeeper.lint.run import lint_vault

_COUNT = re.compile(r"; ([0-9]+) non-ASCII characters on this line$")
CHARS = ["a", " ", "`", "-", "\u2014", "\u2192", "\u00e9", "\u2603"]
LINE = st.text(alphabet=st.sampled_from(CHARS))


@given(st.lists(LINE, max_size=8))
def test_one_finding_per_non_ascii_line_with_its_count(lines: list[str]) -> None:
    text = [line + "\n" for line in lines]
    findings = list(check_ascii("a.md", text, set(), 0))
    wanted = [i + 1 for i, line in enumerate(text) if not line.isascii()]
    assert [f.line for f in findings] == wanted
    for finding in findings:
        line = text[finding.line - 1]
        count = sum(1 for c in line if not c.isascii())
        first = next(i for i, c in enumerate(line) if not c.isascii())
        assert finding.col == first + 1
        m = _COUNT.search(finding.message)
        assert (int(m.group(1)) if m else 1) == count


def test_a_line_of_millions_of_glyphs_is_one_finding_and_status_ends(
    make_vault: MakeVault,
) -> None:
    # Quadratic, this takes hours (400k glyphs took 4.7 s); linear, a few seconds. The
    # timeout is the guard, not a measurement.
    body = "x " + "\u2014" * 4_000_000 + "\n"
    vault = make_vault({"references/dash.md": "---\nname: dash\n---\n" + body})
    lint = run_vaultkeeper(vault, "lint", "--select", "VK101")
    assert lint.returncode == 1
    assert lint.stdout.splitlines()[0] == (
        "references/dash.md:4:3: VK101 non-ASCII character '\u2014' (U+2014 EM DASH): "
        "write '--'; 4000000 non-ASCII characters on this line"
    )
    assert lint.stdout.count("VK101") == 1
    status = run_vaultkeeper(vault, "status")
    assert status.returncode in (0, 1) and "lint errors" in status.stdout


def _block(name: str, extra: str = "") -> str:
    return f"### {name}\nBody.\n\n**success count:** 1\n**last used:** 2026-01-01\n{extra}\n"


def test_fix_never_renames_a_heading_onto_another_block(make_vault: MakeVault) -> None:
    blocks = [_block("a \u2014 b"), _block("a -- b"), _block("c \u2192 d")]
    registry = "# Pattern registry\n\n" + "".join(blocks)
    vault = make_vault({"patterns/registry.md": registry})
    result = lint_vault(vault, select=["VK101", "VK4"], fix=True)
    text = (vault / "patterns/registry.md").read_text()
    assert "### a \u2014 b\n" in text and "### a -- b\n" in text  # left for a person
    assert "### c -> d\n" in text  # no clash: fixed
    assert result.fixed == 1
    # "a — b" and "a -- b" are one link target too (VK402)
    assert sorted(f.code for f in result.findings) == ["VK101", "VK402"]


def test_names_differing_only_in_unicode_form_are_duplicates(make_vault: MakeVault) -> None:
    registry = "# Pattern registry\n\n" + _block("caf\u00e9") + _block("Cafe\u0301")
    vault = make_vault({"patterns/registry.md": registry})
    found = [(f.line, f.code) for f in lint_vault(vault, select=["VK402"]).findings]
    assert found == [(9, "VK402")]


def test_a_second_success_count_line_is_an_error(make_vault: MakeVault) -> None:
    registry = "# Pattern registry\n\n" + _block("twice", "**success count:** 7\n")
    vault = make_vault({"patterns/registry.md": registry})
    findings = lint_vault(vault, select=["VK401"]).findings
    assert [(f.line, f.code, f.severity) for f in findings] == [(8, "VK401", "error")]
    assert "a second **success count:** line" in findings[0].message
