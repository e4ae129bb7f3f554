"""verify's rows on the applier (10 decision loop, 11 round-trip, 13 supersession, 14 a
duplicate merged, then restored): each on a fixture of its own in a temporary folder.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.verify.common import (
    DAY,
    FAIL,
    PASS,
    Context,
    fixture,
    scan,
    seed,
    unforced,
)

_RECEIPT = f"{config.INDEX_FILE}:1"


def _apply(vault: Path, now: dt.datetime, action: str, target: str, **kw: Any) -> Any:
    from vaultkeeper.apply.batch import apply_decision
    from vaultkeeper.apply.decision import Decision

    confirm = kw.pop("confirm", None)
    return apply_decision(vault, Decision(action, target, **kw), now, confirm=confirm)


def _status(vault: Path, rel_path: str) -> str | None:
    from vaultkeeper.store.model import read_note

    return read_note(vault, vault / rel_path).get_str("status")


def _lessons(ctx: Context, *names: str, label: str | None = None) -> tuple[Path, list[Any]]:
    """A new vault in the row's folder with a held-out lesson of project p per name."""
    from vaultkeeper.entries.create import new_entry
    from vaultkeeper.entries.init import init_vault

    vault = ctx.tmp / "vault"
    init_vault(vault)
    today = ctx.now.date()
    made = [
        new_entry(vault, "memory", n, f"lesson {n}", project="p", label=label or lab, today=today)
        for n, lab in zip(names, ("inferred", "rule"), strict=False)
    ]
    return vault, made


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
    vault, made = _lessons(ctx, "kept", "dropped")
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
    kept, dropped = made[0].path, made[1].path
    moves = [
        (kept, "revalidate", {"result": "pass"}, "active"),
        (dropped, "revalidate", {"result": "fail"}, "archived"),
        (dropped, "reactivate", {}, "active"),
    ]
    for path, action, kw, want in moves:
        result = _apply(vault, later, action, path, evidence=_RECEIPT, **kw)
        status = _status(vault, path)
        if status != want:
            return FAIL, f"{action} {path}: status {status}, expected {want} ({result.reason})"
    return PASS, "held_out -> active (pass); held_out -> archived (fail) -> active (evidence)"


def supersession(ctx: Context) -> tuple[str, str]:
    """supersede -> OLD archived and linked, never served as held-out, lint clean ->
    reactivate -> both files byte for byte as before."""
    from vaultkeeper.lint import lint_vault
    from vaultkeeper.scan.classify import classify
    from vaultkeeper.store.model import read_note
    from vaultkeeper.upkeep.supersession import is_superseded, supersedes

    vault, (old, new) = _lessons(ctx, "old-way", "new-way", label="rule")
    files = [vault / old.path, vault / new.path]
    before = [f.read_bytes() for f in files]

    def run(action: str, by: str | None = None) -> str:
        outcome = _apply(vault, ctx.now, action, old.path, evidence=_RECEIPT, by=by)
        return "" if outcome.outcome == "act" else f"{action}: {outcome.outcome} ({outcome.reason})"

    problem = run("supersede", by=new.path)
    if problem:
        return FAIL, problem
    old_note, new_note = (read_note(vault, f) for f in files)
    if not is_superseded(old_note) or old_note.get_str("status") != "archived":
        return FAIL, f"{old.path}: not marked superseded and archived"
    if old.path.removesuffix(".md") not in supersedes(new_note):
        return FAIL, f"{new.path}: does not list {old.path} under supersedes"
    later = ctx.now + (config.HOLDOUT_DAYS + 1) * DAY
    if old.path in [c.path for c in classify(vault, later).held_out]:
        return FAIL, f"the scan still lists superseded {old.path} as held-out"
    found = [f"{f.path}:{f.line} {f.code}" for f in lint_vault(vault, select=["VK6"]).findings]
    if found:
        return FAIL, f"lint after supersede: {', '.join(found)}"
    problem = run("reactivate")
    if problem:
        return FAIL, problem
    if [f.read_bytes() for f in files] != before:
        return FAIL, "reactivate did not restore both files byte for byte"
    return PASS, "supersede links both sides and archives the old; reactivate undoes every byte"


_KEEP, _DROP = "pin-test-clock", "pin-the-clock-in-tests"


def _files(root: Path) -> dict[str, bytes]:
    skip = (config.STATE_DIR + "/", config.TRASH_DIR + "/")
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.relative_to(root).as_posix().startswith(skip)
    }


def merge(ctx: Context) -> tuple[str, str]:
    """A duplicate pair is reported; merge waits for a person's yes (ask), then adds
    counts and moves links; restore undoes it."""
    from vaultkeeper.index.build import build_index
    from vaultkeeper.registry.blocks import find_block

    vault, _ = _lessons(ctx)
    day = ctx.now.date()
    blocks = [
        (_KEEP, "Inject now into date logic in tests.", 2, day),
        (_DROP, "Pin the clock in tests: inject now into date logic.", 1, day),
    ]
    front = "---\nname: n\ndescription: a note\ntype: memory\nstatus: active\nlabel: fact\n---\n"
    note = seed(vault, blocks, "n.md", f"{front}See [[registry#{_DROP}]].\n")
    build_index(vault)
    before = _files(vault)
    found = scan(vault, ctx.now, unforced(ctx.env), force=True).report
    pairs = [(p.a_name, p.b_name) for p in (found.duplicates if found else ())]
    if pairs != [(_KEEP, _DROP)]:
        return FAIL, f"the scan lists duplicates {pairs}, expected [({_KEEP}, {_DROP})]"
    receipt = f"{config.REGISTRY_FILE}:1"
    asked = _apply(vault, ctx.now, "merge", _KEEP, evidence=receipt, drop=_DROP)  # no person
    if asked.outcome != "ask" or _files(vault) != before:
        return FAIL, f"merge without a person's yes: {asked.outcome} ({asked.reason})"
    # the fixture's own stand-in for the person's yes (a temporary vault, never the user's)
    yes = {"evidence": receipt, "drop": _DROP, "confirm": lambda plan: True}
    done = _apply(vault, ctx.now, "merge", _KEEP, **yes)
    if done.outcome != "act":
        return FAIL, f"merge: {done.outcome} ({done.reason})"
    count = find_block(vault, _KEEP).count
    linked = f"[[{config.REGISTRY_FILE.removesuffix('.md')}#{_KEEP}]]" in note.read_text()
    if count != 3 or not linked:
        return FAIL, f"after merge: count {count} (expected 3), link moved to KEEP: {linked}"
    back = _apply(vault, ctx.now, "restore", str(done.id))
    if back.outcome != "act" or _files(vault) != before:
        return FAIL, f"restore {done.id}: {back.outcome}; files not as before ({back.reason})"
    return PASS, (
        "duplicate reported; merge waits for a person, then adds counts, moves links; "
        "restore byte for byte"
    )
