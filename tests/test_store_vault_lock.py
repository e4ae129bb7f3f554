"""The writer lock leaves no file in a vault that had no state/ folder: commands run on
someone else's vault write only what they were asked to (issue 26 item 10)."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import corpus
from vaultkeeper import config
from vaultkeeper.cli import cli
from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.mcp.tools import VaultTools
from vaultkeeper.store.fsio import writer_lock
from vaultkeeper.store.vault import outside_lock


def _tree(root: Path) -> dict[str, bytes | None]:
    """Every name under ``root`` (folders as None), with each file's bytes."""
    out: dict[str, bytes | None] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs:
            out[os.path.relpath(os.path.join(folder, name), root)] = None
        for name in files:
            path = os.path.join(folder, name)
            out[os.path.relpath(path, root)] = Path(path).read_bytes()
    return out


@pytest.fixture
def foreign(tmp_path: Path) -> Path:
    dest = tmp_path / "their-vault"
    shutil.copytree(corpus(), dest)
    return dest


@pytest.mark.corpora
@pytest.mark.parametrize(
    "args",
    [
        ["lint"],
        ["lint", "--fix"],
        ["status"],
        ["verify"],
        ["index", "--check"],
        ["report"],
        ["report", "--brief"],
        ["log"],
    ],
    ids=" ".join,
)
def test_a_command_on_a_foreign_vault_leaves_no_file_behind(
    foreign: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    monkeypatch.chdir(foreign)
    before = _tree(foreign)
    result = CliRunner().invoke(cli, args)
    assert "Traceback" not in result.output
    assert _tree(foreign) == before


@pytest.mark.corpora
def test_lint_fix_writes_the_files_it_fixes_and_nothing_else(foreign: Path) -> None:
    before = _tree(foreign)
    result = CliRunner().invoke(
        cli, ["--vault", str(foreign), "lint", "--fix", "--select", "VK101"]
    )
    assert "fixed " in result.stdout, result.output
    after = _tree(foreign)
    assert sorted(after) == sorted(before)  # no state/, no writer.lock, no temp file
    changed = [name for name in before if after[name] != before[name]]
    assert changed and all(name.endswith(".md") for name in changed)


@pytest.mark.corpora
def test_search_on_a_foreign_vault_leaves_no_file_behind(foreign: Path) -> None:
    before = _tree(foreign)
    now = dt.datetime(2026, 12, 1, tzinfo=dt.timezone.utc)
    assert VaultTools(foreign, lambda: now, "s").search("book")["count"] >= 1
    assert _tree(foreign) == before


def test_the_lock_lives_in_the_users_runtime_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    vault = tmp_path / "v"
    vault.mkdir()
    with writer_lock(vault):
        (lock,) = (runtime / "vaultkeeper").iterdir()
        assert lock.name.endswith(".lock") and str(lock) == outside_lock(vault)
    assert list(vault.iterdir()) == []
    assert (runtime / "vaultkeeper").stat().st_mode & 0o777 == 0o700


def test_a_folder_others_may_write_is_not_used_for_the_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = tmp_path / "run"
    (runtime / "vaultkeeper").mkdir(parents=True)
    (runtime / "vaultkeeper").chmod(0o777)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    assert outside_lock(tmp_path) is None
    vault = tmp_path / "v"
    vault.mkdir()
    with writer_lock(vault):  # the vault's own state/ then, as before
        assert (vault / config.STATE_DIR / config.WRITER_LOCK_FILE).exists()
    assert list((runtime / "vaultkeeper").iterdir()) == []


def test_a_writer_that_made_state_still_excludes_one_that_finds_it(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    failed: list[str] = []

    def other() -> None:
        try:
            with writer_lock(vault, timeout=0.2):
                failed.append("got the lock")
        except VaultkeeperError as exc:
            failed.append(str(exc))

    with writer_lock(vault):  # no state/ yet: the lock is outside the vault only
        (vault / config.STATE_DIR).mkdir()  # this writer's first log line makes state/
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert len(failed) == 1 and "another vaultkeeper command is writing" in failed[0]
