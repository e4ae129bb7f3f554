"""output.show: a command's result (Shown) rendered in one place, as text or as JSON, and
the commands that render through it keep no JSON/text branches of their own."""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import REPO
from vaultkeeper.output import Note, Shown, show

RESULT = Shown({"n": 2}, ("first", Note("in between"), "last"), ("warning: w",), code=3)


def test_text_puts_lines_on_stdout_and_notes_on_stderr_in_their_place(
    capfd: pytest.CaptureFixture[str],
) -> None:
    assert show(RESULT, as_json=False) == 3
    out, err = capfd.readouterr()
    assert out == "first\nlast\n"
    assert err == "warning: w\nin between\n"


def test_text_is_shown_inert_whatever_the_command_put_in_it(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """A command that forgot to make a vault file's name inert still writes no escape
    sequence (an OSC 52 clipboard write, a screen clear) to the person's terminal."""
    osc52 = "\x1b]52;c;QUFB\x07"
    show(Shown(lines=(f"a {osc52}", Note(f"b {osc52}")), notes=(f"c {osc52}",)))
    out, err = capfd.readouterr()
    assert out == "a \\x1b]52;c;QUFB\\x07\n"
    assert err == "c \\x1b]52;c;QUFB\\x07\nb \\x1b]52;c;QUFB\\x07\n"


def test_json_prints_the_data_and_the_notes_but_no_line(
    capfd: pytest.CaptureFixture[str],
) -> None:
    assert show(RESULT, as_json=True) == 3
    out, err = capfd.readouterr()
    assert json.loads(out) == {"n": 2}
    assert out == '{\n  "n": 2\n}\n'
    assert err == "warning: w\n"


def test_a_result_is_frozen_and_defaults_to_nothing_shown_and_exit_0(
    capfd: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(AttributeError):
        RESULT.code = 0  # type: ignore[misc]
    assert show(Shown()) == 0
    assert capfd.readouterr() == ("", "")


MOVED = ("checks", "search", "review", "entries", "ingest", "native", "hooks")
MOVED += ("apply", "anchor", "scan", "status")


@pytest.mark.parametrize("name", MOVED)
def test_a_moved_command_renders_only_through_show(name: str) -> None:
    text = (REPO / "vaultkeeper" / "commands" / f"{name}.py").read_text(encoding="utf-8")
    assert "print_json" not in text
    assert not re.search(r"^\s*if (not )?as_json:", text, re.M)  # a rendering branch
