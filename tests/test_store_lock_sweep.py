"""The user's lock folder keeps only the locks in use (issue 36, item 12).

Every writer locks a file keyed by the vault's real path in ``/tmp/vaultkeeper-<uid>``
(store/fsio.py); that folder used to gain one empty file per vault
ever touched (466 seen). Now a writer, once done, removes every lock file nobody holds,
and never one that is held: mutual exclusion still holds while files come and go.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.conftest import REPO
from vaultkeeper import config
from vaultkeeper.store.fsio import outside_lock, sweep_locks, writer_lock


@pytest.fixture
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "run"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv(config.ENV_LOCK_ROOT, str(folder))
    return folder / f"vaultkeeper-{os.getuid()}"


def test_writing_to_many_vaults_leaves_no_lock_file_behind(tmp_path: Path, runtime: Path) -> None:
    for i in range(40):
        vault = tmp_path / f"v{i}"
        vault.mkdir()
        with writer_lock(vault):
            assert Path(str(outside_lock(vault))).is_file()  # taken while writing
    assert sorted(runtime.iterdir()) == []


def test_left_over_files_go_and_others_stay(tmp_path: Path, runtime: Path) -> None:
    runtime.mkdir(mode=0o700)
    for i in range(5):  # what an older vaultkeeper left: one per vault
        (runtime / f"{i:032x}.lock").write_bytes(b"")
    (runtime / "notes.txt").write_text("not a lock of ours")
    vault = tmp_path / "v"
    vault.mkdir()
    with writer_lock(vault):
        pass
    assert sorted(p.name for p in runtime.iterdir()) == ["notes.txt"]


def test_a_held_lock_is_never_removed(tmp_path: Path, runtime: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    holding, release, done = threading.Event(), threading.Event(), threading.Event()

    def hold_a() -> None:
        with writer_lock(a):
            holding.set()
            release.wait(60)
        done.set()

    thread = threading.Thread(target=hold_a)
    thread.start()
    assert holding.wait(60)
    with writer_lock(b):
        pass
    assert sweep_locks() == 0
    assert [p.name for p in runtime.iterdir()] == [Path(str(outside_lock(a))).name]
    release.set()
    thread.join(60)
    assert done.is_set()
    assert sorted(runtime.iterdir()) == []


_WORKER = """
import sys
from pathlib import Path
from vaultkeeper.store.fsio import writer_lock
vault, other, rounds = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
counter = vault / "counter.txt"
for _ in range(rounds):
    with writer_lock(vault):
        n = int(counter.read_text())
        counter.write_text(str(n + 1))  # a lost update if two writers overlap
    with writer_lock(other):  # another vault's lock: its release sweeps the folder
        pass
"""


def test_writers_still_exclude_each_other_while_the_folder_is_swept(
    tmp_path: Path, runtime: Path
) -> None:
    vault, other = tmp_path / "v", tmp_path / "w"
    vault.mkdir()
    other.mkdir()
    (vault / "counter.txt").write_text("0")
    rounds, workers = 60, 3
    env = {**os.environ, config.ENV_LOCK_ROOT: str(runtime.parent)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(vault), str(other), str(rounds)],
            cwd=REPO,
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for _ in range(workers)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
    assert (vault / "counter.txt").read_text() == str(rounds * workers)
    assert sorted(runtime.iterdir()) == []
