"""A native memory's counters, kept in the vault in the registry's block format.

``### <project>/<file>`` blocks in ``patterns/native-memory.md``, with the same
``**success count:**`` and ``**last used:**`` lines as every pattern, so ``use``,
``ingest``, ``status``, the scanner and git's merge driver read them unchanged and they
travel with the vault; never in Claude Code's files. A block is written the first time
a session uses its memory (a memory nobody used has no block, and is "never used").
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.registry.blocks import load_heads
from vaultkeeper.store.fsio import atomic_write, patient_lock
from vaultkeeper.store.secrets import served
from vaultkeeper.store.walk import links_out

HEADER = (
    "# Native memory counters\n\n"
    "One `### <project>/<file>` block per Claude Code auto memory a session used,\n"
    "written by `vaultkeeper ingest`; the memory itself stays in Claude Code's folder.\n"
)


def block_name(project: str, file: str) -> str:
    return f"{project}/{file}"


def counters(vault: Path) -> dict[str, tuple[int | None, dt.date | None, str | None]]:
    """(success count, last used, promoted) of every native block, by block name."""
    path = vault / config.NATIVE_REGISTRY_FILE
    if not path.is_file():
        return {}
    heads, _ = load_heads(vault, [path])
    return {h.name: (h.count, h.last_used, h.promoted) for h in heads}


def _block(name: str, description: str | None, today: dt.date) -> str:
    about = " ".join((description or "(no description)").split())[:200]
    return (
        f"\n### {name}\n"
        f"Claude Code auto memory: {served(about)}\n\n"
        f"{config.COUNT_LABEL} 0\n"
        f"{config.LAST_USED_LABEL} {today.isoformat()}\n"
    )


def ensure_blocks(
    vault: Path,
    wanted: Mapping[str, str | None],
    today: dt.date,
    waiting: Callable[[], None] | None = None,
) -> list[str]:
    """Append a block for each name in ``wanted`` (name -> description) that has none;
    the names added. Every byte already in the file stays. (``waiting``: fsio.patient_lock.)"""
    with patient_lock(vault, waiting):
        have = counters(vault)
        # a name is one line, always: a line break in it would write a block of its own
        missing = [n for n in sorted(wanted) if n not in have and n.isprintable()]
        if not missing:
            return []
        path = vault / config.NATIVE_REGISTRY_FILE
        if links_out(str(vault.resolve()), str(path)):  # committed as a link out: not ours
            return []
        text = path.read_text(encoding="utf-8") if path.is_file() else HEADER
        if not text.endswith("\n"):
            text += "\n"
        text += "".join(_block(n, wanted[n], today) for n in missing)
        atomic_write(path, text)
        return missing
