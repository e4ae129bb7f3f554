"""The report's "recall" section: whether the lessons the point-of-use recall served
were then used (store/adherence.py, read from the usage log when the report is shown).

Per lesson shown: times shown, of them followed by a citation (and by a read) in the
same session; noise (shown ``MOMENT_NOISE_MIN_SHOWN``+ times, never cited nor read
afterwards); and the lessons cited in sessions where the recall served others (missed).
Nothing while the recall has served nothing: a vault without ``--recall`` reads as
before.
"""

from __future__ import annotations

from typing import Any

from vaultkeeper import config
from vaultkeeper.store.adherence import Adherence
from vaultkeeper.store.secrets import served


def to_dict(found: Adherence) -> dict[str, Any]:
    """``recall`` in ``report --json``: lessons (most shown first), noise, missed."""
    return {
        "lessons": [
            {
                "path": served(s.target),
                "shown": s.shown,
                "cited_after": s.cited,
                "read_after": s.read,
                "noise": s.noise,
            }
            for s in found.lessons
        ],
        "noise": [served(s.target) for s in found.noise],
        "missed": [{"path": served(t), "sessions": n} for t, n in found.missed],
    }


def text_lines(found: Adherence) -> list[str]:
    """The section's lines for ``report``; none while nothing was shown."""
    if not found.lessons:
        return []
    shown = sum(s.shown for s in found.lessons)
    cited = sum(s.cited for s in found.lessons)
    out = [
        f"recall: {shown} showings of {len(found.lessons)} lessons, {cited} followed by a "
        f"citation; {len(found.noise)} noise, {len(found.missed)} missed"
    ]
    for s in found.lessons:
        flag = (
            f" -- noise: shown {config.MOMENT_NOISE_MIN_SHOWN}+ times, never used after; "
            "narrow its paths: or reword it"
            if s.noise
            else ""
        )
        out.append(
            f"shown     {s.target} -- shown {s.shown}, then cited {s.cited}, read {s.read}{flag}"
        )
    for target, sessions in found.missed:
        out.append(
            f"missed    {target} -- cited in {sessions} session{'s' if sessions != 1 else ''} "
            "where the recall served other lessons"
        )
    return out
