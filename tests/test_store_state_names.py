"""Every name under state/ is one docs/architecture.md lists (issue 35: 29 names had
accumulated, most of them caches, each with its own loader, saver and bugs). A vault
driven through most features (an adopted auto memory, scans, uses, a new entry, a
promotion, a prune waiting for a person, the index, lint, status, the brief) may hold
only the documented names; a new cache file fails here until it is documented, or
better, becomes rows of the derived store."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.native_tree import build
from vaultkeeper import config
from vaultkeeper.cli import cli
from vaultkeeper.hosts.hooks import find_program, script_path
from vaultkeeper.store.fsio import OLD_DERIVED

DOC = Path(__file__).resolve().parent.parent / "docs" / "architecture.md"
RECALL = Path(__file__).resolve().parent.parent / "hooks" / config.RECALL_HOOK_SCRIPT


def documented() -> set[str]:
    """The names in the first column of the table under "What `state/` holds"."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## What `state/` holds", 1)[1].split("\n## ", 1)[0]
    names: set[str] = set()
    for line in section.splitlines():
        if line.startswith("| `"):
            names.update(re.findall(r"`([^`]+)`", line.split("|")[1]))
    return names


def test_the_table_lists_the_derived_store_and_the_spec_names() -> None:
    names = documented()
    assert {config.DB_FILE, config.STATE_FILE, config.LOCK_DIR, config.JOURNAL_FILE} <= names
    assert not {n for n in names if "cache" in n}  # the JSON caches are gone


def test_a_vault_in_use_holds_only_documented_names(
    sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("VAULTKEEPER_TODAY", "2026-06-01")
    build(home)  # an auto memory to adopt

    def vk(*args: str) -> None:
        done = CliRunner().invoke(cli, ["--vault", str(sample), *args])
        assert "Traceback" not in done.output and done.exit_code in (0, 1, 3), (args, done.output)

    for args in (
        ("native", "adopt", "--all"),
        ("scan", "--force"),
        ("use", "pin-test-clock"),
        ("new", "memory", "retry-once", "--project", "api", "--description", "Retry once"),
        ("apply", "promote", "pin-test-clock", "--evidence", "https://ci.example/run/41"),
        ("apply", "prune", "yaml-anchor-templates"),  # no person at a terminal: queued
        ("index",),
        ("index", "--check"),
        ("lint",),
        ("status",),
        ("scan", "--force"),
        ("report", "--brief"),
        ("report",),
    ):
        vk(*args)
    vk("lint", "--fix")
    vk("search", "clock")
    # the hooks as a host runs them: the session start's brief, the recall hook's lessons
    program = find_program(os.environ)
    assert program, "vaultkeeper is installed in this environment"
    prompt = {"session_id": "s1", "hook_event_name": "UserPromptSubmit", "prompt": "clock"}
    for script, args, payload in (
        (script_path("SessionStart"), [str(sample), program], {"session_id": "s1"}),
        (RECALL, [str(sample), "claude-code", program], prompt),
    ):
        done = subprocess.run(
            [str(script), *args],
            input=json.dumps(payload).encode(),
            capture_output=True,
            env=dict(os.environ),
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
    found = {p.name for p in (sample / config.STATE_DIR).iterdir()}
    assert {config.DB_FILE, config.QUEUE_FILE, config.MACHINE_FILE} <= found  # the run used them
    companions = {config.DB_FILE + "-wal", config.DB_FILE + "-shm"}  # SQLite's, counted with it
    assert found - companions <= documented(), sorted(found - companions - documented())
    # issue 35: at most eight names in a vault that used every feature; the writer lock is
    # a file in the user's own lock folder, not in state/
    assert len(found - companions) <= 8, sorted(found)
    assert config.WRITER_LOCK_FILE not in found


def test_the_table_lists_at_most_eight_names_besides_the_lock_fallback() -> None:
    """docs/architecture.md's table: eight names, and writer.lock only as the fallback for
    a user with no private lock folder."""
    names = documented() - {config.WRITER_LOCK_FILE}
    assert len(names) <= 8, sorted(names)
    text = DOC.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `writer.lock`"))
    assert "only where the user has no private lock folder" in row


def test_an_upgraded_vault_loses_the_old_derived_names_and_keeps_the_rest(
    sample: Path, tmp_path: Path
) -> None:
    """An older vaultkeeper's caches under state/ go at the first write (the writer lock's
    sweep); a ledger, an old log, a person's own file, a name in another folder, and a
    link, FIFO or folder of a swept name stay as they were (a link's target too)."""
    state = sample / config.STATE_DIR
    state.mkdir(exist_ok=True)
    outside = tmp_path / "outside.txt"
    outside.write_text("not the vault's\n")
    odd = {"recall-lookup.want": "fifo", "recall-lookup.sig": "dir", "brief-lessons.json": "link"}
    for name in OLD_DERIVED:
        kind = odd.get(name)
        if kind == "fifo":
            os.mkfifo(state / name)
        elif kind == "dir":
            (state / name).mkdir()
        elif kind == "link":
            (state / name).symlink_to(outside)
        else:
            (state / name).write_text('{"version": 3}\n')
    kept = {"hook.log": "old log line\n", "my-notes.txt": "mine\n", config.JOURNAL_FILE: ""}
    for name, text in kept.items():
        (state / name).write_text(text)
    (sample / "scan-cache.json").write_text("a note's attachment\n")  # not state/: kept
    runner = CliRunner()
    for args in (("scan", "--force"), ("use", "pin-test-clock")):
        done = runner.invoke(cli, ["--vault", str(sample), *args])
        assert done.exit_code in (0, 1), done.output
    found = {p.name for p in state.iterdir()}
    assert found & OLD_DERIVED == set(odd)  # the regular files went, the odd ones stayed
    companions = {config.DB_FILE + "-wal", config.DB_FILE + "-shm"}
    assert found - companions - set(odd) - {"hook.log", "my-notes.txt"} <= documented()
    assert (state / "hook.log").read_text() == "old log line\n"
    assert (state / "my-notes.txt").read_text() == "mine\n"
    assert outside.read_text() == "not the vault's\n"
    assert (state / "recall-lookup.sig").is_dir()
    assert (sample / "scan-cache.json").read_text() == "a note's attachment\n"


def test_a_persons_obsidian_vault_keeps_its_own_state_folder(tmp_path: Path) -> None:
    """A person's Obsidian vault (not laid out by vaultkeeper) may have a ``state/`` folder
    of its own: a command that writes there (index, lint --fix) takes the writer lock, and
    its sweep leaves every file of the person's folder, whatever its name."""
    vault = tmp_path / "notes"
    (vault / config.OBSIDIAN_DIR).mkdir(parents=True)
    (vault / "a.md").write_text("# a\n\nSee [[b]].\n")
    (vault / "b.md").write_text("# b\n")
    state = vault / config.STATE_DIR
    state.mkdir()
    mine = {"last-report.json": '{"quarter": 3}\n', "index-cache.json": '{"pages": 2}\n'}
    for name, text in mine.items():
        (state / name).write_text(text)
    done = CliRunner().invoke(cli, ["--vault", str(vault), "index"])
    assert done.exit_code == 0, done.output
    assert (vault / config.INDEX_FILE).is_file()  # the command did write
    for name, text in mine.items():
        assert (state / name).read_text() == text
