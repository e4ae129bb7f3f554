"""After `use`, the saved report's block pairs and unused skills are what a fresh scan
says, whether they were kept (no block's words changed) or compared all over again."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from vaultkeeper.apply.resync_blocks import unchanged_words

from vaultkeeper.cli import cli
from vaultkeeper.report.candidates import load_report, report_path
from vaultkeeper.upkeep.decay import load_usage

TODAY = dt.datetime.now(dt.timezone.utc).date()
OLD = (TODAY - dt.timedelta(days=400)).isoformat()
RECENT = (TODAY - dt.timedelta(days=3)).isoformat()


def block(name: str, text: str, *, last: str | None = RECENT, promoted: str = "") -> str:
    lines = [f"### {name}", text, "", "**success count:** 1"]
    if last is not None:
        lines.append(f"**last used:** {last}")
    if promoted:
        lines.append(f"**promoted:** {promoted} -> [[skills/{name}/SKILL]]")
    return "\n".join(lines) + "\n\n"


REGISTRY = "# Pattern registry\n\n" + "".join(
    [
        block("first-one", "Counts start here without a last used line.", last=None),
        block("retry-flaky-tests", "Retry flaky network tests once in the suite."),
        block("old-skill", "A skill nobody invoked for a year.", last=OLD, promoted=OLD),
        block("retry-flaky-test", "Retry flaky network tests once in the suite runner."),
    ]
)
MORE = "# More\n\n" + "".join(
    [
        block("pin-the-clock", "Pin the clock in date tests with a fixed utc value."),
        block("pin-clock-tests", "Pin the clock in date tests with a fixed utc value now."),
        block("later-skill", "Another idle skill.", last=OLD, promoted=OLD),
    ]
)


@pytest.fixture
def vault(make_vault: Any, runner: CliRunner) -> Path:
    root: Path = make_vault({"patterns/registry.md": REGISTRY, "patterns/more.md": MORE})
    assert vk(runner, root, "scan", "--force").exit_code == 0
    report = saved(root)
    assert len(report["duplicates"]) == 2 and len(report["skills_unused"]) == 2
    return root


def vk(runner: CliRunner, vault: Path, *args: str) -> Any:
    return runner.invoke(cli, ["--vault", str(vault), *args])


def saved(vault: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(report_path(vault).read_text())
    data.pop("updated_at", None)
    return data


def sections(data: dict[str, Any]) -> list[Any]:
    return [data[k] for k in ("promote", "prune", "duplicates", "skills_unused", "problems")]


@pytest.mark.parametrize("name", ["first-one", "old-skill", "later-skill"])
def test_use_leaves_the_report_as_a_fresh_scan_says(
    vault: Path, runner: CliRunner, name: str
) -> None:
    assert vk(runner, vault, "use", name).exit_code == 0
    after_use = saved(vault)
    assert vk(runner, vault, "scan", "--force").exit_code == 0
    assert sections(after_use) == sections(saved(vault))


def test_an_inserted_last_used_line_moves_the_pairs_below(vault: Path, runner: CliRunner) -> None:
    pairs = saved(vault)["duplicates"]  # more.md's pair, then registry.md's
    assert [p["a"]["path"] for p in pairs] == ["patterns/more.md", "patterns/registry.md"]
    assert vk(runner, vault, "use", "first-one").exit_code == 0
    moved = saved(vault)["duplicates"]
    assert [p["a"]["line"] for p in moved] == [pairs[0]["a"]["line"], pairs[1]["a"]["line"] + 1]
    assert [p["b"]["line"] for p in moved] == [pairs[0]["b"]["line"], pairs[1]["b"]["line"] + 1]


def test_the_report_is_the_same_bytes_as_comparing_everything_again(
    vault: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    shutil.copytree(vault, other)
    assert vk(runner, vault, "use", "old-skill").exit_code == 0
    monkeypatch.setattr(
        "vaultkeeper.apply.resync_upkeep.unchanged_words", lambda *_: None
    )  # the whole registry compared again, as before the shortcut
    assert vk(runner, other, "use", "old-skill").exit_code == 0
    assert saved(vault) == saved(other)
    for rel in ("patterns/registry.md", "patterns/more.md"):
        assert (vault / rel).read_bytes() == (other / rel).read_bytes()


def test_a_reworded_block_is_not_kept(vault: Path) -> None:
    report = load_report(vault).report
    assert report is not None
    before = {"patterns/more.md": MORE.replace("Another idle skill.", "Something else.")}
    usage = load_usage(vault)
    kept = unchanged_words(
        vault, list(report.duplicates), list(report.skills_unused), before, usage, TODAY
    )
    assert kept is None
    same = {"patterns/more.md": MORE}
    got = unchanged_words(
        vault, list(report.duplicates), list(report.skills_unused), same, usage, TODAY
    )
    assert got == (list(report.duplicates), list(report.skills_unused))


@pytest.mark.parametrize(
    "args",
    [
        ("apply", "skip", "old-skill", "--reason", "later"),
        ("apply", "prune", "first-one"),  # asks a person: queued, nothing deleted
        ("apply", "promote", "nothing-like-it", "--evidence", "patterns/more.md:1"),  # refused
    ],
)
def test_a_decision_that_changes_no_entry_keeps_the_sections(
    vault: Path,
    runner: CliRunner,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    args: tuple[str, ...],
) -> None:
    other = tmp_path / "other"
    shutil.copytree(vault, other)
    vk(runner, vault, *args)
    monkeypatch.setattr("vaultkeeper.apply.resync_upkeep.unchanged_words", lambda *_: None)
    vk(runner, other, *args)
    assert saved(vault) == saved(other)
    assert vk(runner, vault, "scan", "--force").exit_code == 0
    assert saved(vault)["duplicates"] == saved(other)["duplicates"]
    assert saved(vault)["skills_unused"] == saved(other)["skills_unused"]


PROVEN = (
    "### retry-network-tests\nRetry flaky network tests once in the suite, again.\n\n"
    f"**success count:** 4\n**last used:** {RECENT}\n\n"
)


@pytest.mark.parametrize("name", ["retry-network-tests", "later-skill-twin"])
def test_a_promote_keeps_the_block_pairs_as_comparing_everything_again(
    make_vault: Any, runner: CliRunner, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str
) -> None:
    twin = PROVEN.replace("retry-network-tests", "later-skill-twin").replace(
        "Retry flaky network tests once in the suite, again.", "Another idle skill."
    )
    vault: Path = make_vault(
        {"patterns/registry.md": REGISTRY + PROVEN, "patterns/more.md": MORE + twin}
    )
    assert vk(runner, vault, "scan", "--force").exit_code == 0
    other = tmp_path / "other"
    shutil.copytree(vault, other)
    kept: list[object] = []
    real = unchanged_words

    def spying(*args: Any) -> Any:
        kept.append(real(*args))
        return kept[-1]

    monkeypatch.setattr("vaultkeeper.apply.resync_upkeep.unchanged_words", spying)
    promote = ("apply", "promote", name, "--evidence", "patterns/more.md:1")
    assert vk(runner, vault, *promote).exit_code == 0
    assert kept and kept[-1] is not None  # the registry's words were not compared again
    monkeypatch.setattr("vaultkeeper.apply.resync_upkeep.unchanged_words", lambda *_: None)
    assert vk(runner, other, *promote).exit_code == 0
    assert saved(vault) == saved(other)
    assert vk(runner, other, "scan", "--force").exit_code == 0
    assert sections(saved(vault)) == sections(saved(other))
