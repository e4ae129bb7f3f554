"""Atomic writes and the store-wide writer lock."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import MakeVault
from vaultkeeper import config
from vaultkeeper.cli import cli
from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.store import fsio
from vaultkeeper.store.fsio import append_line, atomic_write, writer_lock


def test_atomic_write_creates_and_replaces_without_leftovers(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "dir" / "note.md"
    atomic_write(target, "first\n")
    assert target.read_bytes() == b"first\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    atomic_write(target, b"second\r\n")
    assert target.read_bytes() == b"second\r\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["note.md"]


def test_atomic_write_keeps_the_mode_of_an_existing_file(tmp_path: Path) -> None:
    target = tmp_path / "script.md"
    target.write_text("x")
    target.chmod(0o751)
    atomic_write(target, "y")
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    target.chmod(0o600)
    atomic_write(target, "z")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert target.read_text() == "z"


def test_a_failed_write_leaves_the_old_file_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "note.md"
    target.write_text("old")

    def boom(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fsio.os, "replace", boom)
    with pytest.raises(OSError):
        atomic_write(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["note.md"]


def test_atomic_write_handles_a_name_at_the_length_limit(tmp_path: Path) -> None:
    target = tmp_path / ("n" * 250 + ".md")
    atomic_write(target, "x")
    assert target.read_text() == "x"
    assert len(list(tmp_path.iterdir())) == 1


def test_append_line_appends_one_line(tmp_path: Path) -> None:
    journal = tmp_path / "state" / "journal.jsonl"
    append_line(journal, '{"a": 1}')
    append_line(journal, '{"b": 2}\n')
    assert journal.read_text() == '{"a": 1}\n{"b": 2}\n'


def test_writer_lock_is_reentrant_in_one_thread(tmp_path: Path) -> None:
    with writer_lock(tmp_path, timeout=1), writer_lock(tmp_path, timeout=1):
        atomic_write(tmp_path / "x", "nested")
    assert not (tmp_path / config.STATE_DIR).exists()  # no state/: the lock lives elsewhere
    # released fully: another thread can take it now
    got: list[bool] = []

    def take() -> None:
        with writer_lock(tmp_path, timeout=1):
            got.append(True)

    t = threading.Thread(target=take)
    t.start()
    t.join()
    assert got == [True]


def test_writer_lock_excludes_another_thread(tmp_path: Path) -> None:
    errors: list[str] = []
    with writer_lock(tmp_path):

        def other() -> None:
            try:
                with writer_lock(tmp_path, timeout=0.2):
                    errors.append("entered while held")
            except VaultkeeperError as exc:
                errors.append(str(exc))

        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert len(errors) == 1
    assert errors[0].endswith("another vaultkeeper command is writing; try again")


WORKER = """
import sys
from pathlib import Path
from vaultkeeper.store.fsio import atomic_write, writer_lock
vault = Path(sys.argv[1])
for _ in range(int(sys.argv[2])):
    with writer_lock(vault):
        counter = vault / "counter.txt"
        n = int(counter.read_text()) if counter.exists() else 0
        atomic_write(counter, str(n + 1))
"""


def test_writer_lock_serialises_processes(tmp_path: Path) -> None:
    # Read-modify-write from several processes at once: without the lock, updates
    # would be lost and the count would come out short.
    procs, rounds = 4, 40
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    children = [
        subprocess.Popen([sys.executable, "-c", WORKER, str(tmp_path), str(rounds)], env=env)
        for _ in range(procs)
    ]
    for child in children:
        assert child.wait(timeout=60) == 0
    assert int((tmp_path / "counter.txt").read_text()) == procs * rounds
    leftovers = [p.name for p in tmp_path.iterdir() if p.name not in ("counter.txt", "state")]
    assert leftovers == []


def test_writer_lock_names_a_state_file_that_is_not_a_folder(tmp_path: Path) -> None:
    (tmp_path / "state").write_text("x\n")  # was "state: File exists"
    lock = writer_lock(tmp_path)
    with pytest.raises(VaultkeeperError, match="state: exists and is not a folder"):
        lock.__enter__()
    assert (tmp_path / "state").read_text() == "x\n"


def test_a_failed_replace_names_the_file_not_the_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "registry.md"
    target.write_text("old")

    def refused(src: str, dst: str) -> None:  # an immutable file (chattr +i), even for root
        raise PermissionError(1, "Operation not permitted", src)

    monkeypatch.setattr(fsio.os, "replace", refused)
    with pytest.raises(PermissionError) as caught:
        atomic_write(target, "new")
    assert caught.value.filename == str(target)  # was .registry.md.XXXX.vk-tmp
    assert [p.name for p in tmp_path.iterdir()] == ["registry.md"]


def test_a_taken_temp_name_is_never_written_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The temp file is always a new one: a name already there (a stray file, or a
    symlink planted to redirect the write) is left alone and another name drawn."""
    target = tmp_path / "note.md"
    outside = tmp_path / "outside.txt"
    outside.write_text("keep\n")
    draws = iter([b"\x00" * 6, b"\x00" * 6, b"\x01" * 6])
    monkeypatch.setattr(os, "urandom", lambda n: next(draws))
    (tmp_path / f".note.md.{'00' * 6}.vk-tmp").symlink_to(outside)
    atomic_write(target, "new\n")
    assert target.read_text() == "new\n" and outside.read_text() == "keep\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        f".note.md.{'00' * 6}.vk-tmp",
        "note.md",
        "outside.txt",
    ]


@pytest.mark.parametrize("log", ["journal.jsonl", "uses.jsonl", "queue.jsonl"])
def test_a_log_symlinked_out_of_the_vault_is_refused_in_one_line(
    make_vault: MakeVault, tmp_path: Path, log: str
) -> None:
    # Issue 21 item 3: the logs travel through git; a symlink committed there must not
    # make the next append write to a file of its choosing.

    vault = make_vault({"patterns/registry.md": "### a\n\nBody.\n\n**success count:** 1\n"})
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("theirs\n")
    state = vault / "state"
    state.mkdir(exist_ok=True)
    (state / log).symlink_to(outside)
    args = ["use", "a"] if log == "uses.jsonl" else ["apply", "prune", "a"]  # queued, journaled
    result = CliRunner().invoke(cli, ["--vault", str(vault), *args])
    assert outside.read_text() == "theirs\n"
    assert result.exit_code == 1, result.output
    assert f"{log}: a symlink; refused" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_append_line_refuses_a_folder_that_leads_out_of_the_vault(tmp_path: Path) -> None:
    from vaultkeeper.errors import UnsafePathError
    from vaultkeeper.store.fsio import append_line

    vault, outside = tmp_path / "vault", tmp_path / "outside"
    vault.mkdir()
    outside.mkdir()
    (vault / "logs").symlink_to(outside)
    with pytest.raises(UnsafePathError, match="outside the vault"):
        append_line(vault / "logs" / "journal.jsonl", "{}", inside=vault)
    assert list(outside.iterdir()) == []


SWEPT_BETA = "### beta\nBeta body.\n\n**success count:** 0\n**last used:** 2025-01-01\n"


SWEPT_REGISTRY = "# Pattern registry\n\n" + SWEPT_BETA


def test_temp_files_of_a_killed_writer_are_swept_by_the_next_writer(
    make_vault: MakeVault,
) -> None:
    vault = make_vault({"patterns/registry.md": SWEPT_REGISTRY})
    old = vault / "._index.md.k1ll3d.vk-tmp"
    old_registry = vault / "patterns/.registry.md.k1ll3d.vk-tmp"
    (vault / "state").mkdir(exist_ok=True)
    old_state = vault / "state/.index-stamp.json.k1ll3d.vk-tmp"  # an apply's, killed
    fresh = vault / "._index.md.4l1ve.vk-tmp"
    for path in (old, old_registry, old_state, fresh):
        path.write_text("half a write")
    stale = time.time() - config.STALE_RUN_MS / 1000 - 60
    for path in (old, old_registry, old_state):
        os.utime(path, (stale, stale))
    result = CliRunner().invoke(cli, ["--vault", str(vault), "use", "beta"])
    assert result.exit_code == 0, result.output
    assert not old.exists() and not old_registry.exists() and not old_state.exists()
    assert fresh.exists()  # maybe a write in progress: too young to judge


def test_the_sweep_removes_nothing_through_a_patterns_folder_linked_out_of_the_vault(
    make_vault: MakeVault, tmp_path: Path
) -> None:
    """patterns/ as a symlink to a folder outside the vault is not read (a warning): the
    writer's sweep of killed writers' temp files must not list it either, let alone
    remove an old ``.*.vk-tmp`` file there."""
    vault = make_vault({"_index.md": "# Index\n"})
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    theirs = outside / ".notes.md.k1ll3d.vk-tmp"
    theirs.write_text("someone else's file\n")
    stale = time.time() - config.STALE_RUN_MS / 1000 - 60
    os.utime(theirs, (stale, stale))
    if (vault / "patterns").exists():
        shutil.rmtree(vault / "patterns")
    (vault / "patterns").symlink_to(outside)
    result = CliRunner().invoke(cli, ["--vault", str(vault), "index"])
    assert result.exit_code == 0, result.output
    assert theirs.read_text() == "someone else's file\n"
