"""status's rules as a newcomer meets them (issue 36, item 6).

One rule for a missing ``_index.md`` (with or without ``.obsidian/``); the lint figure is
the one ``vaultkeeper lint`` gives; a vault kept only by its hooks and cron (scans, never
a ``lint`` by hand) reads ok, its lint figures kept current by the scans; the table fits
the terminal, 80 columns included.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from vaultkeeper import config
from vaultkeeper.cli import cli
from vaultkeeper.entries.init import init_vault
from vaultkeeper.scan.classify import run_scan

NOW = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.timezone.utc)


def _status(vault: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--vault", str(vault), "status", *args], env=env)
    return result.exit_code, result.stdout


def _signals(vault: Path) -> tuple[int, dict[str, dict[str, object]]]:
    code, out = _status(vault, "--json")
    data = json.loads(out)
    return code, {s["name"]: s for s in data["signals"]} | {"overall": data}


@pytest.mark.parametrize("obsidian", [False, True])
def test_a_missing_index_is_one_rule_with_or_without_obsidian(
    tmp_path: Path, obsidian: bool
) -> None:
    vault = tmp_path / "notes"
    vault.mkdir()
    if obsidian:
        (vault / ".obsidian").mkdir()
    (vault / "a.md").write_text("# A\n\nplain notes\n", encoding="utf-8")
    code, signals = _signals(vault)
    budget = signals["index_budget"]
    assert (code, budget["verdict"], budget["shown"]) == (0, "warn", "missing")
    assert budget["detail"] == "create it: vaultkeeper index"


def test_the_lint_figure_is_the_one_lint_gives(tmp_path: Path) -> None:
    vault = tmp_path / "theirs"
    for rel, text in {
        ".obsidian/app.json": "{}",
        "x/Plan.md": "# plan\n",
        "y/Plan.md": "# other plan\n",
        "z/Note.md": "See [[Plan]].\n",  # ambiguous: an error, also for lint
    }.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    linted = CliRunner().invoke(cli, ["--vault", str(vault), "lint"])
    assert linted.exit_code == 1 and "1 error(s)" in linted.stdout, linted.stdout
    _, signals = _signals(vault)
    assert signals["lint_errors"]["figure"] == 1  # was 0: link errors left out
    assert signals["lint_errors"]["verdict"] == "fail"


def _scan(vault: Path, now: dt.datetime) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VAULTKEEPER")}
    run_scan(vault, now=now, env=env, force=True, pid=os.getpid())


def test_a_vault_kept_by_its_hooks_alone_reads_ok_and_current(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = tmp_path / "memory"
    init_vault(vault)
    for day in range(3):  # the session-end hook's scans; nobody runs `lint`
        monkeypatch.setenv(config.ENV_TODAY, (NOW + dt.timedelta(days=day)).date().isoformat())
        _scan(vault, NOW + dt.timedelta(days=day))
    code, signals = _signals(vault)
    assert code == 0 and signals["overall"]["verdict"] == "ok", signals
    assert signals["lint_errors"]["figure"] == 0
    # a link broken since: the next day's scan lints again, and status names it
    (vault / config.PROJECTS_DIR / "api" / "memory").mkdir(parents=True)
    note = vault / config.PROJECTS_DIR / "api" / "memory" / "x.md"
    note.write_text(
        "---\nname: x\ndescription: d\ntype: memory\nstatus: active\nlabel: fact\n"
        "relations: {}\nsources: []\nprovenance: []\n---\n\n# x\n\n[[nowhere]]\n",
        encoding="utf-8",
    )
    later = NOW + dt.timedelta(days=4)
    monkeypatch.setenv(config.ENV_TODAY, later.date().isoformat())
    _scan(vault, later)
    code, signals = _signals(vault)
    assert signals["broken_links"]["figure"] == 1 and code == 1
    assert "see: vaultkeeper lint --select VK3" in str(signals["broken_links"]["detail"])


@pytest.mark.parametrize("columns", [60, 80, 100])
def test_the_table_fits_the_terminal(sample: Path, columns: int) -> None:
    _scan(sample, NOW)
    code, out = _status(sample, env={"COLUMNS": str(columns)})
    lines = out.splitlines()[1:]  # the first names the vault by its path
    assert lines and all(len(line) <= columns for line in lines), [
        line for line in lines if len(line) > columns
    ]
    for label in ("promote candidates waiting", "lint errors", "journal size"):
        assert any(label in line for line in lines), out
    assert lines[-1].startswith("overall: ")
