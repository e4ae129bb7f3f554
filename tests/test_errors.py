"""One place says what an exception means: errors.explain maps it to a line and an exit
code, output.fail says it (one line on stderr; under --json one JSON object on stdout),
and every edge that runs a command -- the click group, the scan and the brief without
click -- goes through them, so the same failure reads the same whichever way it came (an
MCP tool's error and an ``apply batch`` outcome take their line from explain too).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, SAMPLE_VAULT
from vaultkeeper import errors
from vaultkeeper.errors import explain
from vaultkeeper.output import fail


def _raised(exc: BaseException) -> BaseException:
    try:
        raise exc
    except BaseException as caught:  # with its traceback, as an edge catches it
        return caught


@pytest.mark.parametrize(
    ("exc", "line", "code"),
    [
        (errors.GateRefused("pin: no receipt"), "pin: no receipt", 1),
        (errors.UsageError("--x: bad"), "--x: bad", 2),
        (errors.NoVaultError("no vault here"), "no vault here", 2),
        (errors.NeedsPerson("asks a person"), "asks a person", 3),
        (PermissionError(13, "Permission denied", "/v/a.md"), "/v/a.md: Permission denied", 1),
        (KeyboardInterrupt(), "interrupted", 130),
        (BrokenPipeError(32, "Broken pipe"), "Broken pipe", 141),
    ],
)
def test_explain_maps_each_kind_to_its_line_and_code(
    exc: BaseException, line: str, code: int
) -> None:
    assert explain(exc) == (line, code)


def test_a_bug_is_one_line_naming_where_it_was_raised() -> None:
    line, code = explain(_raised(ZeroDivisionError("division by\nzero")))
    assert code == 1 and line is not None and "\n" not in line
    assert re.fullmatch(
        r"internal error \(ZeroDivisionError at test_errors\.py:\d+: division by zero\); "
        r"a bug in vaultkeeper, please report it",
        line,
    ), line


def test_fail_says_one_line_and_under_json_one_object(capsys: pytest.CaptureFixture[str]) -> None:
    assert fail(errors.GateRefused("a\x1b[31mred"), as_json=True) == 1
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and err.startswith("vaultkeeper: error: a")
    assert "\x1b" not in err  # a terminal never receives an escape from a message
    assert json.loads(out) == {"error": "a\x1b[31mred", "exit": 1}
    assert fail(KeyboardInterrupt(), as_json=True) == 130
    assert capsys.readouterr() == ("", "vaultkeeper: interrupted\n")


def test_only_output_fail_shapes_a_json_error() -> None:
    """The shape {"error": ..., "exit": N} is built in one module; none of its own."""
    shaping = [
        p.relative_to(REPO).as_posix()
        for p in sorted((REPO / "vaultkeeper").rglob("*.py"))
        if re.search(r"""["']exit["']\s*:""", p.read_text(encoding="utf-8"))
    ]
    assert shaping == ["vaultkeeper/output.py"]


@pytest.mark.parametrize("argv", [["scan", "--json"], ["scan", "--force"], ["report", "--brief"]])
def test_the_same_failure_reads_the_same_with_or_without_click(
    argv: list[str], tmp_path: Path
) -> None:
    """state/ made a file: the scan fails on it (the brief notes it and goes on); the
    fast path (entry.py) and click (cli.py) give the same bytes and the same code."""
    vault = tmp_path / "v"
    shutil.copytree(SAMPLE_VAULT, vault)
    shutil.rmtree(vault / "state", ignore_errors=True)
    (vault / "state").write_text("not a folder\n", encoding="utf-8")
    runs = []
    for module in ("vaultkeeper", "vaultkeeper.cli"):
        done = subprocess.run(
            [sys.executable, "-m", module, "--vault", str(vault), *argv],
            capture_output=True, text=True, cwd=REPO, timeout=120, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        runs.append((done.returncode, done.stdout, done.stderr))
    assert runs[0] == runs[1]
    code, out, err = runs[0]
    assert code == (1 if argv[0] == "scan" else 0), err
    if code:
        assert err.endswith("\n") and "Traceback" not in err, err
        assert err.splitlines()[-1].startswith("vaultkeeper: error: "), err
        if "--json" in argv:
            assert json.loads(out)["exit"] == code
