"""The foundation's command line: help with examples, version, `python -m vaultkeeper`."""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner

from vaultkeeper import __version__
from vaultkeeper.cli import cli

FOUNDATION = ["init", "new", "use"]


@pytest.mark.parametrize("command", FOUNDATION)
def test_help_shows_an_example(command: str) -> None:
    for flag in ("--help", "-h"):
        result = CliRunner().invoke(cli, [command, flag], prog_name="vaultkeeper")
        assert result.exit_code == 0, result.output
        lines = result.stdout.splitlines()
        assert lines[0].startswith(f"Usage: vaultkeeper {command} ")
        at = lines.index("  Example:")
        assert lines[at + 1].startswith(f"    vaultkeeper {command} ")


def test_group_help_lists_the_foundation_and_exit_codes() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    for command in FOUNDATION:
        assert f"  {command} " in result.stdout
    assert "--vault" in result.stdout
    assert "3 waiting for a person" in result.stdout
    assert "  Example:" in result.stdout


def test_version() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert result.stdout == f"vaultkeeper, version {__version__}\n"


def test_python_dash_m_works() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "vaultkeeper", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("Usage: vaultkeeper [OPTIONS] COMMAND [ARGS]...")
    run = subprocess.run(
        [sys.executable, "-m", "vaultkeeper", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.stdout.strip() == f"vaultkeeper, version {__version__}"


def test_usage_errors_exit_2_without_traceback() -> None:
    runner = CliRunner()
    for args in (["new", "poem", "x", "-d", "y"], ["new", "memory", "x"], ["use"], ["nope"]):
        result = runner.invoke(cli, args)
        assert result.exit_code == 2, (args, result.output)
        assert "Traceback" not in result.output
        assert "Error:" in result.stderr
