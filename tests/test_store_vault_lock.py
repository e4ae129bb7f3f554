"""The writer lock leaves no file in a vault that had no state/ folder: commands run on
someone else's vault write only what they were asked to (issue 26 item 10); and none in
state/ either: it lives in the user's own lock folder, which every process of the user
agrees on whatever its environment (issue 35)."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import REPO, corpus
from tests.native_tree import build
from vaultkeeper import config
from vaultkeeper.cli import cli
from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.mcp.tools import VaultTools
from vaultkeeper.store.fsio import outside_lock, writer_lock


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


def test_the_lock_lives_in_the_users_own_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setenv(config.ENV_LOCK_ROOT, str(root))
    vault = tmp_path / "v"
    vault.mkdir()
    folder = root / f"vaultkeeper-{os.getuid()}"
    with writer_lock(vault):
        (lock,) = folder.iterdir()
        assert lock.name.endswith(".lock") and str(lock) == outside_lock(vault)
    assert list(vault.iterdir()) == []
    assert folder.stat().st_mode & 0o777 == 0o700


def test_a_folder_others_may_write_is_not_used_for_the_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "tmp"
    folder = root / f"vaultkeeper-{os.getuid()}"
    folder.mkdir(parents=True)
    folder.chmod(0o777)
    monkeypatch.setenv(config.ENV_LOCK_ROOT, str(root))
    assert outside_lock(tmp_path) is None
    vault = tmp_path / "v"
    vault.mkdir()
    with writer_lock(vault):  # the vault's own state/writer.lock then, the fallback
        assert (vault / config.STATE_DIR / config.WRITER_LOCK_FILE).exists()
    assert list(folder.iterdir()) == []


_HOLDER = """
import sys
from pathlib import Path
from vaultkeeper.store.fsio import writer_lock
with writer_lock(Path(sys.argv[1])):
    print("held", flush=True)
    sys.stdin.readline()
"""

_TRY = """
import sys
from pathlib import Path
from vaultkeeper.errors import LockBusy
from vaultkeeper.store.fsio import writer_lock
try:
    with writer_lock(Path(sys.argv[1]), timeout=0.2):
        print("got it")
except LockBusy as exc:
    print(exc)
"""


def _second_waits_for_first(vault: Path, first: dict[str, str], second: dict[str, str]) -> None:
    """A writer in ``first``'s environment holds the lock: one in ``second``'s is refused
    (its timeout passes), then gets it once the first lets go; state/ holds no lock file."""
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(vault)],
        cwd=REPO, env=first, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert holder.stdin is not None and holder.stdout is not None
    try:
        assert holder.stdout.readline() == "held\n"
        busy = subprocess.run(
            [sys.executable, "-c", _TRY, str(vault)],
            cwd=REPO, env=second, capture_output=True, text=True, check=True,
        )  # fmt: skip
        assert "another vaultkeeper command is writing" in busy.stdout, busy.stdout
    finally:
        holder.stdin.close()
        holder.wait(timeout=120)
    free = subprocess.run(
        [sys.executable, "-c", _TRY, str(vault)],
        cwd=REPO, env=second, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert free.stdout == "got it\n"
    assert os.listdir(vault / config.STATE_DIR) == []  # no writer.lock in state/


def test_writers_with_different_environments_exclude_each_other(tmp_path: Path) -> None:
    """A cron job (no $XDG_RUNTIME_DIR, $TMPDIR unset) and a session (both set, elsewhere)
    write to one vault that has state/: one lock, so the second waits for the first."""
    vault = tmp_path / "v"
    (vault / config.STATE_DIR).mkdir(parents=True)
    base = {k: v for k, v in os.environ.items() if k not in ("XDG_RUNTIME_DIR", "TMPDIR")}
    session = {**base, "XDG_RUNTIME_DIR": str(tmp_path / "run"), "TMPDIR": str(tmp_path / "t")}
    (tmp_path / "run").mkdir(mode=0o700)
    (tmp_path / "t").mkdir()
    _second_waits_for_first(vault, base, session)


def test_writers_that_see_different_lock_folders_still_exclude_each_other(
    tmp_path: Path,
) -> None:
    """A service with a private /tmp, another user's process, an older vaultkeeper: each
    takes another lock file (here: another VAULTKEEPER_LOCK_ROOT), but the vault's state/
    folder is theirs in common and excludes them (review: 10 + 10 uses counted 27 of 31)."""
    vault = tmp_path / "v"
    (vault / config.STATE_DIR).mkdir(parents=True)
    envs = []
    for root in (tmp_path / "root-a", tmp_path / "root-b"):
        root.mkdir()
        envs.append({**os.environ, config.ENV_LOCK_ROOT: str(root)})
    _second_waits_for_first(vault, envs[0], envs[1])


def test_a_vault_that_used_every_feature_has_no_writer_lock_in_state(
    sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv(config.ENV_TODAY, "2026-06-01")
    build(tmp_path / "home")  # an auto memory to adopt
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(
        '{"type":"assistant","message":{"content":[{"type":"text",'
        '"text":"Used [[pin-test-clock]] here."}]}}\n'
    )
    for args in (
        ("native", "adopt", "--all"),
        ("scan", "--force"),
        ("use", "pin-test-clock"),
        ("ingest", str(transcript)),
        ("new", "memory", "retry-once", "--project", "api", "--description", "Retry once"),
        ("apply", "promote", "pin-test-clock", "--evidence", "https://ci.example/run/41"),
        ("apply", "prune", "yaml-anchor-templates"),
        ("index",),
        ("lint", "--fix"),
        ("scan", "--force"),
    ):
        done = CliRunner().invoke(cli, ["--vault", str(sample), *args])
        assert "Traceback" not in done.output and done.exit_code in (0, 1, 3), (args, done.output)
    assert (sample / config.STATE_DIR / config.JOURNAL_FILE).is_file()  # the writes happened
    assert not (sample / config.STATE_DIR / config.WRITER_LOCK_FILE).exists()


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


def test_a_busy_state_folder_refuses_in_one_line_and_leaves_the_lock_usable(
    tmp_path: Path,
) -> None:
    """The state/ folder held by a writer this process cannot see (another lock root):
    LockBusy within the timeout, the lock file let go, and the next hold works."""
    import fcntl

    from vaultkeeper.errors import LockBusy
    from vaultkeeper.store import fsio
    from vaultkeeper.store.fsio import writer_lock

    vault = tmp_path / "v"
    (vault / config.STATE_DIR).mkdir(parents=True)
    other = os.open(vault / config.STATE_DIR, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(other, fcntl.LOCK_EX)
        busy = pytest.raises(LockBusy, match="another vaultkeeper command is writing")
        with busy, writer_lock(vault, timeout=0.05):
            pass
    finally:
        os.close(other)
    assert fsio._hold[1] == 0  # no hold left counted
    with writer_lock(vault):
        assert fsio._hold[1] == 1
