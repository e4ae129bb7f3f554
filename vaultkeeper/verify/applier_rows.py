"""Rows that run the applier on fixture vaults: decision loop (10), round-trip (11)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.verify.common import DAY, FAIL, PASS, Context, fixture, scan, unforced


def _apply(vault: Path, now: dt.datetime, action: str, target: str, **kw: Any) -> Any:
    from vaultkeeper.apply.batch import apply_decision
    from vaultkeeper.apply.decision import Decision

    return apply_decision(vault, Decision(action, target, **kw), now, confirm=None)


def _status(vault: Path, rel_path: str) -> str | None:
    from vaultkeeper.store.model import read_note

    return read_note(vault, vault / rel_path).get_str("status")


def decision_loop(ctx: Context) -> tuple[str, str]:
    vault, now = fixture(ctx), ctx.now
    receipt = f"{config.REGISTRY_FILE}:1"
    memory = f"{config.PROJECTS_DIR}/p/{config.MEMORY_SUBDIR}/baz.md"
    steps = [
        ("promote without a receipt", _apply(vault, now, "promote", "foo"), "defer"),
        ("promote with a receipt", _apply(vault, now, "promote", "foo", evidence=receipt), "act"),
        ("prune with no person", _apply(vault, now, "prune", "bar"), "ask"),
        (
            "re-check before the hold-out ends",
            _apply(vault, now - 30 * DAY, "revalidate", memory, result="pass", evidence=receipt),
            "defer",
        ),
        (
            "re-check with the condition held off",
            _apply(vault, now, "revalidate", memory, result="pass", evidence=receipt),
            "act",
        ),
    ]
    for what, outcome, want in steps:
        if outcome.outcome != want:
            return FAIL, f"{what}: {outcome.outcome}, expected {want} ({outcome.reason})"
    if b"### bar" not in (vault / config.REGISTRY_FILE).read_bytes():
        return FAIL, "prune removed ### bar without a person's yes"
    if _status(vault, memory) != "active":
        return FAIL, f"{memory}: status {_status(vault, memory)} after a passed re-check"
    return PASS, "promote needs a receipt, prune asks a person, held-out waits and re-checks"


def round_trip(ctx: Context) -> tuple[str, str]:
    """teach (new) -> schedule (run_scan) -> scan (classify) -> decide (apply)."""
    from vaultkeeper.entries.create import init_vault, new_entry

    vault = ctx.tmp / "vault"
    init_vault(vault)
    today = ctx.now.date()
    made = [
        new_entry(vault, "memory", n, f"lesson {n}", project="p", label=lab, today=today)
        for n, lab in (("kept", "inferred"), ("dropped", "rule"))
    ]
    for entry in made:
        if _status(vault, entry.path) != "held_out":
            return (
                FAIL,
                f"new lesson {entry.path} starts {_status(vault, entry.path)}, not held_out",
            )
    later = ctx.now + (config.HOLDOUT_DAYS + 1) * DAY
    outcome = scan(vault, later, unforced(ctx.env))
    due = sorted(c.name for c in outcome.report.held_out) if outcome.report else []
    if due != ["dropped", "kept"]:
        return FAIL, f"after the hold-out the scan lists {due}, expected [dropped, kept]"
    receipt = f"{config.INDEX_FILE}:1"
    kept, dropped = made[0].path, made[1].path
    moves = [
        (kept, "revalidate", {"result": "pass", "evidence": receipt}, "active"),
        (dropped, "revalidate", {"result": "fail", "evidence": receipt}, "archived"),
        (dropped, "reactivate", {"evidence": receipt}, "active"),
    ]
    for path, action, kw, want in moves:
        result = _apply(vault, later, action, path, **kw)
        status = _status(vault, path)
        if status != want:
            return FAIL, f"{action} {path}: status {status}, expected {want} ({result.reason})"
    return PASS, "held_out -> active (pass); held_out -> archived (fail) -> active (evidence)"
