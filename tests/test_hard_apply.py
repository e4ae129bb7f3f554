"""Issue 14 items 2 and 8: prune and restore keep what a person wrote, and say what happened."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from click.testing import CliRunner

from tests.conftest import MakeVault
from vaultkeeper.apply.batch import apply_decision
from vaultkeeper.apply.decision import Decision
from vaultkeeper.cli import cli

NOW = dt.datetime(2026, 12, 1, 9, 30, tzinfo=dt.timezone.utc)
BETA = "### beta\nBeta body.\n\n**success count:** 0\n**last used:** 2025-01-01\n"
REGISTRY = "# Pattern registry\n\n" + BETA
MEMORY = "---\nname: m\ndescription: a lesson\ntype: memory\nlabel: inferred\n---\nbody\n"


def yes(plan: object) -> bool:
    return True


def invoke(vault: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--vault", str(vault), *args])
    return result.exit_code, result.output


def add_keywords(vault: Path, link: str, words: str) -> None:
    index = vault / "_index.md"
    lines = index.read_text().split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith(f"- [[{link}]]"))
    lines[at] += f" -- keywords: {words}"
    index.write_text("\n".join(lines))


def test_prune_then_restore_keeps_the_index_keywords(make_vault: MakeVault) -> None:
    vault = make_vault({"patterns/registry.md": REGISTRY, "projects/p/memory/m.md": MEMORY})
    assert invoke(vault, "index")[0] == 0
    add_keywords(vault, "patterns/registry#beta", "bisect, blame")
    add_keywords(vault, "projects/p/memory/m", "flaky ci")
    before = (vault / "_index.md").read_text()
    ids = []
    for target in ("beta", "projects/p/memory/m.md"):
        outcome = apply_decision(vault, Decision("prune", target), NOW, confirm=yes)
        assert outcome.outcome == "act", outcome.reason
        ids.append(str(outcome.id))
    assert "keywords" not in (vault / "_index.md").read_text().split("start -->")[1]
    for trash_id in ids:
        code, output = invoke(vault, "restore", trash_id)
        assert code == 0, output
    after = (vault / "_index.md").read_text()
    assert "- [[patterns/registry#beta]] - Beta body. -- keywords: bisect, blame" in after
    assert "- [[projects/p/memory/m]] - a lesson -- keywords: flaky ci" in after
    assert after == before
