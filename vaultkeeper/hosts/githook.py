"""The clone's ``post-merge`` hook that ``hooks install git`` adds (see gitrepair.py).

Like the driver's config, a hook never travels with a clone: each clone installs it.
The hook file is ours only when we made it; a hook someone else wrote is never
changed, and install says which line to add to it. Where the hooks live is git's
answer (``git rev-parse --git-path hooks``), so ``core.hooksPath`` is followed.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

from vaultkeeper.store.fsio import atomic_write

MARK = "# vaultkeeper (hooks install git): counters git merged as identical are added up"


def hook_text(program: str) -> str:
    line = f'{shlex.quote(program)} post-merge "$@" || true'
    return f"#!/bin/sh\n{MARK}\n{line}\n"


def hook_path(vault: Path) -> Path | None:
    done = subprocess.run(
        ["git", "-C", str(vault), "rev-parse", "--git-path", "hooks/post-merge"],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0 or not done.stdout.strip():
        return None
    path = Path(done.stdout.strip())
    return path if path.is_absolute() else vault / path


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8") if path.is_file() else None
    except (OSError, UnicodeDecodeError):
        return ""  # someone's binary hook: not ours


def install_hook(vault: Path, program: str) -> str:
    path = hook_path(vault)
    if path is None:
        return "no hooks folder found: post-merge hook not installed"
    want = hook_text(program)
    text = _read(path)
    if text == want:
        return "kept hooks/post-merge"
    if text is not None and MARK not in text:
        line = want.splitlines()[-1]
        return f"kept your own {path}; add this line to it: {line}"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, want)
    os.chmod(path, 0o755)
    return f"{'updated' if text else 'made'} {path} (post-merge: adds up counters)"


def uninstall_hook(vault: Path) -> str | None:
    path = hook_path(vault)
    text = None if path is None else _read(path)
    if path is None or not text or MARK not in text or not text.startswith("#!/bin/sh\n" + MARK):
        return None
    path.unlink()
    return f"removed {path}"


def hook_state(vault: Path) -> str:
    """``installed``, ``absent``, or a hook someone else wrote (left alone)."""
    path = hook_path(vault)
    text = None if path is None else _read(path)
    if text is None:
        return "absent"
    return "installed" if MARK in text else "yours, without vaultkeeper's line"
