"""Where one scan's time goes: a fresh process, the scan run in it, timers around phases.

    python bench/phases.py VAULT      # prints one JSON object of milliseconds

The scan is the console script's own path (vaultkeeper.entry, `scan --force`); each
phase is timed by wrapping the function that does it, so the phases are the real code.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

began = time.perf_counter()
from vaultkeeper import entry, model, registry, report, scan, scanrun, state, upkeep  # noqa: E402

imported = time.perf_counter()
spent: dict[str, float] = {}


def timed(owner: Any, name: str, phase: str) -> None:
    inner: Callable[..., Any] = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[phase] = spent.get(phase, 0.0) + time.perf_counter() - start

    setattr(owner, name, wrapper)


def main() -> None:
    timed(registry, "load_heads", "registry blocks")
    timed(scan, "held_out_candidates", "memory files")
    timed(model, "load_yaml", "PyYAML: its import and the parses")
    timed(report, "save_report", "report saved (JSON, fsync)")
    timed(state, "write_state", "state file writes (fsync)")
    timed(scanrun, "print_report", "report printed")  # scanrun prints for entry.main
    timed(upkeep, "duplicate_items", "possible duplicates")
    timed(upkeep, "find_pairs", "possible duplicates")
    timed(upkeep, "load_usage", "decay (stale lessons, unused skills)")
    timed(upkeep, "stale_entries", "decay (stale lessons, unused skills)")
    timed(upkeep, "unused_skills", "decay (stale lessons, unused skills)")
    sys.argv = ["vaultkeeper", "--vault", sys.argv[1], "scan", "--force"]
    start = time.perf_counter()
    stdout = sys.stdout
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - the report's lines go nowhere
    try:
        entry.main()
    except SystemExit:
        pass
    finally:
        sys.stdout.close()
        sys.stdout = stdout
    total = time.perf_counter() - start
    phases = dict(spent)
    phases["memory files"] -= spent.get("PyYAML: its import and the parses", 0.0)  # inside it
    rest = total - sum(phases.values())
    out = {"imports": imported - began, **phases}
    out["the rest (finding the vault, guards, lock, classifying)"] = rest
    out["in all, after the imports"] = total
    print(json.dumps({k: round(v * 1000, 1) for k, v in out.items()}))


if __name__ == "__main__":
    main()
