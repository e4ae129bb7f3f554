"""Issue 14 items 5 and 6: one bad file never stops the scan; the scan lock never blocks for ever."""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from pathlib import Path

from click.testing import CliRunner

from tests.conftest import MakeVault
from vaultkeeper import config, scan
from vaultkeeper.cli import cli

NOW = dt.datetime(2026, 9, 1, 12, 0, tzinfo=dt.timezone.utc)
HUGE = "9" * 4301


def memory(name: str, status: str, until: str) -> str:
    return (
        f"---\nname: {name}\ndescription: a lesson\ntype: memory\nstatus: {status}\n"
        f"label: inferred\nholdout_until: {until}\n---\nBody.\n"
    )


def huge_vault(make_vault: MakeVault) -> Path:
    return make_vault(
        {
            "projects/p/memory/status.md": memory("status", HUGE, '"2026-01-01"'),
            "projects/p/memory/until.md": memory("until", "held_out", HUGE),
            "projects/p/memory/due.md": memory("due", "held_out", '"2026-08-01"'),
        }
    )


def test_a_huge_number_is_a_problem_line_and_the_scan_goes_on(make_vault: MakeVault) -> None:
    vault = huge_vault(make_vault)
    report = scan.classify(vault, NOW)
    assert [c.path for c in report.held_out] == ["projects/p/memory/due.md"]
    reasons = {(p.path, p.line): p.reason for p in report.problems}
    for path, line in (("projects/p/memory/status.md", 5), ("projects/p/memory/until.md", 7)):
        assert reasons[(path, line)] == (
            "bad YAML frontmatter: a number too long to read (thousands of digits)"
        )


def test_the_scan_command_exits_0_with_the_problem(make_vault: MakeVault) -> None:
    vault = huge_vault(make_vault)
    env = {"VAULTKEEPER_TODAY": "2026-09-01"}
    result = CliRunner().invoke(cli, ["--vault", str(vault), "scan", "--force"], env=env)
    assert result.exit_code == 0, result.output
    assert "held-out due 1" in result.stdout
    assert "projects/p/memory/until.md:7: bad YAML frontmatter: a number too long" in (
        result.stdout + result.stderr
    )
    report = json.loads((vault / "state" / config.LAST_REPORT_FILE).read_text())
    assert len(report["problems"]) == 2
