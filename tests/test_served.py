"""What vaultkeeper serves to an agent masks credentials and strips control characters;
``new`` refuses a description that holds a credential and writes nothing."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from click.testing import CliRunner

from tests.conftest import MakeVault, snapshot
from vaultkeeper.cli import cli
from vaultkeeper.report.brief import render_brief
from vaultkeeper.report.candidates import render_problems, render_text
from vaultkeeper.scan.classify import classify

TOKEN = "ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"
NOW = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.timezone.utc)
MEMORY = f"""---
name: leaky
description: A lesson whose condition quotes a token
type: memory
status: held_out
label: inferred
falsification_condition: "the deploy with {TOKEN} fails\\x1b[2J\\x1b]0;pwned\\x07 again"
holdout_until: "2026-08-01"
relations: {{}}
sources: []
provenance: []
---

Body.
"""


def leaky(make_vault: MakeVault) -> Path:
    return make_vault(
        {
            "projects/p/memory/leaky.md": MEMORY,
            "projects/p/memory/broken.md": f"---\nname: [{TOKEN}\n---\n",
        }
    )


def test_report_text_json_and_brief_mask_and_strip(make_vault: MakeVault) -> None:
    report = classify(leaky(make_vault), NOW)
    assert [c.name for c in report.held_out] == ["leaky"]
    assert TOKEN in (report.held_out[0].falsification_condition or "")  # the data keeps it
    served = {
        "text": "\n".join(render_text(report)),
        "problems": "\n".join(render_problems(report)),
        "json": json.dumps(report.to_dict()),
        "brief": render_brief(report, NOW),
    }
    for where, out in served.items():
        assert TOKEN not in out, where
        assert "\x1b" not in out and "\x07" not in out and "\\u001b" not in out, where
    assert "the deploy with [redacted: github token] fails again" in served["brief"]
    assert "[redacted: github token]" in served["json"]


def test_cli_report_and_brief_serve_masked_text(make_vault: MakeVault, runner: CliRunner) -> None:
    vault = leaky(make_vault)
    env = {"VAULTKEEPER_TODAY": "2026-12-01"}
    scan = runner.invoke(cli, ["--vault", str(vault), "scan", "--force"], env=env)
    assert scan.exit_code == 0, scan.output
    for args in (["report"], ["report", "--json"], ["report", "--brief"]):
        result = runner.invoke(cli, ["--vault", str(vault), *args], env=env)
        assert result.exit_code == 0
        assert TOKEN not in result.output and "\x1b" not in result.output, args
    assert TOKEN not in scan.output and "\x1b" not in scan.output


def test_new_refuses_a_description_holding_a_credential(
    make_vault: MakeVault, runner: CliRunner
) -> None:
    vault = make_vault()
    before = snapshot(vault)
    result = runner.invoke(
        cli,
        ["--vault", str(vault), "new", "memory", "deploy", "-p", "api",
         "-d", f"Deploy with token={TOKEN}"],
    )  # fmt: skip
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1
    assert "looks like a github token at column 19" in lines[0]
    assert TOKEN not in result.output
    assert snapshot(vault) == before


def test_new_takes_a_description_that_only_mentions_tokens(
    make_vault: MakeVault, runner: CliRunner
) -> None:
    vault = make_vault()
    result = runner.invoke(
        cli,
        ["--vault", str(vault), "new", "memory", "rotate", "-p", "api",
         "-d", "Rotate the API token: every 90 days"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
