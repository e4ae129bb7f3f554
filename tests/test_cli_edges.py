"""The command line's edges: conflicting flags, a folder that is not a vault, a closed pipe.

Each test here pins a defect that was found and fixed: what a user notices (exit code,
the one line on stderr, the files left untouched) is what is asserted.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import snapshot

from vaultkeeper.cli import cli

HELD = "projects/api/memory/flaky-ci-retries.md"
ENV = {"VAULTKEEPER_TODAY": "2026-12-01"}


def invoke(vault: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["--vault", str(vault), *args], env=env or ENV)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (("--pass", "--fail"), "--pass and --fail"),
        (("--fail", "--pass"), "--pass and --fail"),  # was: the last one won, and archived
        (("--reopen", "--pass"), "--pass and --reopen"),
    ],
)
def test_revalidate_with_two_results_is_a_usage_error_and_writes_nothing(
    sample: Path, flags: tuple[str, str], named: str
) -> None:
    before = snapshot(sample, skip_state=False)
    code, out, err = invoke(
        sample, "apply", "revalidate", HELD, *flags, "--evidence", "https://x.org/1"
    )
    assert code == 2
    assert out == ""
    assert err == (
        f"vaultkeeper: error: revalidate takes one of --pass, --fail, --reopen, not {named}\n"
    )
    assert snapshot(sample, skip_state=False) == before
