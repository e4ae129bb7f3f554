"""VAULTKEEPER_TODAY: every command behaves as on that date; a bad value is one line, exit 2."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import MakeVault, snapshot
from vaultkeeper import clock, config
from vaultkeeper.cli import cli
from vaultkeeper.errors import UsageError

REGISTRY = (
    "# Pattern registry\n\n### alpha\nA.\n\n**success count:** 1\n**last used:** 2026-01-05\n"
)


def test_now_moves_to_the_given_day_and_keeps_the_time_of_day() -> None:
    moved = clock.now({config.ENV_TODAY: "2027-03-01"})
    assert moved.date() == dt.date(2027, 3, 1) and moved.tzinfo == dt.timezone.utc
    assert clock.now({}).date() == clock.real_now().date()


def test_now_ns_is_real_time_unless_the_day_is_moved() -> None:
    """The throttled scan's "now" without datetime: the same instant, to the microsecond."""
    before = clock.real_now()
    ns = clock.now_ns({})
    after = clock.real_now()
    assert ns is not None and before <= clock.from_ns(ns) <= after
    assert clock.now_ns({config.ENV_TODAY: "2027-03-01"}) is None  # ask now(): it moves the date
    moment = dt.datetime(2026, 11, 30, 23, 59, 59, 999_999, tzinfo=dt.timezone.utc)
    ns = int(moment.timestamp()) * 10**9 + moment.microsecond * 1000 + 999
    assert clock.from_ns(ns) == moment and clock.from_ns(ns).tzinfo == dt.timezone.utc


@pytest.mark.parametrize("value", ["2026-13-01", "tomorrow", "2026-1-5", "20260105"])
def test_a_bad_value_is_refused(value: str) -> None:
    with pytest.raises(UsageError, match=r"VAULTKEEPER_TODAY=.*not a date; use YYYY-MM-DD"):
        clock.now({config.ENV_TODAY: value})


def test_use_records_the_given_day(make_vault: MakeVault, runner: CliRunner) -> None:
    vault = make_vault({"patterns/registry.md": REGISTRY})
    env = {config.ENV_TODAY: "2026-02-10"}
    result = runner.invoke(cli, ["--vault", str(vault), "use", "alpha"], env=env)
    assert result.exit_code == 0, result.output
    assert "**last used:** 2026-02-10\n" in (vault / "patterns/registry.md").read_text()


def test_scan_classifies_as_on_the_given_day(make_vault: MakeVault, runner: CliRunner) -> None:
    registry = REGISTRY.replace("count:** 1", "count:** 0")
    vault = make_vault({"patterns/registry.md": registry})
    early = runner.invoke(
        cli,
        ["--vault", str(vault), "scan", "--force", "--json"],
        env={config.ENV_TODAY: "2026-02-01"},
    )
    assert [c["name"] for c in json.loads(early.stdout)["prune"]] == []
    late = runner.invoke(
        cli,
        ["--vault", str(vault), "scan", "--force", "--json"],
        env={config.ENV_TODAY: "2026-06-01"},
    )
    assert [c["name"] for c in json.loads(late.stdout)["prune"]] == ["alpha"]


def test_a_bad_day_refuses_a_writing_command_before_it_writes(
    make_vault: MakeVault, runner: CliRunner, tmp_path: Path
) -> None:
    vault = make_vault({"patterns/registry.md": REGISTRY})
    before = snapshot(vault, skip_state=False)
    result = runner.invoke(
        cli, ["--vault", str(vault), "use", "alpha"], env={config.ENV_TODAY: "soon"}
    )
    assert result.exit_code == 2
    assert result.stderr == (
        "vaultkeeper: error: VAULTKEEPER_TODAY='soon': not a date; use YYYY-MM-DD\n"
    )
    assert snapshot(vault, skip_state=False) == before


MEMORY = (
    "---\nname: late\ndescription: d\ntype: memory\nstatus: held_out\nlabel: inferred\n"
    'falsification_condition: "x"\nholdout_until: 9999-12-31T23:00:00-05:00\n---\n\n# late\n'
)


@pytest.mark.parametrize("day", ["9999-12-31", "0001-01-01"])
@pytest.mark.parametrize(
    "args",
    [("new", "memory", "m1", "-p", "api", "-d", "d"), ("scan", "--force"), ("use", "alpha")],
)
def test_a_day_at_the_ends_of_the_calendar_is_one_line(
    make_vault: MakeVault, runner: CliRunner, day: str, args: tuple[str, ...]
) -> None:
    """Windows are added to and taken from today: a day near year 1 or 9999 would overflow."""
    vault = make_vault({"patterns/registry.md": REGISTRY})
    before = snapshot(vault, skip_state=False)
    result = runner.invoke(cli, ["--vault", str(vault), *args], env={config.ENV_TODAY: day})
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"vaultkeeper: error: VAULTKEEPER_TODAY='{day}': outside 1900-01-01..9000-12-31; "
        "use a day in that range\n"
    )
    assert snapshot(vault, skip_state=False) == before


def test_an_unquoted_holdout_past_the_last_utc_day_is_a_problem_line(
    make_vault: MakeVault, runner: CliRunner
) -> None:
    """9999-12-31T23:00:00-05:00 is a YAML datetime whose UTC day is past year 9999."""
    vault = make_vault({"projects/api/memory/late.md": MEMORY})
    scan = runner.invoke(cli, ["--vault", str(vault), "scan", "--force"])
    assert scan.exit_code == 0, scan.output
    assert (
        "projects/api/memory/late.md:8: holdout_until 9999-12-31T23:00:00-05:00 is not a date "
        "(YYYY-MM-DD); skipped"
    ) in scan.stderr
    again = runner.invoke(
        cli,
        [
            "--vault",
            str(vault),
            "apply",
            "revalidate",
            "late",
            "--pass",
            "--evidence",
            "https://x/1",
        ],
    )
    assert again.exit_code == 1
    assert "holdout_until 9999-12-31T23:00:00-05:00 is not a quoted ISO date" in again.stderr
    assert "Traceback" not in again.output + scan.output
