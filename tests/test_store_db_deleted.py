"""The derived store is a cache (vaultkeeper/store/db.py): deleting state/vaultkeeper.db
before any command loses nothing. The same sequence of commands and hand edits runs on
two copies of a vault, one keeping its database, one losing it before each command:
every command prints the same and every file ends the same."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_vaultkeeper, snapshot
from vaultkeeper import config

RETRY = "projects/api/memory/retry-once.md"

# (command, or a hand edit: ("edit", path, old, new))
SEQUENCE: list[tuple[str, ...]] = [
    ("scan", "--force"),
    ("report", "--brief"),
    ("use", "pin-test-clock"),
    ("new", "memory", "retry-once", "--project", "api", "--description", "Retry a call once"),
    ("index",),
    ("scan", "--force", "--json"),
    ("edit", RETRY, "Retry a call once", "Retry a flaky call once"),
    ("apply", "promote", "pin-test-clock", "--evidence", "https://ci.example/run/41"),
    ("report",),
    ("use", "bisect-before-reading-diffs"),
    ("index", "--check"),
    ("lint",),
    ("scan", "--force"),
    ("report", "--brief"),
    ("edit", "patterns/registry.md", "### grep-the-config-value", "### grep-the-config-key"),
    ("scan", "--force", "--json"),
    ("index",),
    ("report",),
]


def _db_files(vault: Path) -> list[Path]:
    return sorted((vault / config.STATE_DIR).glob(config.DB_FILE + "*"))


def _normal(text: str, vault: Path) -> str:
    text = text.replace(str(vault), "VAULT")
    text = re.sub(r"\b\d+ ms\b", "N ms", text)  # how long a scan took
    text = re.sub(r'"duration_ms": ?\d+', '"duration_ms": N', text)
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?", "TIME", text)
    text = re.sub(r'"(tx|id)": "[0-9a-f]+"', r'"\1": ID', text)  # a write's random id
    return re.sub(r"\([^()]* ago\)", "(AGO)", text)


def _files(vault: Path) -> dict[str, Any]:
    """Every file outside state/ by its bytes; state/'s files by name, the ledgers by
    their lines less their times (the database and its companions aside)."""
    out: dict[str, Any] = dict(snapshot(vault))
    for path in sorted((vault / config.STATE_DIR).iterdir()):
        if path.name.startswith(config.DB_FILE):
            continue
        if path.suffix == ".jsonl":
            out[f"state/{path.name}"] = _normal(path.read_text(), vault)
        else:
            out[f"state/{path.name}"] = path.is_file()
    return out


def _both(
    sample: Path, tmp_path: Path, sequence: list[tuple[str, ...]], drop: set[int]
) -> tuple[Path, Path]:
    """Run ``sequence`` on two copies of ``sample``: the first loses its database before
    the steps in ``drop``, the second before every command; assert each step prints the
    same, and every file ends the same."""
    kept = tmp_path / "kept"
    lost = tmp_path / "lost"
    shutil.copytree(sample, kept)
    shutil.copytree(sample, lost)
    for step, args in enumerate(sequence):
        outputs = []
        for vault in (kept, lost):
            if args[0] == "edit":
                path = vault / args[1]
                path.write_text(path.read_text().replace(args[2], args[3], 1))
                continue
            if args[0] == "append":
                with (vault / args[1]).open("a") as fh:
                    fh.write(args[2])
                continue
            if vault is lost or step in drop:
                for path in _db_files(vault):
                    path.unlink()
            done = run_vaultkeeper(vault, *args)
            assert "Traceback" not in done.stderr and "database" not in done.stderr, done.stderr
            outputs.append((done.returncode, _normal(done.stdout + done.stderr, vault)))
        if outputs:
            assert outputs[0] == outputs[1], (step, args)
    assert _files(kept) == _files(lost)
    return kept, lost


def test_deleting_the_database_before_each_command_changes_nothing(
    sample: Path, tmp_path: Path
) -> None:
    kept, _ = _both(sample, tmp_path, SEQUENCE, set())
    assert _db_files(kept) and (kept / config.STATE_DIR / config.DB_FILE).stat().st_size > 0


PATTERNS = ["pin-test-clock", "bisect-before-reading-diffs", "grep-the-config-value"]


def _random_sequence(rng: random.Random, lessons: list[str]) -> list[tuple[str, ...]]:
    """Commands and hand edits of notes and the registry, in a random order."""
    out: list[tuple[str, ...]] = [("scan", "--force")]
    for step in range(14):
        roll = rng.random()
        if roll < 0.15:
            out.append(("append", rng.choice(lessons), f"\nMore, edited by hand ({step}).\n"))
        elif roll < 0.22:
            count = rng.choice(["1", "2", "3", "4"])
            old = f"**success count:** {count}"
            out.append(("edit", "patterns/registry.md", old, f"**success count:** {count}0"))
        elif roll < 0.35:
            out.append(("use", rng.choice(PATTERNS)))
        elif roll < 0.45:
            description = f"Note number {step}"
            out.append(
                ("new", "memory", f"note-{step}", "--project", "api", "--description", description)
            )
        elif roll < 0.5:
            evidence = "https://ci.example/run/41"
            out.append(("apply", "promote", rng.choice(PATTERNS), "--evidence", evidence))
        else:
            out.append(
                rng.choice(
                    [
                        ("scan", "--force"),
                        ("scan", "--force", "--json"),
                        ("report", "--brief"),
                        ("report",),
                        ("index",),
                        ("index", "--check"),
                        ("lint",),
                    ]
                )
            )
    out.append(("scan", "--force", "--json"))
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_random_commands_and_edits_with_the_database_deleted_at_random_points(
    sample: Path, tmp_path: Path, seed: int
) -> None:
    """The property of issue 35: a run that loses its database at random points and a
    run that loses it before every command print the same and leave the same files."""
    rng = random.Random(seed)
    lessons = sorted(
        p.relative_to(sample).as_posix() for p in sample.glob("projects/*/memory/*.md")
    )
    sequence = _random_sequence(rng, lessons)
    drop = {n for n in range(len(sequence)) if rng.random() < 0.3}
    _both(sample, tmp_path, sequence, drop)


def _count(registry: Path) -> int:
    """pin-test-clock's success count."""
    block = registry.read_text().split("### pin-test-clock\n", 1)[1].split("\n### ", 1)[0]
    found = re.search(r"\*\*success count:\*\* (\d+)", block)
    assert found is not None
    return int(found.group(1))


def test_twenty_processes_at_once_never_see_a_locked_database(sample: Path) -> None:
    """Scans (fresh ones too), uses, index runs and briefs started together on one
    vault: none says "database is locked" or shows a traceback, and no use is lost."""
    assert run_vaultkeeper(sample, "scan", "--force").returncode == 0
    command = [sys.executable, "-m", "vaultkeeper", "--vault", str(sample)]
    env = {**os.environ, "VAULTKEEPER_TODAY": "2026-06-01"}
    kinds = [
        ["scan", "--force"],
        ["use", "pin-test-clock"],
        ["report", "--brief"],
        ["index"],
        ["scan", "--force", "--fresh"],
    ]
    procs = [
        subprocess.Popen(
            command + kinds[n % len(kinds)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for n in range(20)
    ]
    uses = 0
    for n, proc in enumerate(procs):
        out, err = proc.communicate(timeout=600)
        assert "locked" not in out + err and "Traceback" not in out + err, (out, err)
        assert proc.returncode == 0, (kinds[n % len(kinds)], out, err)
        uses += kinds[n % len(kinds)][0] == "use"
    original = Path(__file__).parent.parent / "sample_vault" / "patterns" / "registry.md"
    assert _count(sample / "patterns" / "registry.md") == _count(original) + uses
    with sqlite3.connect(sample / config.STATE_DIR / config.DB_FILE) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    log = [json.loads(line) for line in (sample / "state" / config.USES_LOG_FILE).open()]
    assert len([e for e in log if e.get("kind") == "cite"]) == uses
