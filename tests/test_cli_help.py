"""Every command's --help ends in an example of itself (its docstring is its help).

The walk goes through the whole command tree as cli.py assembles it, so a command added
without an example fails here by name.
"""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from vaultkeeper.cli import cli


def _commands(command: click.Command, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [path]
    if isinstance(command, click.Group):
        for name, sub in sorted(command.commands.items()):
            if not sub.hidden:
                found += _commands(sub, (*path, name))
    return found


COMMANDS = _commands(cli)


def test_the_walk_reaches_nested_commands() -> None:
    assert ("apply", "promote") in COMMANDS and ("native", "prune") in COMMANDS
    assert len(COMMANDS) > 30


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "vaultkeeper")
def test_help_shows_an_example_of_the_command(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(cli, [*path, "--help"], prog_name="vaultkeeper")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith(" ".join(("Usage: vaultkeeper", *path)))
    assert "  Example:" in lines, f"{' '.join(path)} --help has no Example:"
    block = lines[lines.index("  Example:") + 1 :]
    examples = " ".join(block[: block.index("")]).replace("\\", " ").split("|")
    assert any(_runs(part.split(), path) for part in examples), (path, examples)


def _runs(words: list[str], path: tuple[str, ...]) -> bool:
    """Whether a shell line runs ``vaultkeeper`` with the command ``path`` (after any
    ``VAR=value``, ``cd DIR &&`` and the global ``--vault V``)."""
    if "vaultkeeper" not in words:
        return False
    rest = words[words.index("vaultkeeper") + 1 :]
    if rest[:1] == ["--vault"]:
        rest = rest[2:]
    return tuple(rest[: len(path)]) == path
