"""Find the vault, walk its files, resolve user-given paths safely inside it, and read
what its own settings say (laid out by vaultkeeper or not, its Obsidian templates folder:
lint and index treat a person's Obsidian vault alike through these).

pathlib is imported by the functions that make Paths: the throttled scan finds its vault
with ``locate`` (strings only) and never needs it. The writer lock's file, the one place
of the vault's own outside it, is store/fsio.py's.
"""

from __future__ import annotations

import errno
import os
import stat

from vaultkeeper import config
from vaultkeeper.errors import NoVaultError, UnsafePathError
from vaultkeeper.store.walk import inside, walk
from vaultkeeper.store.walk import links_out as links_out

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from pathlib import Path

# errors pathlib's is_file() reads as "no such file" (others it raises)
_ABSENT = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)


def find_vault(
    explicit: str | Path | None, env: Mapping[str, str], cwd: Path, *, obsidian: bool = False
) -> Path:
    """``--vault``, else ``$VAULTKEEPER_VAULT``, else the nearest ancestor holding _index.md
    (with ``obsidian``, else the nearest holding ``.obsidian/``)."""
    from pathlib import Path

    given = explicit if explicit is not None else env.get(config.ENV_VAULT) or None
    if given is not None:
        path = Path(given).expanduser()
        if not path.is_absolute():
            path = cwd / path
        if not path.is_dir():
            source = "--vault" if explicit is not None else config.ENV_VAULT
            raise NoVaultError(f"{path}: not a directory (from {source})")
        return path.resolve()
    here = cwd.resolve()
    for candidate in (here, *here.parents):
        if (candidate / config.INDEX_FILE).is_file():
            return candidate
    for candidate in (here, *here.parents):
        if (candidate / config.OBSIDIAN_DIR).is_dir():
            if obsidian:
                return candidate
            raise NoVaultError(_not_memory_vault(str(candidate)))
    holding = f"{config.INDEX_FILE} or {config.OBSIDIAN_DIR}/" if obsidian else config.INDEX_FILE
    raise NoVaultError(
        f"no vault found from {here}: pass --vault PATH, set {config.ENV_VAULT}, or run "
        f"inside a folder holding {holding} (`vaultkeeper init PATH` creates a new vault)"
    )


def require_vault(path: str | Path) -> None:
    """Refuse a folder holding none of config.VAULT_MARKS (``--vault ~`` by mistake)."""
    if not any(os.path.exists(os.path.join(path, name)) for name in config.VAULT_MARKS):
        if os.path.isdir(os.path.join(path, config.OBSIDIAN_DIR)):  # someone's own notes
            raise NoVaultError(_not_memory_vault(str(path)))
        raise NoVaultError(
            f"{path}: not a vault (no {config.INDEX_FILE}, {config.PROJECTS_DIR}/ or "
            f"{config.PATTERNS_DIR}/); create one with `vaultkeeper init`"
        )


def _not_memory_vault(path: str) -> str:
    """Why a command that needs a memory vault refuses an Obsidian vault: never `init` it."""
    return (
        f"{path}: an Obsidian vault without a memory vault's layout (no {config.INDEX_FILE}, "
        f"{config.PROJECTS_DIR}/ or {config.PATTERNS_DIR}/); lint, index, status and verify "
        "take it as it is"
    )


def locate(explicit: str | None, env: Mapping[str, str], cwd: str) -> str | None:
    """The path find_vault returns, as a string, without pathlib; None where find_vault
    would raise (or where a string could differ from it): ask find_vault then."""
    given = explicit if explicit is not None else env.get(config.ENV_VAULT) or None
    if given is not None:
        path = os.path.expanduser(given)
        if path[:1] == "~":  # no such user: pathlib raises its own error
            return None
        path = os.path.join(cwd, path)
        return os.path.realpath(path) if os.path.isdir(path) else None
    here = os.path.realpath(cwd)
    while True:
        try:
            if stat.S_ISREG(os.stat(os.path.join(here, config.INDEX_FILE)).st_mode):
                return here
        except OSError as exc:
            if exc.errno not in _ABSENT:
                return None
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def iter_markdown(
    vault: Path, under: Path | None = None, outside: list[str] | None = None
) -> Iterator[Path]:
    """Every ``.md`` file in the vault (or ``under`` a folder of it): one sorted walk,
    Obsidian's exclusions (store.walk); a symlink out of the vault goes to ``outside``."""
    return (p for p in iter_files(vault, under, outside) if p.suffix == ".md")


def iter_files(
    vault: Path, under: Path | None = None, outside: list[str] | None = None
) -> Iterator[Path]:
    """Every file of any type (attachments too), with the same exclusions as iter_markdown."""
    from pathlib import Path

    return (Path(p) for p in walk_files(vault, under, outside))


def walk_files(
    vault: str | Path, under: str | Path | None = None, outside: list[str] | None = None
) -> Iterator[str]:
    """iter_files as plain strings, in the same order (a Path per file costs more than
    the walk)."""
    return walk(str(vault), None if under is None else str(under), outside)


def rel(vault: Path, path: Path) -> str:
    """Vault-relative POSIX path for messages and reports."""
    try:
        return path.relative_to(vault).as_posix()
    except ValueError:
        return str(path)


def own_dir(vault: str | os.PathLike[str], name: str) -> str:
    """``vault/name`` (state/, .trash/), refused when a symlink there leads out of the vault
    (writes and trashed entries would go there); one lstat when it is no link."""
    path = os.path.join(os.fspath(vault), name)
    if not os.path.islink(path):
        return path
    root, real = os.path.realpath(vault), os.path.realpath(path)
    if not inside(root, real):
        raise UnsafePathError(
            f"{name}/: a symlink to {real}, outside the vault {root}; refused "
            f"(make {name}/ a real folder inside the vault)"
        )
    return path


def resolve_inside(vault: Path, target: str | Path) -> Path:
    """Resolve ``target`` (vault-relative or absolute); anything outside (``..``, elsewhere,
    a symlink out) is refused before anything is read or written."""
    from pathlib import Path

    root = vault.resolve()
    raw = Path(target).expanduser()
    candidate = raw if raw.is_absolute() else root / raw
    resolved = candidate.resolve()
    if resolved != root and root not in resolved.parents:
        raise UnsafePathError(f"{target}: resolves outside the vault {root}; refused")
    return resolved


def file_in(folder: Path, name: str) -> Path:
    """``folder/name`` for a name read from a (shared, committed) record, refused when it
    is absolute, climbs out with ``..``, is a symlink, or resolves outside ``folder``."""
    from pathlib import PurePosixPath

    parts = PurePosixPath(name).parts
    path = folder / name
    real, root = os.path.realpath(path), os.path.realpath(folder)
    if (
        not parts
        or PurePosixPath(name).is_absolute()
        or ".." in parts
        or os.path.islink(path)
        or os.path.islink(folder)
        or real == root
        or not inside(root, real)
    ):
        raise UnsafePathError(
            f"{path}: not a file of {folder.name}/ (absolute, .., or a symlink); refused"
        )
    return path


def is_memory_path(rel_path: str) -> bool:
    """True for files under ``projects/<p>/memory/`` (the held-out sub-tree)."""
    parts = rel_path.split("/")
    return len(parts) >= 4 and parts[0] == config.PROJECTS_DIR and parts[2] == config.MEMORY_SUBDIR


def is_ours(vault: Path) -> bool:
    """A vault laid out as vaultkeeper's: the spec file, the registry, or any patterns/*.md."""
    if (vault / config.SPEC_FILE).is_file() or (vault / config.REGISTRY_FILE).is_file():
        return True
    patterns = vault / config.PATTERNS_DIR
    return patterns.is_dir() and any(patterns.glob("*.md"))


def _setting(path: Path, key: str) -> str | None:
    import json

    from vaultkeeper.store.text import read_regular

    try:  # a regular file only: .obsidian/ syncs, a link to /dev/zero or a FIFO with it
        data = json.loads(read_regular(path).decode("utf-8"))
    except (ValueError, RecursionError):  # absent, unreadable, not JSON: as if unset
        return None
    value = data.get(key) if isinstance(data, dict) else None
    if not isinstance(value, str):
        return None
    folder = value.replace("\\", "/").strip().strip("/")
    return folder if folder and ".." not in folder.split("/") else None


def templates_folder(vault: Path, ours: bool | None = None) -> str | None:
    """The vault-relative folder of Obsidian templates (the Templates plugin's, else
    Templater's; on a vault not ours, else a top-level ``Templates``), or None."""
    settings = vault / config.OBSIDIAN_DIR
    for name, key in config.OBSIDIAN_TEMPLATE_SETTINGS:
        folder = _setting(settings / name, key)
        if folder is not None:
            return folder
    if ours if ours is not None else is_ours(vault):
        return None
    wanted = config.OBSIDIAN_TEMPLATES_DIR.casefold()
    try:
        names = sorted(p.name for p in vault.iterdir() if p.is_dir())
    except OSError:
        return None
    return next((n for n in names if n.casefold() == wanted), None)


def in_folder(rel_path: str, folder: str | None) -> bool:
    """``rel_path`` lies under ``folder``, case-insensitively as Obsidian compares."""
    if not folder:
        return False
    return rel_path.casefold().startswith(folder.casefold().rstrip("/") + "/")
