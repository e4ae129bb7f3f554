"""What a vault's own settings say: whether vaultkeeper laid it out, and its templates folder.

lint and index read these here so both treat a person's Obsidian vault the same way.
"""

from __future__ import annotations

import json
from pathlib import Path

from vaultkeeper import config


def is_ours(vault: Path) -> bool:
    """A vault laid out as vaultkeeper's: the spec file, the registry, or any patterns/*.md."""
    if (vault / config.SPEC_FILE).is_file() or (vault / config.REGISTRY_FILE).is_file():
        return True
    patterns = vault / config.PATTERNS_DIR
    return patterns.is_dir() and any(patterns.glob("*.md"))


def _setting(path: Path, key: str) -> str | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):  # absent, unreadable, not JSON: as if unset
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
