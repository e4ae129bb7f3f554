"""Prune's ``moved path:N`` and restore's ``at line N`` name the same line: the ### heading."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

import pytest

from vaultkeeper.apply import prune
from vaultkeeper.apply.batch import apply_decision
from vaultkeeper.apply.decision import Decision

NOW = dt.datetime(2026, 12, 1, 9, 30, tzinfo=dt.timezone.utc)
HEAD = "# Pattern registry\n\nIntro.\n\n"
ALPHA = "### alpha\nAlpha body.\n\n**success count:** 3\n**last used:** 2026-10-01\n"
BETA = "### beta\nBeta body.\n\n**success count:** 0\n**last used:** 2025-01-01\n"
REGISTRY = HEAD + ALPHA + "\n\n" + BETA  # beta last: its blank lines above go with it


def heading(path: Path, name: str) -> int:
    return path.read_text().split("\n").index(f"### {name}") + 1


@pytest.mark.parametrize("name", ["alpha", "beta"])
@pytest.mark.parametrize("meanwhile", ["nothing", "a line added above", "neighbours changed"])
def test_restore_reports_the_line_prune_named(make_vault: Any, name: str, meanwhile: str) -> None:
    vault: Path = make_vault({"patterns/registry.md": REGISTRY})
    registry = vault / "patterns/registry.md"
    line = heading(registry, name)
    done = prune.carry_out(vault, Decision("prune", name), NOW, None, "a person answered yes")
    assert f"moved patterns/registry.md:{line} to" in done.reason
    text = registry.read_text()
    if meanwhile == "a line added above":
        registry.write_text(text.replace("Intro.\n", "Intro.\nMore intro.\n"))
        line += 1
    elif meanwhile == "neighbours changed":
        registry.write_text(
            text.replace("Intro.", "Changed.").replace("**last used:**", "**last used:** ")
        )
    back = apply_decision(vault, Decision("restore", done.id or ""), NOW)
    assert back.outcome == "act", back.reason
    said = re.search(r"(?:at line|line) (\d+)", back.reason)
    assert said is not None, back.reason
    assert int(said.group(1)) == heading(registry, name)
    if meanwhile != "neighbours changed":
        assert int(said.group(1)) == line
