"""A group with no command prints its formatted help (exit 0), never one squashed error line."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from vaultkeeper.cli import cli


@pytest.mark.parametrize("args", [[], ["apply"], ["hooks"]])
def test_a_group_without_a_command_prints_its_help(args: list[str]) -> None:
    result = CliRunner().invoke(cli, args, prog_name="vaultkeeper")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"Usage: {' '.join(['vaultkeeper', *args])} [OPTIONS] COMMAND [ARGS]..."
    assert "Commands:" in lines and len(lines) > 10
    assert result.stderr == ""


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["new", "poem", "x", "-d", "y"],
            "vaultkeeper: error: new: invalid value for KIND: 'poem' is not one of 'memory', "
            "'decision', 'research', 'reference', 'pattern' (see vaultkeeper new --help)",
        ),
        (
            ["new"],
            "vaultkeeper: error: new: missing argument KIND. Choose from: memory, decision, "
            "research, reference, pattern (see vaultkeeper new --help)",
        ),
    ],
)
def test_a_choice_argument_is_named_not_shown_as_its_metavar(args: list[str], line: str) -> None:
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [line]
