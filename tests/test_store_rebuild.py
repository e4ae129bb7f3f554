"""Derived state is only ever a shortcut: deleting it at any moment changes nothing.

Random sequences of commands (``new``, ``use``, ``ingest``, ``scan``, ``apply ...``,
``index``, ``lint --fix``) interleaved with hand edits of notes and registry files run
on two copies of one vault. Copy A keeps its derived state, except that it is deleted
at random points; copy B has it deleted before every command. Every command's output
and exit code, and at the end every file of the vault and the ledgers, must be the same.

What is derived is everything under ``state/`` but the files a person or git reads as
records (the spec's state file, the ledgers, the logs and this machine's settings):
``TRUTH`` below. Anything else there must be rebuildable from the vault's files.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import SAMPLE_VAULT
from tests.transcript_fixtures import claude, text
from vaultkeeper.cli import cli

TODAY = "2026-12-01"
TRUTH = frozenset(
    {
        "self-maintain.json",
        "self-maintain.lock",
        "journal.jsonl",
        "queue.jsonl",
        "uses.jsonl",
        "hooks.log",
        "writer.lock",
        "machine.json",
    }
)
PATTERNS = ("bisect-before-reading-diffs", "pin-test-clock", "grep-the-config-value")
LESSONS = (
    "projects/api/memory/use-utc-everywhere.md",
    "projects/api/memory/paginate-with-cursors.md",
    "projects/web/memory/vite-build.md",
    "projects/web/memory/css-grid-over-floats.md",
)
EVIDENCE = "_index.md:1"

# What differs between two runs of one command a moment apart: clock times and ids.
_TIMES = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)?")
_IDS = re.compile(r"\b\d{8}-\d{6}(-[0-9a-f]{6})?\b")
_AGO = re.compile(r"\b\d+(\.\d+)? ?(ms|s|seconds?|minutes?|min) ago\b")
_TX = re.compile(r'"(tx|id)": "[^"]*"')  # a transaction's random id in a ledger line
_TOOK = re.compile(r'"(duration_ms|age_seconds)": \d+')  # how long a scan took, how long ago


def _plain(text_: str, vault: Path) -> str:
    out = text_.replace(str(vault), "VAULT")
    out = _TIMES.sub("TIME", out)
    out = _IDS.sub("ID", out)
    out = _TOOK.sub(r'"\1": N', out)
    return _TX.sub(r'"\1": "TX"', _AGO.sub("AGO", out))


def forget(vault: Path) -> None:
    """Delete every derived file under state/ (what a person may delete at any time)."""
    state = vault / "state"
    if not state.is_dir():
        return
    for path in state.iterdir():
        if path.name in TRUTH:
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()


def transcript(folder: Path, n: int, name: str) -> Path:
    path = folder / f"session-{n}.jsonl"
    lines = [
        claude("user", "fix the flaky test", session=f"s-{n}"),
        claude(
            "assistant",
            [text(f"Using [[patterns/registry#{name}]] as before.")],
            session=f"s-{n}",
        ),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def hand_edit(vault: Path, kind: str, i: int) -> None:
    """An edit a person makes in Obsidian or an editor, never through vaultkeeper."""
    if kind == "body":
        note = vault / LESSONS[i % len(LESSONS)]
        note.write_text(note.read_text("utf-8") + f"\nA line added by hand ({i}).\n", "utf-8")
    elif kind == "describe":
        note = vault / LESSONS[i % len(LESSONS)]
        body = note.read_text("utf-8")
        note.write_text(
            re.sub(r"(?m)^description: .*$", f"description: Edited by hand {i}", body, count=1),
            "utf-8",
        )
    elif kind == "archive":
        note = vault / LESSONS[i % len(LESSONS)]
        body = note.read_text("utf-8")
        note.write_text(re.sub(r"(?m)^status: \w+$", "status: archived", body, count=1), "utf-8")
    elif kind == "counter":
        registry = vault / "patterns" / "registry.md"
        body = registry.read_text("utf-8")
        registry.write_text(
            body.replace("**success count:** 1\n", f"**success count:** {i % 7 + 1}\n", 1),
            "utf-8",
        )


Step = tuple[str, int]
STEPS = st.tuples(
    st.sampled_from(
        (
            "new",
            "use",
            "ingest",
            "scan",
            "promote",
            "supersede",
            "revalidate",
            "prune",
            "index",
            "lint-fix",
            "edit-body",
            "edit-describe",
            "edit-archive",
            "edit-counter",
        )
    ),
    st.integers(min_value=0, max_value=50),
)


def argv(step: Step, work: Path) -> list[str] | None:
    kind, i = step
    name = PATTERNS[i % len(PATTERNS)]
    if kind == "new":
        return ["new", "memory", f"lesson-{i}", "-p", "api", "-d", f"Lesson number {i}"]
    if kind == "use":
        return ["use", name]
    if kind == "ingest":
        return ["ingest", str(transcript(work, i, name))]
    if kind == "scan":
        return ["scan", "--force"]
    if kind == "promote":
        return ["apply", "promote", name, "--evidence", EVIDENCE]
    if kind == "supersede":
        old, new = LESSONS[i % 2], LESSONS[2 + i % 2]
        return ["apply", "supersede", old, "--by", new, "--evidence", EVIDENCE]
    if kind == "revalidate":
        return [
            "apply",
            "revalidate",
            "projects/api/memory/flaky-ci-retries.md",
            "--pass",
            "--evidence",
            EVIDENCE,
        ]
    if kind == "prune":
        return ["apply", "prune", "yaml-anchor-templates"]  # no terminal: queued, exit 3
    if kind == "index":
        return ["index"]
    if kind == "lint-fix":
        return ["lint", "--fix"]
    return None


def snapshot(vault: Path) -> dict[str, str]:
    """Every file of the vault, and the ledgers, with clock times and ids made plain."""
    files: dict[str, str] = {}
    for path in sorted(vault.rglob("*")):
        rel = path.relative_to(vault).as_posix()
        if not path.is_file() or (rel.startswith("state/") and path.name not in TRUTH):
            continue
        if path.name.endswith(".lock") or path.name in (
            "self-maintain.json",
            "hooks.log",
            "machine.json",
        ):
            continue  # the throttle's own clock and pid, when each transcript was read
        data = path.read_bytes().decode("utf-8", "replace")
        files[_IDS.sub("ID", rel)] = _plain(data, vault)
    return files


def run(runner: CliRunner, vault: Path, args: list[str]) -> tuple[int, str]:
    result = runner.invoke(
        cli,
        ["--vault", str(vault), *args],
        env={"VAULTKEEPER_TODAY": TODAY},
        catch_exceptions=False,
    )
    return result.exit_code, _plain(result.output, vault)


@settings(
    max_examples=25,
    derandomize=True,  # the same sequences on every run: CI fails only on a change
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=st.lists(STEPS, min_size=3, max_size=12), forget_at=st.sets(st.integers(0, 12)))
def test_deleting_derived_state_changes_nothing(
    tmp_path_factory: pytest.TempPathFactory, steps: list[Step], forget_at: set[int]
) -> None:
    root = tmp_path_factory.mktemp("rebuild")
    work = root / "transcripts"
    work.mkdir()
    a, b = root / "a" / "vault", root / "b" / "vault"
    for copy in (a, b):
        shutil.copytree(SAMPLE_VAULT, copy, ignore=shutil.ignore_patterns("state", ".trash"))
    runner = CliRunner()
    for n, step in enumerate(steps):
        args = argv(step, work)
        if args is None:
            for copy in (a, b):
                hand_edit(copy, step[0].removeprefix("edit-"), step[1])
            continue
        if n in forget_at:
            forget(a)
        forget(b)
        got_a, got_b = run(runner, a, args), run(runner, b, args)
        assert got_a == got_b, f"step {n} {args}: kept {got_a!r} != rebuilt {got_b!r}"
    forget(a)
    forget(b)
    assert run(runner, a, ["report", "--json"]) == run(runner, b, ["report", "--json"])
    shot_a, shot_b = snapshot(a), snapshot(b)
    assert shot_a.keys() == shot_b.keys()
    for rel in shot_a:
        assert shot_a[rel] == shot_b[rel], rel


def test_forget_keeps_the_records(tmp_path: Path) -> None:
    """The test's own rule: the ledgers stay, everything else under state/ goes."""
    state = tmp_path / "state"
    (state / "sub").mkdir(parents=True)
    for name in (*TRUTH, "vaultkeeper.db", "other.json"):
        (state / name).write_text(json.dumps(name))
    forget(tmp_path)
    assert sorted(p.name for p in state.iterdir()) == sorted(TRUTH)
