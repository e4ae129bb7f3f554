"""What a transcript's signal means for an adopted auto-memory folder (for ``ingest``).

A ``<cc-memory filenames="a.md">`` tag names files of the folder the session's
working directory uses; a ``Read`` of a file inside an adopted folder is a read of
that memory. Only adopted folders count, and only files that are there (a regular
file, not a symlink): a tag naming anything else is ignored.
"""

from __future__ import annotations

import os
from pathlib import Path

from vaultkeeper.native.counts import block_name
from vaultkeeper.native.files import memory_names, read_memory
from vaultkeeper.native.folders import Folder, adopted, folder_for_cwd

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
