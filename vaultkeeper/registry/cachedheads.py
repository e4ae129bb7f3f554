"""Registry block heads for a scan, from the scan cache when a registry file is unchanged.

A scan needs of each ``### name`` block only what keptheads.py keeps of it, per
registry file, in the scan cache (vaultkeeper.scan.cache). A changed file is read again
where it changed (registrydelta.py), and what the scan needs of it is kept for the next.
"""

from __future__ import annotations

from vaultkeeper.registry.keptheads import CachedHead
from vaultkeeper.registry.lines import registry_files
from vaultkeeper.store.model import Problem

TYPE_CHECKING = False
if TYPE_CHECKING:
    import datetime as dt
    from pathlib import Path

    from vaultkeeper.registry.keptheads import Head as Head
    from vaultkeeper.scan.cache import ScanCache


def load_heads(vault: Path, cache: ScanCache) -> tuple[list[Head], list[Problem]]:
    """registry.load_heads, reading only the registry files that changed since the cache."""
    from vaultkeeper.store.model import ParseError, decode, read_regular
    from vaultkeeper.store.vault import rel

    heads: list[Head] = []
    problems: list[Problem] = []
    dates: dict[str, dt.date | None] = {}
    for path in registry_files(vault):
        rel_path = rel(vault, path)
        entry, key = cache.registry(rel_path, str(path))
        if entry is not None:
            try:
                heads.extend([CachedHead(path, rel_path, head, dates) for head in entry[1]])
            except (TypeError, ValueError):
                pass  # not as this version keeps them: read the file
            else:
                cache.keep_registry_entry(rel_path, entry)
                continue
        try:
            text = decode(read_regular(path))  # a FIFO named *.md is refused, not waited on
        except ParseError as exc:
            problems.append(Problem(rel_path, exc.line, exc.reason))
            continue
        from vaultkeeper.registry.delta import reread

        found, kept, shape = reread(path, rel_path, text, cache.registry_before(rel_path), dates)
        heads.extend(found)
        cache.keep_registry(rel_path, key, kept, shape)
    return heads, problems
