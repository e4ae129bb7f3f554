"""A newcomer's usage errors name the command and what to do (issue 36, item 10).

``scan --vault V`` (the global option after the command) says that ``--vault`` goes
first; an option missing its value (``new memory ok -d``) names the command and its
``--help``, as every other usage error does. Nothing is written on either refusal.
"""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from conftest import snapshot

from vaultkeeper.cli import cli


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), env={"VAULTKEEPER_TODAY": "2026-12-01"})
    return result.exit_code, result.stdout, result.stderr


def test_the_global_vault_option_after_the_command_says_it_goes_first(sample: Path) -> None:
    before = snapshot(sample)
    code, out, err = _run("scan", "--vault", str(sample))
    assert code == 2 and out == ""
    assert err == (
        "vaultkeeper: error: scan: no such option --vault; --vault is global: it goes first "
        "(vaultkeeper --vault PATH scan ...) (see vaultkeeper scan --help)\n"
    )
    code, _, err = _run("apply", "promote", "x", "--vault", str(sample))
    assert code == 2 and "(vaultkeeper --vault PATH apply ...)" in err
    assert snapshot(sample) == before


def test_an_option_without_its_value_names_the_command_and_its_help(sample: Path) -> None:
    before = snapshot(sample)
    code, out, err = _run("--vault", str(sample), "new", "memory", "ok", "-d")
    assert (code, out) == (2, "")
    assert err == (
        "vaultkeeper: error: new: option -d requires an argument (see vaultkeeper new --help)\n"
    )
    code, _, err = _run("--vault", str(sample), "apply", "promote", "x", "--evidence")
    assert code == 2 and err.startswith("vaultkeeper: error: apply promote: option --evidence")
    assert err.endswith("(see vaultkeeper apply promote --help)\n")
    assert snapshot(sample) == before
