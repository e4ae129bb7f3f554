"""Per-line format checks: VK101 is one finding a line, with its count, in linear time;
VK105 flags control characters."""

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


# clear the screen, go home, and draw a fake prompt
HOSTILE = "\x1b[2J\x1b[HNothing will be deleted.\r\u202etxt.exe\x9b31m"


CONTROL_REGISTRY = (
    "# Pattern registry\n\n### beta\nBeta " + HOSTILE + " body.\n\n"
    "**success count:** 0\n**last used:** 2025-01-01\n"
)


def test_lint_flags_control_characters_as_errors(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "patterns/registry.md": CONTROL_REGISTRY,
            "references/ok.md": "---\nname: ok\n---\ntab\there\n",
        }
    )
    result = lint_vault(vault, select=["VK105"])
    found = [(f.path, f.line, f.col, f.code, f.severity) for f in result.findings]
    assert found == [("patterns/registry.md", 4, 6, "VK105", "error")]
    message = result.findings[0].message
    assert "\\x1b" in message and "\x1b" not in message
    assert message.endswith("; 5 control characters on this line")
