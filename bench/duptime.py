"""The duplicates pass alone, in one process: its time in the cases the benchmark measures.

    python bench/duptime.py VAULT [RUNS]

Reads the vault's registry blocks and memory files once (nothing is written), then times
``duppairs.cached_pairs`` (the pass as a scan runs it), the best and the median of RUNS:

- fresh: no scan cache, as in the first scan (``scan --fresh``);
- one block: one registry block's first sentence gained a word since the cache was kept
  (bench/session.py's ``block`` edit), its file read again (a copy of the registry's
  files in a temporary folder, edited);
- one lesson: one memory file's description gained a word (its project's group);
- nothing: a file was read again but no entry's words changed.

Each case's pairs are checked against ``find_pairs`` from scratch, and the bytes the pass
keeps in the scan cache are printed.
Whole-scan figures, with the rest of the scan beside them, are bench/phases.py's.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.registry import keptheads as cachedheads
from vaultkeeper.scan import cache as scancache
from vaultkeeper.scan import memory as memscan
from vaultkeeper.upkeep import sections as upkeep
from vaultkeeper.upkeep.duplicates import find_pairs


def _cache(kept: dict[str, Any] | None, rows: Any = None) -> scancache.ScanCache:
    cache = scancache.ScanCache(registry=rows, pairs=kept)
    cache.misses = 1  # a file was read again, as after a session: the pass runs
    return cache


def _edited(vault: Path, folder: Path) -> tuple[list[Any], Any]:
    """The heads of a copy of the registry whose first block's sentence starts with one
    more word, that file read again, the others from their rows; and the rows before."""
    shutil.copytree(vault / config.PATTERNS_DIR, folder / config.PATTERNS_DIR)
    first = scancache.ScanCache()
    first.limit = 1 << 62  # every file settled: kept as a scan keeps it
    heads, _ = cachedheads.load_heads(folder, first)
    path = heads[0].path
    lines = path.read_text(encoding="utf-8").split("\n")
    lines[heads[0].line] = "Again " + lines[heads[0].line]
    path.write_text("\n".join(lines), encoding="utf-8")
    again = scancache.ScanCache(registry=first.kept_registry)
    again.limit = first.limit
    return cachedheads.load_heads(folder, again)[0], first.kept_registry


def main() -> None:
    vault, runs = Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 5
    heads, _ = cachedheads.load_heads(vault, scancache.ScanCache())
    facts: list[Any] = []
    memscan.held_out_candidates(vault, dt.date.today(), [], facts=facts)
    first = _cache(None)
    upkeep.cached_pairs(heads, facts, first)
    kept = first.kept_pairs
    lessons = [n for n, f in enumerate(facts) if f.status != "archived"]
    fact = facts[lessons[0]]
    reworded = list(facts)
    reworded[lessons[0]] = fact._replace(description=f"{fact.description} again")
    folder = Path(tempfile.mkdtemp(prefix="duptime-"))
    edited, rows = _edited(vault, folder)
    shutil.rmtree(folder)  # the pass reads no file
    cases = {
        "fresh": (heads, facts, lambda: _cache(None)),
        "one block": (edited, facts, lambda: _cache(kept, rows)),
        "one lesson": (heads, reworded, lambda: _cache(kept)),
        "nothing": (heads, facts, lambda: _cache(kept)),
    }
    print(f"{len(heads)} blocks, {len(facts)} memory files")
    for case, (blocks, files, make) in cases.items():
        times = []
        for _ in range(runs):
            cache = make()
            start = time.process_time()
            pairs = upkeep.cached_pairs(blocks, files, cache)
            times.append(time.process_time() - start)
        assert pairs == find_pairs(upkeep.duplicate_items(blocks, files)), case
        times.sort()
        best, median = times[0] * 1000, times[len(times) // 2] * 1000
        print(f"{case:12} best {best:7.1f} ms  median {median:7.1f} ms  ({len(pairs)} pairs)")
    print(f"kept in the scan cache: {len(json.dumps(kept, separators=(',', ':')))} bytes")


if __name__ == "__main__":
    main()
