"""One auto-memory folder read as Claude Code lays it out: ``MEMORY.md`` and its files.

Each memory is a markdown file with frontmatter ``name``, ``description`` and
``metadata.type`` (``user``, ``feedback``, ``project``, ``reference``); ``MEMORY.md`` is
the index loaded at every session start, one ``- [Title](file.md) - hook`` line a
memory. Reading is for review only: no file is ever written here, a symlink is never
followed (nothing outside the folder is read), and a file is read up to
``config.NATIVE_READ_MAX_BYTES``.

For ``ingest``, ``NativeLookup`` says what a transcript's signal means for an adopted
folder: a ``<cc-memory filenames="a.md">`` tag names files of the folder the session's
working directory uses; a ``Read`` of a file inside an adopted folder is a read of that
memory. Only adopted folders count, and only files that are there (a regular file, not
a symlink): a tag naming anything else is ignored.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.native.counts import block_name
from vaultkeeper.native.folders import Folder, adopted, folder_for_cwd
from vaultkeeper.store.frontmatter import load_yaml, split_frontmatter
from vaultkeeper.store.text import ParseError

_INDEX_LINK = re.compile(r"\]\(<?([^)>]+?\.md)>?\)")


@dataclass(frozen=True)
class Memory:
    """One native memory file: what its frontmatter says, its size and time, its text."""

    file: str  # the file's name inside the folder
    name: str | None
    description: str | None
    type: str | None
    size: int
    mtime: float
    text: str  # as read (at most NATIVE_READ_MAX_BYTES)
    problem: str | None  # unreadable frontmatter, say
    modified: dt.date | None = None  # the host's own ``metadata.modified`` stamp


@dataclass(frozen=True)
class Index:
    """``MEMORY.md``: its lines, its size in bytes, and the files its lines link to."""

    lines: tuple[str, ...]
    size: int
    targets: tuple[tuple[int, str], ...]  # (1-based line, file name) per link


@dataclass(frozen=True)
class NativeFolder:
    path: Path
    memories: tuple[Memory, ...]  # newest first, as the recall orders them
    index: Index | None  # None: no MEMORY.md
    refused: str | None = None  # why the folder was not read at all (a symlink now)


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


def moved_out(folder: Path) -> str | None:
    """Why an adopted folder is not read any more, or None: it (or, in Claude Code's
    layout, its project folder) was replaced by a symlink since it was adopted, or it is
    gone. Adopt refuses a symlink; a link made later must not lead a review, a prune or
    a restore to files outside the host's own folder."""
    checked = [folder]
    if folder.parent.parent.name == "projects":  # ~/.claude/projects/<project>/memory
        checked.append(folder.parent)
    for path in checked:
        if os.path.islink(path):
            return f"{path} is a symlink now (to {os.path.realpath(path)}); not read"
    if not os.path.isdir(folder):
        return f"{folder}: no such folder"
    return None


def open_folder(folder: Path) -> int:
    """A descriptor of ``folder`` itself, never through a symlink; OSError with
    ``moved_out``'s reason otherwise. Its files are opened relative to it."""
    why = moved_out(folder)
    if why is not None:
        raise OSError(why)
    return os.open(folder, os.O_RDONLY | _DIRECTORY | _NOFOLLOW)


def memory_names(folder: Path) -> frozenset[str]:
    """The names of ``folder``'s regular ``.md`` files (not symlinks, not dot-files,
    one line of printable text each: a line break in a name would forge the next line of
    every place it is written, the counters' ``### <project>/<file>`` heading first);
    none when the folder is ``moved_out``."""
    try:
        fd = open_folder(folder)
    except OSError:
        return frozenset()
    try:
        return frozenset(n for n in _md_files(fd) if not n.startswith(".") and n.isprintable())
    finally:
        os.close(fd)


def _md_files(fd: int) -> list[str]:
    """The names of the regular ``.md`` files (not symlinks) in the folder open as ``fd``."""
    try:
        with os.scandir(fd) as entries:
            return [
                e.name
                for e in entries
                if e.name.endswith(".md") and e.is_file(follow_symlinks=False)
            ]
    except OSError:
        return []


def _read(path: Path, dir_fd: int | None = None) -> tuple[bytes, os.stat_result] | None:
    """A regular file's first bytes, never through a symlink; None for anything else."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        return os.read(fd, config.NATIVE_READ_MAX_BYTES), info
    except OSError:
        return None
    finally:
        os.close(fd)


def _front(text: str) -> tuple[dict[str, Any], str | None]:
    yaml_text = split_frontmatter(text)[0]
    if yaml_text is None:
        return {}, None
    try:
        data = load_yaml(yaml_text)
    except ParseError as exc:
        return {}, str(exc)
    return (data, None) if isinstance(data, dict) else ({}, "frontmatter is not a mapping")


def _text(value: object) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def read_memory(path: Path, dir_fd: int | None = None) -> Memory | None:
    got = _read(path, dir_fd)
    if got is None:
        return None
    raw, info = got
    text = raw.decode("utf-8", errors="replace")
    front, problem = _front(text)
    meta = front.get("metadata")
    kind = meta.get("type") if isinstance(meta, dict) else front.get("type")
    stamp = meta.get("modified") if isinstance(meta, dict) else None
    return Memory(
        path.name,
        _text(front.get("name")),
        _text(front.get("description")),
        _text(kind),
        info.st_size,
        info.st_mtime,
        text,
        problem,
        _day(stamp),
    )


def _day(stamp: object) -> dt.date | None:
    if isinstance(stamp, dt.datetime):
        return stamp.date()
    if isinstance(stamp, dt.date):
        return stamp
    if isinstance(stamp, str):
        try:
            return dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).date()
        except ValueError:
            return None
    return None


def read_index(path: Path, dir_fd: int | None = None) -> Index | None:
    got = _read(path, dir_fd)
    if got is None:
        return None
    raw, info = got
    lines = tuple(raw.decode("utf-8", errors="replace").splitlines())
    targets = tuple(
        (number, os.path.basename(m.group(1)))
        for number, line in enumerate(lines, start=1)
        for m in _INDEX_LINK.finditer(line)
    )
    return Index(lines, info.st_size, targets)


def read_folder(folder: Path) -> NativeFolder:
    """Every memory file of ``folder`` (``MEMORY.md`` aside), newest first; nothing, and
    why, for a folder that became a symlink (``moved_out``). Each file is opened
    relative to the folder's own descriptor, so a link made meanwhile leads nowhere."""
    try:
        fd = open_folder(folder)
    except OSError as exc:
        return NativeFolder(folder, (), None, str(exc))
    memories: list[Memory] = []
    try:
        for name in sorted(_md_files(fd)):
            memory = read_memory(Path(name), fd) if name != config.NATIVE_INDEX_FILE else None
            if memory is not None:
                memories.append(memory)
        memories.sort(key=lambda m: (-m.mtime, m.file))
        index = read_index(Path(config.NATIVE_INDEX_FILE), fd)
    finally:
        os.close(fd)
    return NativeFolder(folder, tuple(memories), index)


READ_PREFIX = "native:"  # a read's target in the usage log: native:<project>/<file>


class NativeLookup:
    def __init__(self, vault: Path, home: Path | None = None) -> None:
        self.home = Path.home() if home is None else home
        self.folders = {f.path: f for f in adopted(vault)}
        self._by_cwd: dict[str, Folder | None] = {}
        self.descriptions: dict[str, str | None] = {}  # block name -> the file's description
        self._listed: dict[str, frozenset[str]] = {}  # folder path -> its memory files

    def _folder(self, cwd: str | None) -> Folder | None:
        if not cwd or not self.folders:
            return None
        if cwd not in self._by_cwd:
            found = folder_for_cwd(self.home, cwd)
            self._by_cwd[cwd] = None if found is None else self.folders.get(str(found))
        return self._by_cwd[cwd]

    def _files(self, folder: Folder) -> frozenset[str]:
        """The regular memory files of ``folder`` (no symlink, one-line names), listed
        once: a tag naming thousands of files costs a set lookup each, not two stats."""
        if folder.path not in self._listed:
            self._listed[folder.path] = memory_names(Path(folder.path))
        return self._listed[folder.path]

    def cited(self, file: str, cwd: str | None) -> str | None:
        """The counter block a tag's file name stands for, or None."""
        folder = self._folder(cwd)
        name = os.path.basename(file.strip())
        if folder is None or name not in self._files(folder):
            return None
        block = block_name(folder.project, name)
        if block not in self.descriptions:
            memory = read_memory(Path(folder.path) / name)
            self.descriptions[block] = None if memory is None else memory.description
        return block

    def read(self, given: str, cwd: str | None) -> str | None:
        """``native:<project>/<file>`` for a read of an adopted folder's file, else None."""
        if not self.folders:
            return None
        path = Path(os.path.expanduser(given))
        if not path.is_absolute():
            if cwd is None:
                return None
            path = Path(cwd) / path
        folder = self.folders.get(str(Path(os.path.normpath(path)).parent))
        if folder is None or path.name not in self._files(folder):
            return None
        return READ_PREFIX + block_name(folder.project, path.name)
