"""``status`` rows for the point-of-use recall: per lesson served, how often it was
shown and how often a citation or a read followed; noise warns; one row for lessons
the recall missed (store/adherence.py). No rows while the recall has served nothing."""

from __future__ import annotations

from pathlib import Path

from vaultkeeper import config
from vaultkeeper.status.signals import OK, WARN, Signal
from vaultkeeper.store.adherence import adherence


def recall_signals(vault: Path) -> list[Signal]:
    found = adherence(vault)
    out: list[Signal] = []
    bound = f"cited or read after some showing, once shown {config.MOMENT_NOISE_MIN_SHOWN}+ times"
    for s in found.lessons:
        out.append(
            Signal(
                f"recall:{s.target}",
                f"recall {s.target}",
                s.shown,
                f"shown {s.shown}, then cited {s.cited}, read {s.read}",
                bound,
                WARN if s.noise else OK,
                "noise: narrow its paths: or reword it" if s.noise else "",
            )
        )
    if found.lessons:
        names = ", ".join(f"{t} ({n})" for t, n in found.missed)
        out.append(
            Signal(
                "recall:missed",
                "recall missed",
                len(found.missed),
                f"{len(found.missed)} lessons cited where not shown",
                "0",
                WARN if found.missed else OK,
                names,
            )
        )
    return out
