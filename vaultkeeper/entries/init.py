"""``init``: lay out a vault, never overwriting or changing a file that exists.

The index it leaves is exactly what ``vaultkeeper index`` would generate, so ``index
--check`` passes after it (entries/create.py re-exports ``init_vault``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.errors import UsageError
from vaultkeeper.index.build import check_folder, generate
from vaultkeeper.store.edit import read_for_edit
from vaultkeeper.store.fsio import atomic_write
from vaultkeeper.store.templates import render
from vaultkeeper.store.text import ParseError, read_regular
from vaultkeeper.store.vault import resolve_inside

_INIT_FOLDERS = (config.PROJECTS_DIR, config.PATTERNS_DIR, config.REFERENCES_DIR, config.STATE_DIR)
# the files init lays down (when missing), each from its template
_FILES = {
    config.INDEX_FILE: "index.md",
    config.REGISTRY_FILE: "registry.md",
    config.SPEC_FILE: "vault-spec.md",
    ".gitignore": "gitignore",
}
# .gitignore lines that keep the vault's state/ folder out of git
_IGNORES_STATE = {"state", "state/", "/state", "/state/", "state/*", "/state/*", "/state/**"}


@dataclass(frozen=True)
class InitResult:
    vault: Path
    created: tuple[str, ...]
    kept: tuple[str, ...]
    warnings: tuple[str, ...] = ()


def init_vault(path: Path, *, here: bool = False, dry_run: bool = False) -> InitResult:
    """Create the layout; never overwrite or change a file that already exists.

    Everything that could make init fail half-way (a file where a folder belongs, a
    folder where a file belongs, a symlink leading out of the vault) is refused before
    anything is created. So is a folder that already holds files and is not a vault
    (a clone, a home folder, someone's notes), unless ``here`` says it is meant: init
    would index everything in it. ``dry_run`` refuses as init would, and writes nothing:
    its result names exactly what init would create (``init --here`` shows it first).
    """
    if path.exists() and not path.is_dir():
        raise UsageError(f"{path}: exists and is not a directory")
    if not here and path.is_dir() and _holds_files(path):
        raise UsageError(
            f"{path}: holds files and is not a vault; nothing was created (`vaultkeeper "
            "init --here` makes this folder the vault and indexes its notes; or name a "
            "new or empty folder)"
        )
    if path.is_dir():
        for folder in _INIT_FOLDERS:
            target = path / folder
            if (target.exists() or target.is_symlink()) and not target.is_dir():
                raise UsageError(f"{target}: exists and is not a folder; nothing was created")
            resolve_inside(path, folder)
        for name in _FILES:
            target = path / name
            if target.is_dir():
                raise UsageError(f"{target}: exists and is a folder; nothing was created")
            if not target.exists():
                resolve_inside(path, name)
        if not (path / config.INDEX_FILE).exists() and len(generate(path)) > 1:
            check_folder(path)  # an unreadable sub-index refuses here, so does an _index file
    # rendered up front: a missing template fails before anything is created
    contents = {n: render(t, {}) for n, t in _FILES.items() if not (path / n).exists()}
    if dry_run:
        return _planned(path, contents)
    path.mkdir(parents=True, exist_ok=True)
    created: list[str] = []
    kept: list[str] = []
    for folder in _INIT_FOLDERS:
        target = path / folder
        if target.is_dir():
            kept.append(folder + "/")
        else:
            target.mkdir(parents=True)
            created.append(folder + "/")
    warnings: list[str] = []
    for name in _FILES:
        if name not in contents:
            kept.append(name)
        elif name != config.INDEX_FILE:  # the index lists the others: written last
            atomic_write(path / name, contents[name])
            created.append(name)
    if config.INDEX_FILE in contents:
        created.extend(_init_index(path, contents[config.INDEX_FILE], warnings))
    root = path.resolve()
    outer = next((p for p in root.parents if (p / config.INDEX_FILE).is_file()), None)
    if outer is not None:
        warnings.append(
            f"{root} is inside the vault {outer}; commands run below {root} now use the new vault"
        )
    if ".gitignore" in kept and not _ignores_state(path / ".gitignore"):
        warnings.append(
            f".gitignore (kept as it is) does not ignore {config.STATE_DIR}/: "
            f"add a line /{config.STATE_DIR}/ to keep runtime state out of git"
        )
    return InitResult(root, tuple(created), tuple(kept), tuple(warnings))


def _planned(path: Path, contents: dict[str, str]) -> InitResult:
    """What init would create in ``path`` and keep there, writing nothing."""
    folders = [f + "/" for f in _INIT_FOLDERS if not (path / f).is_dir()]
    kept = [f + "/" for f in _INIT_FOLDERS if (path / f).is_dir()]
    names = [n for n in contents if n != config.INDEX_FILE]
    kept += [n for n in _FILES if n not in contents]
    if config.INDEX_FILE in contents:
        wanted = _index_after(path, contents) if path.is_dir() else {config.INDEX_FILE: ""}
        exists, differ = _in_the_way(path, wanted)
        names += [config.INDEX_FILE] if differ else _with_folder(path, wanted, exists)
    return InitResult(path.resolve(), tuple(folders + names), tuple(kept))


def _index_after(path: Path, contents: dict[str, str]) -> dict[str, str]:
    """The index files init would write: generated, as init does, after the registry and
    the spec exist, on a scratch copy of the folder's notes (and Obsidian's settings,
    which name its templates folder); the folder itself is only read."""
    import shutil
    import tempfile

    from vaultkeeper.store.vault import iter_markdown, rel

    with tempfile.TemporaryDirectory(prefix="vaultkeeper-init-plan-") as tmp:
        shadow = Path(tmp) / "vault"
        shadow.mkdir()
        settings = path / config.OBSIDIAN_DIR
        if settings.is_dir() and not settings.is_symlink():
            shutil.copytree(settings, shadow / config.OBSIDIAN_DIR, symlinks=True)
        for note in iter_markdown(path):
            if note.is_file():
                target = shadow / rel(path, note)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(note, target)
        for name, text in contents.items():
            if name != config.INDEX_FILE:
                (shadow / name).parent.mkdir(parents=True, exist_ok=True)
                (shadow / name).write_text(text, encoding="utf-8")
        return generate(shadow)


def _init_index(vault: Path, template: str, warnings: list[str]) -> list[str]:
    """Write the index ``vaultkeeper index`` would generate; the files it created.

    Over the load budget the index splits into sub-indexes; should that mean rewriting a
    sub-index that already exists, init keeps it and writes the bare template instead.
    """
    # No writer lock, as for the rest of init: its lock file would be left in a fresh state/.
    wanted = generate(vault)
    exists, differ = _in_the_way(vault, wanted)
    if differ:
        atomic_write(vault / config.INDEX_FILE, template)
        warnings.append(
            f"{config.INDEX_FILE} has no entry lines yet: generating them would rewrite "
            f"{', '.join(differ)}; run `vaultkeeper index` when that is wanted"
        )
        return [config.INDEX_FILE]
    created = _with_folder(vault, wanted, exists)
    for name in created:
        if not name.endswith("/"):
            atomic_write(vault / name, wanted[name])
    return created


def _in_the_way(vault: Path, wanted: dict[str, str]) -> tuple[list[str], list[str]]:
    """Of the sub-indexes init would write, those that exist, and the files init would
    have to rewrite for them: a different text, or a sub-index of that name an older
    version left at the root (two of one name, and Obsidian's links turn ambiguous)."""
    subs = [n for n in wanted if n != config.INDEX_FILE]
    exists = [n for n in subs if (vault / n).exists()]
    differ = [n for n in exists if read_for_edit(vault / n, n)[0] != wanted[n]]
    differ += [n.rpartition("/")[2] for n in subs if (vault / n.rpartition("/")[2]).exists()]
    return exists, differ


def _with_folder(vault: Path, wanted: dict[str, str], exists: list[str]) -> list[str]:
    """The index files to write, sorted, the sub-indexes' folder named first when it is
    new: everything init adds at the vault's root is in the list it shows."""
    names = [n for n in sorted(wanted) if n not in exists]
    folder = config.SUBINDEX_DIR + "/"
    if any(n.startswith(folder) for n in names) and not (vault / config.SUBINDEX_DIR).is_dir():
        names.insert(0, folder)
    return names


def _holds_files(folder: Path) -> bool:
    """Whether ``folder`` holds something and none of a vault's marks: hidden names alone
    (``.git/`` of a fresh repository, ``.DS_Store``) are not content, ``.obsidian/`` is."""
    if any((folder / mark).exists() for mark in config.VAULT_MARKS):
        return False  # a vault already, or a partial one: init completes it
    with os.scandir(folder) as listing:
        return any(not e.name.startswith(".") or e.name == config.OBSIDIAN_DIR for e in listing)


def _ignores_state(gitignore: Path) -> bool:
    try:  # a regular file only: a cloned one may be a link to /dev/zero
        text = read_regular(gitignore).decode("utf-8", errors="replace")
    except ParseError:
        return False
    return any(line.strip() in _IGNORES_STATE for line in text.splitlines())
