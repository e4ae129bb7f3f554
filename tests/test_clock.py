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
