"""Which repository a project folder's anchors are in, and git run read-only.

A project folder is tied to a repository identified across machines by its root commit
(``git rev-list --max-parents=0 HEAD``) and its remote URL, committed in
``projects/<p>/repository.json``; the repository's local path on this machine is kept
in ``state/machine.json`` (not committed). git is run only for read-only plumbing
(rev-parse, rev-list, diff --name-status), with a timeout, without the caller's GIT_*
environment, and with what could run a program switched off (fsmonitor, external
diff, textconv); no hooks run for these commands.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.store import machine
from vaultkeeper.store.fsio import atomic_write
from vaultkeeper.store.text import ParseError, read_regular

_SAFE = ("-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false")


def git(top: str, *args: str) -> str | None:
    """``git -C top ARGS`` stdout, or None when git fails, is missing or times out."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_OPTIONAL_LOCKS"] = "0"  # a read never writes the index
    try:
        done = subprocess.run(
            ["git", *_SAFE, "-C", top, *args],
            capture_output=True,
            env=env,
            timeout=config.ANCHOR_GIT_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", "replace")


def _first(top: str, *args: str) -> str | None:
    out = git(top, *args)
    return out.strip() or None if out else None


def toplevel(directory: str) -> str | None:
    return _first(directory, "rev-parse", "--show-toplevel")


def head(top: str) -> str | None:
    return _first(top, "rev-parse", "HEAD")


def root_commit(top: str) -> str | None:
    out = git(top, "rev-list", "--max-parents=0", "HEAD")
    return min(out.split(), default=None) if out else None


def remote(top: str) -> str | None:
    return _first(top, "config", "--get", "remote.origin.url")


def since(top: str, commit: str) -> tuple[dict[str, str], list[str]] | None:
    """({old path: new path} renamed since ``commit``, [files added or renamed into]),
    commit against the working tree, from git's rename detection; None if git can't."""
    out = git(
        top, "diff", "--no-ext-diff", "--no-textconv", "-M", "--name-status", "-z", commit, "--"
    )
    if out is None:
        return None
    fields = out.split("\0")
    renames: dict[str, str] = {}
    added: list[str] = []
    i = 0
    while i < len(fields) and len(added) < config.ANCHOR_MAX_MOVE_CANDIDATES:
        status = fields[i]
        if not status:
            i += 1
            continue
        if status[0] in "RC" and i + 2 < len(fields):
            old, new = fields[i + 1], fields[i + 2]
            if status[0] == "R":
                renames[old] = new
            added.append(new)
            i += 3
            continue
        if status[0] in "AM" and i + 1 < len(fields):
            added.append(fields[i + 1])
        i += 2
    return renames, added


# -- the tie ----------------------------------------------------------------------------


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(read_regular(path))
    except (ParseError, ValueError, RecursionError):  # nested past json's depth too
        return {}
    return data if isinstance(data, dict) else {}


def project_of(rel: str) -> str | None:
    """``p`` of ``projects/p/memory/...``."""
    parts = rel.split("/")
    if len(parts) >= 3 and parts[0] == config.PROJECTS_DIR:
        return parts[1]
    return None


def tie(vault: Path, project: str, directory: str, *, if_free: bool = False) -> str | None:
    """Tie ``projects/<project>`` to the repository ``directory`` is in: its id in
    the project folder (written only when it changes), its path in state/. The top
    level, or None when ``directory`` is in no git repository with a commit.

    ``if_free`` (a tie nobody asked for: ``new`` run inside a repository, a session
    ingested): never the vault's own repository, and a project tied to another
    repository stays tied to it; the same repository's path here is recorded."""
    top = toplevel(directory)
    root = root_commit(top) if top else None
    if top is None or root is None:
        return None
    folder = vault / config.PROJECTS_DIR / project
    path = folder / config.REPOSITORY_FILE
    if if_free:
        if _holds(top, vault) or _holds(str(vault), top):
            return None
        had = _read_json(path).get("root_commit")
        if had is not None and had != root:
            return None
    record = {"root_commit": root, "remote": remote(top)}
    if folder.is_dir() and _read_json(path) != record:
        atomic_write(path, json.dumps(record, indent=2) + "\n")
    try:
        if _paths(machine.get(vault, "repositories")).get(root) != top:
            machine.update(vault, "repositories", lambda had: {**_paths(had), root: top})
    except VaultkeeperError:  # machine.json unreadable: refused, unless nobody asked
        if not if_free:
            raise
        return None
    return top


def _holds(outer: str | Path, inner: str | Path) -> bool:
    a, b = os.path.realpath(outer), os.path.realpath(inner)
    return b == a or b.startswith(a.rstrip(os.sep) + os.sep)


def project_named(vault: Path, top: str, cwd: str) -> str | None:
    """The folder under projects/ a session in ``cwd`` runs in: named as its repository's
    top level or as ``cwd`` itself, case-insensitively (as the brief finds it)."""
    try:
        names = {e.name.casefold(): e.name for e in os.scandir(vault / config.PROJECTS_DIR)
                 if not e.name.startswith(".") and e.is_dir(follow_symlinks=False)}  # fmt: skip
    except OSError:
        return None
    wanted = (os.path.basename(top.rstrip("/")), os.path.basename(cwd.rstrip("/")))
    return next((names[n.casefold()] for n in wanted if n and n.casefold() in names), None)


def located(vault: Path, project: str) -> str | None:
    """This machine's top level of the project's repository, or None when untied."""
    record = _read_json(vault / config.PROJECTS_DIR / project / config.REPOSITORY_FILE)
    root = record.get("root_commit")
    if not isinstance(root, str):
        return None
    top = _paths(machine.get(vault, "repositories")).get(root)
    return top if isinstance(top, str) and os.path.isdir(top) else None


def _paths(value: Any) -> dict[str, Any]:
    """Repository id -> its top level on this machine, from machine.json's value."""
    return dict(value) if isinstance(value, dict) else {}
