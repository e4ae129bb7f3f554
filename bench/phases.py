"""Where one scan's time goes: a fresh process, the scan run in it, timers around phases.

    python bench/phases.py VAULT [--fresh | --no-store] [--edit lesson,count|block [--turn N]]

The scan is the console script's own path (vaultkeeper.entry, `scan --force`); each
phase is timed by wrapping the function that does it, so the phases are the real code.
``--edit`` makes a session's edits first (bench/session.py; untimed, undone at the end);
``--fresh`` scans without the scan cache (and rebuilds it); ``--no-store`` deletes
``state/vaultkeeper.db`` first (untimed), as a vault's first scan finds it.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

began = time.perf_counter()
from vaultkeeper import entry  # noqa: E402
from vaultkeeper.registry import keptheads as cachedheads  # noqa: E402
from vaultkeeper.report import candidates as report  # noqa: E402
from vaultkeeper.scan import cache as scancache  # noqa: E402
from vaultkeeper.scan import memory as memscan  # noqa: E402
from vaultkeeper.scan import reportrow  # noqa: E402
from vaultkeeper.scan import statefile as state  # noqa: E402
from vaultkeeper.store import model  # noqa: E402
from vaultkeeper.upkeep import sections as upkeep  # noqa: E402

imported = time.perf_counter()
spent: dict[str, float] = {}
YAML = "PyYAML: its import and the parses"
MEMORY = "memory files"
DUPLICATES = "possible duplicates"
DECAY = "decay (stale lessons, unused skills)"


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
    vault, flags = sys.argv[1], sys.argv[2:]
    timed(scancache, "load", "scan rows read")
    timed(scancache, "save", "scan rows written (those that changed)")
    timed(cachedheads, "load_heads", "registry blocks")
    timed(memscan, "held_out_candidates", MEMORY)
    timed(model, "load_yaml", YAML)
    timed(upkeep, "cached_pairs", DUPLICATES)
    timed(upkeep, "load_usage", DECAY)
    timed(upkeep, "stale_entries", DECAY)
    timed(upkeep, "unused_skills", DECAY)
    timed(reportrow, "inputs", "report's inputs (a stat of each file)")
    timed(reportrow, "keep", "report's row written")
    timed(state, "write_state", "state file writes (fsync)")
    timed(report, "print_report", "report printed")  # scan/classify.py imports it when it prints
    session = None
    if "--edit" in flags:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from session import Session

        turn = int(flags[flags.index("--turn") + 1]) if "--turn" in flags else 0
        session = Session(Path(vault), *flags[flags.index("--edit") + 1].split(","), turn=turn)
        session()
    if "--no-store" in flags:
        for name in ("vaultkeeper.db", "vaultkeeper.db-wal", "vaultkeeper.db-shm"):
            (Path(vault) / "state" / name).unlink(missing_ok=True)
    sys.argv = ["vaultkeeper", "--vault", vault, "scan", "--force"]
    sys.argv += ["--fresh"] if "--fresh" in flags else []
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
        if session is not None:
            session.restore()
    total = time.perf_counter() - start
    phases = dict(spent)
    phases[MEMORY] = phases.get(MEMORY, 0.0) - spent.get(YAML, 0.0)  # inside it
    rest = total - sum(phases.values())
    out = {"imports": imported - began, **phases}
    out["the rest (finding the vault, guards, lock, classifying)"] = rest
    out["in all, after the imports"] = total
    print(json.dumps({k: round(v * 1000, 1) for k, v in out.items()}))


if __name__ == "__main__":
    main()
