"""After ``git merge``: the counters git merged without asking our driver (post-merge hook).

git runs a merge driver only when both sides changed a file *differently*. Two machines
that each count one use of a pattern on the same day, and change nothing else in its
registry file, make the very same bytes: git takes that version as it is and one use
is lost, silently (a native memory cited in one session on each machine, too). Here,
right after a merge commit, each registry file whose two parents hold the same bytes,
changed since their merge base, is merged again by the driver's own rules (counts: base
+ both sides' uses) and, when that differs, written and committed on its own
("vaultkeeper: ..."), so the next ``git push`` carries it. A file with local changes not
committed is left alone (said on stderr); so is a history with several merge bases.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from vaultkeeper import config
from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.registry.merge import merge_bytes
from vaultkeeper.store.fsio import atomic_write

COMMIT_MESSAGE = "vaultkeeper: counters both machines changed the same way, added up"


@dataclass(frozen=True)
class Repair:
    fixed: tuple[str, ...]  # repository paths written and committed
    notes: tuple[str, ...]  # what was left alone, and why


def _git(top: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "-C", str(top), *args], capture_output=True, check=False)


def _out(top: Path, *args: str) -> str | None:
    done = _git(top, *args)
    return done.stdout.decode("utf-8", "replace").strip() if done.returncode == 0 else None


def _blob(top: Path, commit: str, path: str) -> str | None:
    return _out(top, "rev-parse", "--verify", "-q", f"{commit}:{path}")


def _changed(top: Path, base: str, side: str) -> set[str]:
    done = _git(top, "diff", "--no-renames", "--name-only", "-z", base, side)
    return {p for p in done.stdout.decode("utf-8", "replace").split("\0") if p}


def is_counter_file(path: str) -> bool:
    """A registry file (``patterns/**.md``) of a vault anywhere in the repository."""
    parts = PurePosixPath(path).parts
    return path.endswith(".md") and config.PATTERNS_DIR in parts[:-1]


def _ours(top: Path, paths: list[str]) -> list[str]:
    """The paths .gitattributes sends to our driver (merge=vaultkeeper)."""
    if not paths:
        return []
    done = _git(top, "check-attr", "-z", "merge", "--", *paths)
    fields = done.stdout.decode("utf-8", "replace").split("\0")
    return [fields[i] for i in range(0, len(fields) - 2, 3) if fields[i + 2] == "vaultkeeper"]


def repair_after_merge(where: Path) -> Repair:
    """Add up the counters of the files git merged as identical (see the docstring)."""
    top_text = _out(where, "rev-parse", "--show-toplevel")
    if top_text is None:
        raise VaultkeeperError(f"{where}: not a git work tree")
    top = Path(top_text)
    ours, theirs = (
        _out(top, "rev-parse", "-q", "--verify", "HEAD^1"),
        _out(top, "rev-parse", "-q", "--verify", "HEAD^2"),
    )
    if ours is None or theirs is None or not _merged_here(top, ours):
        return Repair((), ())  # a fast-forward (maybe to another clone's merge): not ours
    bases = (_out(top, "merge-base", "--all", ours, theirs) or "").split()
    if len(bases) != 1:
        return Repair((), ("several merge bases: counters not checked",) if bases else ())
    base = bases[0]
    both = sorted(_changed(top, base, ours) & _changed(top, base, theirs))
    same = [p for p in both if is_counter_file(p) and _same(top, ours, theirs, p)]
    fixed: list[str] = []
    notes: list[str] = []
    for path in _ours(top, same):
        blob = _git(top, "cat-file", "blob", f"{ours}:{path}").stdout
        old = _git(top, "cat-file", "blob", f"{base}:{path}")
        result = merge_bytes(old.stdout if old.returncode == 0 else b"", blob, blob, path)
        if result.conflicts or result.text == blob:
            continue
        target = top / path
        if not target.is_file() or target.is_symlink() or target.read_bytes() != blob:
            notes.append(f"{path}: changed since the merge; its counters were not added up")
            continue
        atomic_write(target, result.text)
        fixed.append(path)
    if fixed:
        _commit(top, fixed)
    return Repair(tuple(fixed), tuple(notes))


def _merged_here(top: Path, ours: str) -> bool:
    """Whether HEAD is the merge commit this clone just made (its first parent is the
    HEAD before the merge), not another clone's merge this one fast-forwarded to: that
    clone's hook added up its counters already, and doing it twice would count twice."""
    before = _out(top, "rev-parse", "-q", "--verify", "ORIG_HEAD")
    moved = _out(top, "reflog", "-1", "--format=%gs", "HEAD") or ""
    return before == ours and "fast-forward" not in moved.casefold()


def _run(top: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(["git", "-C", str(top), *args], capture_output=True, check=False, env=env)
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip() or f"exit {done.returncode}"
        raise VaultkeeperError(f"git {args[0]}: {why}")
    return done.stdout.decode("utf-8", "replace").strip()


def _commit(top: Path, paths: list[str]) -> None:
    """One commit on HEAD holding ``paths`` as the work tree has them. git may still be in
    its merge state while the hook runs (``git commit`` then refuses a partial commit, or
    would record the merge again), so the commit is made with git's plumbing: a tree
    from HEAD's with the new blobs (in a temporary index), ``commit-tree``, ``update-ref``;
    the real index takes the same blobs, so ``git status`` stays clean."""
    head = _run(top, "rev-parse", "HEAD")
    entries = []
    for path in paths:
        mode = _run(top, "ls-tree", "HEAD", "--", path).split(" ", 1)[0] or "100644"
        blob = _run(top, "hash-object", "-w", "--", path)
        entries.append(f"{mode},{blob},{path}")
    with tempfile.TemporaryDirectory(prefix="vaultkeeper-merge-") as tmp:
        env = {**os.environ, "GIT_INDEX_FILE": os.path.join(tmp, "index")}
        _run(top, "read-tree", "HEAD", env=env)
        for entry in entries:
            _run(top, "update-index", "--cacheinfo", entry, env=env)
        tree = _run(top, "write-tree", env=env)
    commit = _run(top, "commit-tree", tree, "-p", head, "-m", COMMIT_MESSAGE)
    _run(top, "update-ref", "-m", "vaultkeeper post-merge", "HEAD", commit, head)
    for entry in entries:
        _run(top, "update-index", "--cacheinfo", entry)


def _same(top: Path, ours: str, theirs: str, path: str) -> bool:
    blob = _blob(top, ours, path)
    return blob is not None and blob == _blob(top, theirs, path)
