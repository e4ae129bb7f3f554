"""``status``: the vault's health signals at a glance; ``hooks status``: what runs it.

Each signal is a figure, the healthy bound and a verdict (ok / warn / fail), after
KIP's health-signal table. Candidates come from the last saved report (the scan's
job, not ours to redo), findings from the linter, the rest from state/ and _index.md.

The signals are measured in vaultkeeper.status.signals and ``hooks status`` lives in
vaultkeeper.hosts.where; their public names are importable from here as before.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vaultkeeper.hosts.where import Where as Where
from vaultkeeper.hosts.where import fallback_log as fallback_log
from vaultkeeper.hosts.where import last_completed as last_completed
from vaultkeeper.hosts.where import where_installed as where_installed
from vaultkeeper.status.merges import merge_signal
from vaultkeeper.status.native import native_signals
from vaultkeeper.status.recall import recall_signals
from vaultkeeper.status.signals import FAIL as FAIL
from vaultkeeper.status.signals import NOT_YET as NOT_YET
from vaultkeeper.status.signals import OK as OK
from vaultkeeper.status.signals import WARN as WARN
from vaultkeeper.status.signals import Signal as Signal
from vaultkeeper.status.signals import age_text as age_text
from vaultkeeper.status.signals import (
    candidates_signals,
    index_signal,
    iso_utc,
    journal_signal,
    lint_signals,
    overdue_signal,
    queue_signal,
    scan_age_signal,
    uses_signal,
)

STEPS = (
    "report", "held-out dates", "queue", "lint", "scan age", "journal", "index", "auto memory",
    "recall",
)  # fmt: skip


@dataclass(frozen=True)
class Status:
    vault: str
    generated_at: str
    signals: tuple[Signal, ...]

    @property
    def verdict(self) -> str:
        verdicts = {s.verdict for s in self.signals}
        for verdict in (FAIL, WARN, NOT_YET):
            if verdict in verdicts:
                return verdict
        return OK

    def to_dict(self) -> dict[str, Any]:
        return {
            "vault": self.vault,
            "generated_at": self.generated_at,
            "verdict": self.verdict,
            "signals": [s.to_dict() for s in self.signals],
        }


def vault_status(
    vault: Path, now: dt.datetime, progress: Callable[[str], None] | None = None
) -> Status:
    """Measure every signal; ``progress`` hears each step's name before it runs."""
    from vaultkeeper.scan.last import last_report

    step = progress or (lambda _name: None)
    step(STEPS[0])
    saved = last_report(vault)
    signals = candidates_signals(saved.report, saved.note, now)
    step(STEPS[1])
    signals.append(overdue_signal(saved.report, now))
    step(STEPS[2])
    signals.append(queue_signal(vault))
    step(STEPS[3])
    signals.extend(lint_signals(vault, now))
    step(STEPS[4])
    signals.append(scan_age_signal(vault, now))
    step(STEPS[5])
    signals.append(journal_signal(vault))
    signals.append(uses_signal(vault))
    step(STEPS[6])
    signals.append(index_signal(vault))
    signals.append(merge_signal(vault))  # what a git merge left in vaultkeeper's files
    step(STEPS[7])
    signals.extend(native_signals(vault, now))
    step(STEPS[8])
    signals.extend(recall_signals(vault))  # the point-of-use recall's adherence
    return Status(str(vault), iso_utc(now), tuple(signals))
