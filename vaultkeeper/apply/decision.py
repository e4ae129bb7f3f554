"""What the applier is asked to do (Decision) and what came of it (Outcome)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from vaultkeeper.errors import EXIT_ASK, EXIT_OK, EXIT_REFUSED

# The four gate outcomes, as the KIP policies name them.
ACT = "act"  # applied
ASK = "ask"  # waiting for a person
DEFER = "defer"  # a gate did not pass; nothing changed
SILENCE = "silence"  # deliberately left alone (or already done)
KEPT = "kept"  # an outcome's extra key: a person answered no, the entry stays as it is

_EXIT = {ACT: EXIT_OK, SILENCE: EXIT_OK, DEFER: EXIT_REFUSED, ASK: EXIT_ASK}


@dataclass(frozen=True)
class Decision:
    action: str
    target: str
    evidence: str | None = None
    result: str | None = None  # "pass" | "fail", for revalidate
    expect_hash: str | None = None
    reason: str | None = None
    skills_dir: Path | None = None
    by: str | None = None  # supersede: the newer entry that replaces the target
    drop: str | None = None  # merge: the entry folded into ``target``
    # revalidate --reopen: active -> held_out, holdout_until this many days from now
    reopen_days: int | None = None
    anchors: tuple[str, ...] = ()  # anchor: the PATH[::NAME] items to add


@dataclass(frozen=True)
class Outcome:
    action: str
    target: str
    outcome: str
    reason: str
    evidence: str | None = None
    id: str | None = None
    hash_before: str | None = None
    hash_after: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    diff: str = ""  # filled on --dry-run only
    dry_run: bool = False

    @property
    def exit_code(self) -> int:
        return _EXIT[self.outcome]

    def record(self) -> dict[str, Any]:
        """The journal line: the fixed keys first, then whatever applies."""
        out: dict[str, Any] = {
            "action": self.action,
            "target": self.target,
            "outcome": self.outcome,
            "reason": self.reason,
        }
        for key in ("evidence", "id", "hash_before", "hash_after"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        out.update({k: v for k, v in self.extra.items() if v is not None})
        return out

    def to_dict(self) -> dict[str, Any]:
        out = self.record()
        out["exit_code"] = self.exit_code
        if self.dry_run:
            out["dry_run"] = True
            out["diff"] = self.diff
        return out

    def with_reason(self, reason: str) -> Outcome:
        return replace(self, reason=reason)


def outcome_for(decision: Decision, outcome: str, reason: str, **kw: Any) -> Outcome:
    """An Outcome echoing the decision's action, target and evidence."""
    kw.setdefault("evidence", decision.evidence)
    extra = dict(kw.pop("extra", {}) or {})
    if decision.result is not None:
        extra.setdefault("result", decision.result)
    return Outcome(decision.action, decision.target, outcome, reason, extra=extra, **kw)


def worst_exit(outcomes: list[Outcome]) -> int:
    """A batch waits for a person if any decision does, else fails if any was refused."""
    codes = {o.exit_code for o in outcomes}
    for code in (EXIT_ASK, EXIT_REFUSED):
        if code in codes:
            return code
    return EXIT_OK
