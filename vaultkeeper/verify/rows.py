"""verify's rows in the spec's order, and which of them start early or check a memory
vault's own setup; the rows themselves: verify/setup_rows.py, scanner_rows.py,
applier_rows.py (what they share: verify/common.py).
"""

from __future__ import annotations

from collections.abc import Callable

from vaultkeeper.verify.applier_rows import decision_loop, merge, round_trip, supersession
from vaultkeeper.verify.common import Context, Row
from vaultkeeper.verify.scanner_rows import (
    atomic_write,
    classify_correct,
    reentry_guard,
    scheduler_runs,
    stale_recovery,
    start_atomic_write,
    start_scheduler_runs,
    throttle,
)
from vaultkeeper.verify.setup_rows import (
    format_sfs,
    frontmatter_valid,
    store_present,
    trigger_registered,
)

ROWS: tuple[tuple[str, Row], ...] = (
    ("store present", store_present),
    ("frontmatter valid", frontmatter_valid),
    ("scheduler runs", scheduler_runs),
    ("classify correct", classify_correct),
    ("throttle", throttle),
    ("re-entry guard", reentry_guard),
    ("stale recovery", stale_recovery),
    ("atomic write", atomic_write),
    ("trigger registered", trigger_registered),
    ("decision loop", decision_loop),
    ("round-trip", round_trip),
    ("format (SFS)", format_sfs),
    ("supersession", supersession),
    ("merge", merge),  # a duplicate merged, then restored
)


# rows whose time is mostly a child Python's start: started before row 1, so that start
# overlaps the rows before them (each still in its own folder); at its turn each finishes
STARTED_EARLY: dict[Row, Callable[[Context], Callable[[], tuple[str, str]]]] = {
    scheduler_runs: start_scheduler_runs,
    atomic_write: start_atomic_write,
}

# the rows that check a memory vault's own setup: on someone's Obsidian vault (no memory
# layout), SKIP -- nobody is to run `init` in their personal notes to make verify pass
MEMORY_ROWS = frozenset({store_present, frontmatter_valid, scheduler_runs, trigger_registered})
