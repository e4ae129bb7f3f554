"""Paths a person types to `apply ...`: read from where they stand, as `lint` takes them.

The applier takes an entry's path relative to the vault's root (that is what the report,
the journal and a batch file name). At a shell a person types a path relative to the
folder they are in (`./retry-ci-twice.md` from its own folder). The rule, said in each
command's --help:

- a path that names a file from the current folder is that file (its vault-relative
  path is what the applier gets, so messages and the journal name it as ever);
- a path starting with ``./`` or ``../`` is always taken from the current folder;
- any other path naming no file here is taken from the vault's root, as before, so
  ``projects/api/memory/x.md`` works from anywhere in (or outside) the vault.

A name (no ``/``, no ``.md``) is left alone: it is an entry or block name, not a path.
Only the spelling changes here; confinement to the vault is still the applier's.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

_PATH_LINE = re.compile(r"^(?P<path>.+):(?P<line>\d+)$")
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.I)


def _is_path(text: str) -> bool:
    # as the applier tells a path from a name (apply/gate.py looks_like_path)
    return any(s in text for s in ("/", "\\")) or text.endswith(".md") or text.startswith(".")


def _from_here(text: str) -> bool:
    return text in (".", "..") or text.startswith(("./", "../"))


def _spelled(vault: Path, full: str) -> str:
    """``full`` (absolute, normalised) as the vault-relative path, else as it is."""
    root = str(vault)
    if full.startswith(root.rstrip(os.sep) + os.sep):
        return Path(full[len(root.rstrip(os.sep)) + 1 :]).as_posix()
    return full


def entry_path(vault: Path, text: str, cwd: Path | None = None) -> str:
    """What the applier should get for the entry path ``text`` typed in ``cwd``."""
    if not text or not _is_path(text) or text.startswith("~") or os.path.isabs(text):
        return text
    here = cwd if cwd is not None else Path.cwd()
    full = os.path.normpath(os.path.join(here, text))
    found = os.path.isfile(full) or (not text.endswith(".md") and os.path.isfile(full + ".md"))
    if not found and not _from_here(text):
        return text  # vault-relative, as the report and the journal spell it
    return _spelled(vault.resolve(), full)


def receipt(vault: Path, text: str | None, cwd: Path | None = None) -> str | None:
    """``--evidence``: its ``path:line`` read from the current folder by the same rule
    (a URL, a recorded receipt or an absolute path is left as it is)."""
    if text is None or _URL.match(text.strip()):
        return text
    m = _PATH_LINE.match(text.strip())
    if not m or os.path.isabs(m.group("path")) or m.group("path").startswith("~"):
        return text
    here = cwd if cwd is not None else Path.cwd()
    full = os.path.normpath(os.path.join(here, m.group("path")))
    if not os.path.isfile(full) and not _from_here(m.group("path")):
        return text
    return f"{_spelled(vault.resolve(), full)}:{m.group('line')}"


def decision(vault: Path, typed: Any, cwd: Path | None = None) -> Any:
    """The Decision with its paths (target, --by, DROP, --evidence) as the applier takes
    them; a restore's target is a trash id, no path."""
    if typed.action == "restore":
        return typed
    return replace(
        typed,
        target=entry_path(vault, typed.target, cwd),
        by=None if typed.by is None else entry_path(vault, typed.by, cwd),
        drop=None if typed.drop is None else entry_path(vault, typed.drop, cwd),
        evidence=receipt(vault, typed.evidence, cwd),
    )
