"""What this process wrote within the current hold of the writer lock (store.fsio).

A mark taken in one outermost hold is worth nothing in the next: another process may
have written between the two (vaultkeeper.index.delta relies on this).
"""

from __future__ import annotations

from vaultkeeper.store import fsio

Mark = tuple[int, int]  # (which outermost hold, how many paths were written by then)


def mark() -> Mark | None:
    """Where the current hold is in its writes; None when the lock is not held."""
    return (fsio._hold[0], len(fsio._written)) if fsio._hold[1] else None


def since(at: Mark) -> list[str] | None:
    """Every path written or moved since ``at``, within the same hold; else None."""
    if not fsio._hold[1] or fsio._hold[0] != at[0] or len(fsio._written) < at[1]:
        return None
    return list(fsio._written[at[1] :])
