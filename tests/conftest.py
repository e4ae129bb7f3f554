"""Shared fixtures: `make_vault` builds a vault from a dict of files; `sample` copies it.

For the whole session HOME and the XDG folders point into one temporary folder, set
before any test (or the process it starts) runs, so no test ever reads or writes the
real home: its hook log, crontab-adjacent state or host settings.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from click.testing import CliRunner

from vaultkeeper.config import ENV_RECALL_DEADLINE
from vaultkeeper.entries.init import init_vault

REPO = Path(__file__).resolve().parent.parent
SAMPLE_VAULT = REPO / "sample_vault"
# $VAULTKEEPER_TEST_CORPORA moves it: tests/test_docs_corpora.py hides it to count skips
CORPORA = Path(os.environ.get("VAULTKEEPER_TEST_CORPORA") or REPO.parent / "shared" / "corpora")
# the one reason every test that needs it is skipped with (README.md, docs/development.md)
CORPORA_SKIP = "../shared/corpora: not here (CI lays shared/ beside the clone)"


def corpus(name: str = "kepano-obsidian") -> Path:
    """A third-party vault from ../shared/corpora; a test that calls this carries the
    ``corpora`` mark, which skips it where the folder is absent."""
    path = CORPORA / name
    if not path.is_dir():
        pytest.skip(CORPORA_SKIP)
    return path


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test marked ``corpora`` skipped, with the one reason, without the folder."""
    if (CORPORA / "kepano-obsidian").is_dir():
        return
    skip = pytest.mark.skip(reason=CORPORA_SKIP)
    for item in items:
        if item.get_closest_marker("corpora") is not None:
            item.add_marker(skip)


MakeVault = Callable[..., Path]

HOME_VARS = ("HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME")
_SAVED_ENV: dict[str, str | None] = {}
_SESSION_HOME = "VAULTKEEPER_TEST_SESSION_HOME"  # conftest may be imported twice: one record


def pytest_configure(config: pytest.Config) -> None:
    home = Path(tempfile.mkdtemp(prefix="vaultkeeper-test-home-")).resolve()
    os.environ[_SESSION_HOME] = str(home)
    folders = {
        "HOME": home,
        "XDG_STATE_HOME": home / ".local" / "state",
        "XDG_CONFIG_HOME": home / ".config",
        "XDG_DATA_HOME": home / ".local" / "share",
        "XDG_CACHE_HOME": home / ".cache",
        "XDG_RUNTIME_DIR": home / "run",
        "VAULTKEEPER_LOCK_ROOT": home / "run",  # the writer lock's folder (store/fsio.py)
    }
    for name, folder in folders.items():
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        _SAVED_ENV[name] = os.environ.get(name)
        os.environ[name] = str(folder)
    # the recall hook's own 1 s limit is for a person's session; on a loaded 2-core CI
    # machine a lesson must not turn into silence because Python started slowly
    _SAVED_ENV[ENV_RECALL_DEADLINE] = os.environ.get(ENV_RECALL_DEADLINE)
    os.environ[ENV_RECALL_DEADLINE] = "4"


def pytest_unconfigure(config: pytest.Config) -> None:
    for name, value in _SAVED_ENV.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    home = os.environ.pop(_SESSION_HOME, None)
    if home:
        shutil.rmtree(home, ignore_errors=True)


def session_home() -> Path:
    """The session's temporary home (HOME points here while the tests run)."""
    return Path(os.environ[_SESSION_HOME])


def recall_on(vault: Path) -> Path:
    """The point-of-use recall turned on for ``vault``, as its hook does when it finds no
    index (search.index.want): the scan keeps the full-text index only then."""
    from vaultkeeper.search.index import want

    want(vault)
    return vault


@pytest.fixture
def make_vault(tmp_path: Path) -> MakeVault:
    """``make_vault({"rel/path.md": "text" | b"bytes"}, init=True)`` -> the vault's path.

    With ``init`` the vault is laid out by ``init_vault`` first (so it has _index.md,
    the registry and the spec); the given files are then written over it verbatim.
    """
    counter = 0

    def make(files: Mapping[str, str | bytes] | None = None, *, init: bool = True) -> Path:
        nonlocal counter
        counter += 1
        root = tmp_path / f"vault{counter}"
        if init:
            init_vault(root)
        else:
            root.mkdir(parents=True)
        for rel_path, content in (files or {}).items():
            target = root / rel_path
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_bytes(content.encode("utf-8"))
        return root

    return make


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    """A private copy of sample_vault/ (without its state/) that a test may write to."""
    dest = tmp_path / "sample_vault"
    shutil.copytree(SAMPLE_VAULT, dest, ignore=shutil.ignore_patterns("state", ".trash"))
    (dest / "state").mkdir(exist_ok=True)
    return dest


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def run_vaultkeeper(vault: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m vaultkeeper --vault VAULT ARGS`` in a child process, on 2026-06-01.

    Its timeout only guards against a hang (a regression of a hostile-input fix would
    hang or exhaust memory there); it is no measure of speed.
    """
    return subprocess.run(
        [sys.executable, "-m", "vaultkeeper", "--vault", str(vault), *args],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "VAULTKEEPER_TODAY": "2026-06-01"},
        check=False,
    )


def run_bounded(
    args: list[str], hangs: str, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m vaultkeeper ARGS`` in a child limited to 1 GiB of memory, so that a read
    of /dev/zero fails soon, not after the machine's memory; a child that waits past the
    120 s safety net (on a FIFO: the fixed command answers at once) fails the test with
    ``hangs``, what it waited on."""

    def small() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    try:
        return subprocess.run(
            [sys.executable, "-m", "vaultkeeper", *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            preexec_fn=small,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(hangs)


def snapshot(root: Path, skip_state: bool = True) -> dict[str, bytes]:
    """Every file's bytes under ``root`` (state/ excluded by default), for before/after checks."""
    out: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            rel_path = path.relative_to(root).as_posix()
            if skip_state and rel_path.startswith("state/"):
                continue
            out[rel_path] = path.read_bytes()
    return out
