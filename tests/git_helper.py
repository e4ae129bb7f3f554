"""Real git repositories for tests, with the real home and global config out of reach."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest


def isolate_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, str]:
    """Point HOME, XDG_CONFIG_HOME and git's global config into ``tmp_path``; the env."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Test\n\temail = test@example.invalid\n"
        "[init]\n\tdefaultBranch = main\n[pull]\n\trebase = false\n"
        "[advice]\n\tdetachedHead = false\n",
        encoding="utf-8",
    )
    values = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
    }
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    for key in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(key, raising=False)
    return dict(os.environ)


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} in {cwd}: {done.stdout}{done.stderr}")
    return done
