"""Prune and restore keep what a person wrote, and say what happened."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import MakeVault
from vaultkeeper import config
from vaultkeeper.apply import gate
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


def test_a_pruned_dot_file_restores(make_vault: MakeVault) -> None:
    path = "projects/p/memory/.hidden.md"
    vault = make_vault({path: MEMORY})
    outcome = apply_decision(vault, Decision("prune", path), NOW, confirm=yes)
    assert outcome.outcome == "act", outcome.reason
    assert not (vault / path).exists()
    code, output = invoke(vault, "restore", str(outcome.id))
    assert code == 0, output
    assert f"act: restore {path}: restored {path}" in output
    assert (vault / path).read_text() == MEMORY


def test_a_block_named_without_ascii_letters_prunes_and_restores(make_vault: MakeVault) -> None:
    snow = "### \u2603\nSnow.\n\n**success count:** 0\n**last used:** 2025-01-01\n"
    vault = make_vault({"patterns/registry.md": REGISTRY + "\n" + snow})
    before = (vault / "patterns/registry.md").read_bytes()
    outcome = apply_decision(vault, Decision("prune", "\u2603"), NOW, confirm=yes)
    assert outcome.outcome == "act", outcome.reason
    assert "\u2603" not in (vault / "patterns/registry.md").read_text()
    code, output = invoke(vault, "restore", str(outcome.id))
    assert code == 0, output
    assert (vault / "patterns/registry.md").read_bytes() == before


def test_a_restore_that_wrote_nothing_says_nothing_changed(make_vault: MakeVault) -> None:
    path = "projects/p/memory/m.md"
    vault = make_vault({path: MEMORY})
    outcome = apply_decision(vault, Decision("prune", path), NOW, confirm=yes)
    assert outcome.outcome == "act", outcome.reason
    (vault / "projects/p/memory").rmdir()
    (vault / "projects/p/memory").write_text("a file where the folder was\n")
    result = CliRunner().invoke(cli, ["--vault", str(vault), "restore", str(outcome.id)])
    assert result.exit_code == 1
    [line] = result.stderr.splitlines()
    assert line.endswith("(deferred; nothing changed)"), line
    assert "part-way" not in line
    assert (vault / ".trash" / str(outcome.id) / "m.md").read_text() == MEMORY


def test_temp_files_of_a_killed_writer_are_swept_by_the_next_writer(
    make_vault: MakeVault,
) -> None:
    vault = make_vault({"patterns/registry.md": REGISTRY})
    old = vault / "._index.md.k1ll3d.vk-tmp"
    old_registry = vault / "patterns/.registry.md.k1ll3d.vk-tmp"
    fresh = vault / "._index.md.4l1ve.vk-tmp"
    for path in (old, old_registry, fresh):
        path.write_text("half a write")
    stale = time.time() - config.STALE_RUN_MS / 1000 - 60
    for path in (old, old_registry):
        os.utime(path, (stale, stale))
    code, output = invoke(vault, "use", "beta")
    assert code == 0, output
    assert not old.exists() and not old_registry.exists()
    assert fresh.exists()  # maybe a write in progress: too young to judge


def test_evidence_is_read_before_the_writer_lock(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = "---\nname: h\ndescription: d\ntype: memory\nstatus: held_out\nlabel: inferred\n"
    held += 'holdout_until: "2026-01-01"\n---\nbody\n'
    vault = make_vault(
        {"patterns/registry.md": REGISTRY, "projects/p/memory/h.md": held, "ev.md": "a\nb\n"}
    )
    seen: list[int] = []
    real = gate._count_lines

    def slow_evidence(path: Path, *rest: int) -> object:
        # another writer, while the evidence is read: it must not wait for this one
        other = subprocess.run(
            [sys.executable, "-m", "vaultkeeper", "--vault", str(vault), "use", "beta"],
            capture_output=True,
            timeout=300,
            check=False,
            env={**os.environ, "VAULTKEEPER_TODAY": "2026-12-01"},
        )
        seen.append(other.returncode)
        return real(path, *rest)

    monkeypatch.setattr(gate, "_count_lines", slow_evidence)
    decision = Decision("revalidate", "projects/p/memory/h.md", "ev.md:2", "pass")
    outcome = apply_decision(vault, decision, NOW)
    assert outcome.outcome == "act", outcome.reason
    assert seen == [0]


def test_a_fifo_as_evidence_is_refused_at_once(make_vault: MakeVault) -> None:
    held = "---\nname: h\ndescription: d\ntype: memory\nstatus: held_out\nlabel: inferred\n"
    held += 'holdout_until: "2026-01-01"\n---\nbody\n'
    vault = make_vault({"projects/p/memory/h.md": held})
    os.mkfifo(vault / "pipe.md")
    run = subprocess.run(
        [sys.executable, "-m", "vaultkeeper", "--vault", str(vault), "apply", "revalidate",
         "projects/p/memory/h.md", "--pass", "--evidence", f"{vault / 'pipe.md'}:1"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert run.returncode == 1
    assert "is not an existing file" in run.stderr
