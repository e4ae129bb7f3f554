"""Walk the vault's files: one sorted walk, deterministic, never out of the vault.

Every command that lists the vault walks it here, so one rule holds for all: hidden
names and the root's ``state/`` are skipped (as Obsidian does); a symlink resolving
outside the vault is never read nor entered (the caller may collect them,
``outside``), a file symlink inside is a file, a symlinked folder is never entered; a
world of its own is not entered (a nested vault: ``.obsidian/``, or ``_index.md``
beside ``patterns/`` or ``projects/``; a virtual environment; ``node_modules``,
``__pycache__``). One ``scandir`` per folder: only a symlink costs a ``realpath``.
"""

from __future__ import annotations

import os

from vaultkeeper import config

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

# folders never entered wherever they are: installed packages, not a person's notes
APART_NAMES = frozenset({"node_modules", "__pycache__"})
VENV_MARK = "pyvenv.cfg"  # every Python virtual environment's root holds one
# names whose presence in a listing may make the folder a nested vault or a venv
_MARKS = frozenset(
    {config.OBSIDIAN_DIR, config.INDEX_FILE, config.PATTERNS_DIR, config.PROJECTS_DIR, VENV_MARK}
)


def inside(root: str, real: str) -> bool:
    """Whether ``real`` (a realpath) is ``root`` (a realpath) or below it."""
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def links_out(root: str, path: str) -> bool:
    """True when ``path`` resolves outside ``root`` (a realpath): a file symlinked out
    of the vault is never served, as resolve_inside refuses it to the read tool."""
    return not inside(root, os.path.realpath(path))


def apart(names: set[str]) -> bool:
    """Whether a folder holding ``names`` is another vault or a virtual environment."""
    return (
        VENV_MARK in names
        or config.OBSIDIAN_DIR in names
        or (config.INDEX_FILE in names and bool(names & {config.PATTERNS_DIR, config.PROJECTS_DIR}))
    )


def _name(entry: os.DirEntry[str]) -> str:
    return entry.name


def walk(
    top: str, start: str | None = None, outside: list[str] | None = None, suffix: str = ""
) -> Iterator[str]:
    """The files (``os.path.join(folder, name)``) under ``start`` (default: ``top``, the
    vault) whose names end with ``suffix``, in os.walk's top-down order, names sorted.
    ``outside`` receives each symlink out of the vault met (and ``start`` if it is one).
    """
    if start is None or start == top:
        return _walk(top, None, top, outside, suffix)
    root = os.path.realpath(top)
    if not inside(root, os.path.realpath(start)):
        if outside is not None:
            outside.append(start)
        return iter(())
    return _walk(top, root, start, outside, suffix)


def _walk(
    top: str, root: str | None, start: str, outside: list[str] | None, suffix: str
) -> Iterator[str]:
    """walk from ``start``, inside the vault; ``root`` (its realpath) found when needed."""
    stack = [start]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=_name)
        except OSError:
            continue  # unreadable (or gone): skipped, as os.walk skips it
        at_top = folder == top
        files: list[str] = []
        folders: list[str] = []
        marks: set[str] = set()
        for entry in entries:
            name = entry.name
            if name in _MARKS:
                marks.add(name)
            if name[0] == ".":
                continue
            if entry.is_symlink():
                if root is None:
                    root = os.path.realpath(top)
                if not inside(root, os.path.realpath(entry.path)):
                    if outside is not None and not (at_top and name in config.EXCLUDED_DIRS):
                        outside.append(entry.path)
                    continue
                try:
                    linked_folder = entry.is_dir()
                except OSError:
                    linked_folder = False
                if not linked_folder and name.endswith(suffix):
                    files.append(entry.path)  # a symlinked folder is never entered
                continue
            try:
                is_folder = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_folder = False
            if is_folder:
                if name not in APART_NAMES and not (at_top and name in config.EXCLUDED_DIRS):
                    folders.append(entry.path)
            elif name.endswith(suffix):
                files.append(entry.path)
        if marks and not at_top and apart(marks):
            continue  # another vault, or a virtual environment: not this vault's files
        yield from files
        stack.extend(reversed(folders))


def memory_files(vault: str | os.PathLike[str], outside: list[str] | None = None) -> Iterator[str]:
    """The ``.md`` files under ``projects/*/memory/``, in the walk's order and rules."""
    top = os.fspath(vault)
    projects = os.path.join(top, config.PROJECTS_DIR)
    if os.path.islink(projects):
        if outside is not None and links_out(os.path.realpath(top), projects):
            outside.append(projects)
        return
    try:
        with os.scandir(projects) as listing:
            entries = sorted(listing, key=_name)
    except OSError:
        return
    root = None
    for entry in entries:
        if entry.name[0] == "." or entry.name in APART_NAMES:
            continue
        if entry.is_symlink():
            root = root or os.path.realpath(top)
            if outside is not None and links_out(root, entry.path):
                outside.append(entry.path)
            continue  # a linked project is never entered
        if not entry.is_dir(follow_symlinks=False):
            continue
        try:
            with os.scandir(entry.path) as listing:
                found = {
                    e.name: e for e in listing if e.name in _MARKS or e.name == config.MEMORY_SUBDIR
                }
        except OSError:
            continue
        memory = found.get(config.MEMORY_SUBDIR)
        if memory is None or apart(set(found)):
            continue
        if memory.is_symlink():
            root = root or os.path.realpath(top)
            if outside is not None and links_out(root, memory.path):
                outside.append(memory.path)
            continue
        if memory.is_dir(follow_symlinks=False):  # no link on the way: inside the vault
            yield from _walk(top, root, memory.path, outside, ".md")


OUT_REASON = "a symlink to outside the vault; not read (vaultkeeper reads only the vault)"
