"""What ingest matches a transcript's signals against: the vault's registry blocks (by
link target), promoted skills, and notes (ingest.py)."""

from __future__ import annotations

import functools
import os
import re
from collections import OrderedDict
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.native.lookup import NativeLookup
from vaultkeeper.registry.blocks import load_heads
from vaultkeeper.store.vault import iter_markdown, rel

# Obsidian writes these characters of a heading as blanks in a link to it.
_HEADING_NOISE = re.compile(r"[#^|:\[\]\\%]")
# The skill a **promoted:** line points at: [[skills/NAME/SKILL]] or `/abs/NAME/SKILL.md`.
_PROMOTED_TO = re.compile(r"(?:\[\[|`)([^\]`|#]*?)/SKILL(?:\.md)?(?:[|#][^\]]*)?(?:\]\]|`)", re.I)


def heading_key(text: str) -> str:
    """How a ``#heading`` part of a link is compared with headings: case and runs of
    blanks do not matter, and link-unsafe characters count as blanks."""
    return " ".join(_HEADING_NOISE.sub(" ", text).split()).casefold()


def _folded(text: str) -> str:
    return " ".join(text.split()).casefold()


class VaultView:
    """What a signal is matched against: registry blocks, promoted skills, notes."""

    def __init__(self, vault: Path) -> None:
        self.root = vault.resolve()
        self.native = NativeLookup(vault)  # adopted Claude Code auto-memory folders
        self.blocks: dict[
            str, dict[str, str]
        ] = {}  # registry file (lowercase, no .md) -> key -> name
        self.skills: dict[str, str] = {}  # skill folder name -> pattern
        self.skill_files: dict[Path, str] = {}  # the real SKILL.md a line names -> pattern
        # bounded: a long session reads many files, and reads the same ones again and again
        self._files: OrderedDict[tuple[str, str | None], tuple[str | None, str | None]]
        self._files = OrderedDict()
        # a link's heading as written (blanks folded, case aside) -> name, then its
        # heading_key -> name, or "" when two names share it (`a:b`, `a b`): neither
        self.exact: dict[str, dict[str, str]] = {}
        heads, _ = load_heads(vault)
        for head in heads:
            file_key = head.rel[: -len(".md")].casefold()
            self.exact.setdefault(file_key, {}).setdefault(_folded(head.name), head.name)
            keys = self.blocks.setdefault(file_key, {})
            key = heading_key(head.name)
            keys[key] = head.name if keys.get(key, head.name) == head.name else ""
            match = _PROMOTED_TO.search(head.promoted or "")
            if match:
                self.skills.setdefault(match.group(1).rsplit("/", 1)[-1].casefold(), head.name)
                skill = self._skill_file(match.group(1), match.group(0).startswith("[["))
                if skill is not None:
                    self.skill_files.setdefault(skill, head.name)

    def _skill_file(self, folder: str, wikilink: bool) -> Path | None:
        """The SKILL.md a **promoted:** line names, as promote wrote it: a link is
        vault-relative, a quoted path absolute (or vault-relative, if a person wrote it)."""
        path = Path(folder if wikilink else os.path.expanduser(folder)) / "SKILL.md"
        try:
            return (path if path.is_absolute() else self.root / path).resolve()
        except (OSError, RuntimeError, ValueError):
            return None

    @functools.cached_property
    def notes(self) -> dict[str, list[str]]:
        """Note paths by lowercase path without .md, and by lowercase file name alone."""
        out: dict[str, list[str]] = {}
        for path in iter_markdown(self.root):
            relative = rel(self.root, path)
            stem = relative[: -len(".md")].casefold()
            out.setdefault(stem, []).append(relative)
            if "/" in stem:
                out.setdefault(stem.rsplit("/", 1)[-1], []).append(relative)
        return out

    def registry_file(self, target: str) -> str | None:
        key = target.casefold()
        if key in self.blocks:
            return key
        if "/" not in key:  # Obsidian resolves a bare name to the file of that name
            return next((k for k in self.blocks if k.rsplit("/", 1)[-1] == key), None)
        return None

    def link(self, target: str, heading: str | None) -> tuple[str, str] | None:
        """(kind, target) of the event a link makes, or None for a link to nothing here."""
        target = target.strip()
        if target.casefold().endswith(".md"):
            target = target[: -len(".md")]
        file_key = self.registry_file(target) if target else None
        if file_key is not None and heading and not heading.startswith("^"):
            last = heading.split("#")[-1].strip()
            exact = self.exact[file_key].get(_folded(last))
            return "cite", exact or self.blocks[file_key].get(heading_key(last)) or last
        found = self.notes.get(target.casefold(), []) if target else []
        return ("cite", sorted(found, key=len)[0]) if found else None

    def is_root(self, given: str, cwd: str | None) -> bool:
        """Whether ``--vault GIVEN`` (run in ``cwd``) names this vault."""
        try:
            path = Path(os.path.expanduser(given))
            if not path.is_absolute():
                if cwd is None:
                    return False
                path = Path(cwd) / path
            return path.resolve() == self.root
        except (OSError, RuntimeError, ValueError):
            return False

    def skill(self, name: str) -> str | None:
        return self.skills.get(name.rsplit(":", 1)[-1].strip().casefold())

    def file(self, given: str, cwd: str | None) -> tuple[str | None, str | None]:
        """(vault-relative path read, pattern whose promoted skill it is), either None."""
        key = (given, cwd)
        found = self._files.get(key)
        if found is not None:
            self._files.move_to_end(key)
            return found
        found = self._files[key] = self._file(given, cwd)
        if len(self._files) > config.INGEST_PATH_CACHE:
            self._files.popitem(last=False)
        return found

    def _file(self, given: str, cwd: str | None) -> tuple[str | None, str | None]:
        try:  # a NUL byte in the path (or cwd) is no file: that read alone is skipped
            path = Path(os.path.expanduser(given))
            if not path.is_absolute():
                if cwd is None:
                    return None, None
                path = Path(cwd) / path
            real = path.resolve()
            if not real.is_file():
                return None, None
        except (OSError, RuntimeError, ValueError):
            return None, None
        pattern = self.skill_files.get(real)
        if self.root not in real.parents:
            return None, pattern
        relative = rel(self.root, real)
        top = relative.split("/", 1)[0]
        if top in config.EXCLUDED_DIRS or any(p.startswith(".") for p in relative.split("/")):
            return None, pattern
        return relative, pattern
