"""Shared fixtures: `make_vault` builds a vault from a dict of files; `sample` copies it."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from click.testing import CliRunner

from vaultkeeper.create import init_vault

REPO = Path(__file__).resolve().parent.parent
SAMPLE_VAULT = REPO / "sample_vault"
CORPORA = REPO.parent / "shared" / "corpora"


def corpus(name: str = "kepano-obsidian") -> Path:
    """A third-party vault from ../shared/corpora; the test is skipped where it is absent."""
    path = CORPORA / name
    if not path.is_dir():
        pytest.skip(f"{path}: not here (CI lays shared/ beside the clone)")
    return path


MakeVault = Callable[..., Path]


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
