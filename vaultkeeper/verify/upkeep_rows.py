"""Rows beyond the spec's twelve: merge a duplicate, then undo it.

Run on a fixture vault in the row's temporary folder, like rows 4-8, 10 and 11: the
user's vault is never touched.
"""

from __future__ import annotations

from pathlib import Path

from vaultkeeper import config
from vaultkeeper.verify.common import FAIL, PASS, Context, scan, unforced

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
    from vaultkeeper.apply.batch import apply_decision
    from vaultkeeper.apply.decision import Decision
    from vaultkeeper.entries.create import init_vault
    from vaultkeeper.index.build import build_index
    from vaultkeeper.registry.blocks import find_block

    vault = ctx.tmp / "vault"
    init_vault(vault)
    day = ctx.now.date().isoformat()
    with (vault / config.REGISTRY_FILE).open("a", encoding="utf-8") as fh:
        fh.write(
            f"\n### {_KEEP}\nInject now into date logic in tests.\n\n"
            f"{config.COUNT_LABEL} 2\n{config.LAST_USED_LABEL} {day}\n"
            f"\n### {_DROP}\nPin the clock in tests: inject now into date logic.\n\n"
            f"{config.COUNT_LABEL} 1\n{config.LAST_USED_LABEL} {day}\n"
        )
    note = vault / config.PROJECTS_DIR / "p" / config.MEMORY_SUBDIR / "n.md"
    note.parent.mkdir(parents=True)
    note.write_text(
        "---\nname: n\ndescription: a note\ntype: memory\nstatus: active\nlabel: fact\n---\n"
        f"See [[registry#{_DROP}]].\n",
        encoding="utf-8",
    )
    build_index(vault)
    before = _files(vault)
    found = scan(vault, ctx.now, unforced(ctx.env), force=True).report
    pairs = [(p.a_name, p.b_name) for p in (found.duplicates if found else ())]
    if pairs != [(_KEEP, _DROP)]:
        return FAIL, f"the scan lists duplicates {pairs}, expected [({_KEEP}, {_DROP})]"
    receipt = f"{config.REGISTRY_FILE}:1"
    decision = Decision("merge", _KEEP, receipt, drop=_DROP)
    asked = apply_decision(vault, decision, ctx.now)  # no person: it must wait for one
    if asked.outcome != "ask" or _files(vault) != before:
        return FAIL, f"merge without a person's yes: {asked.outcome} ({asked.reason})"
    # the fixture's own stand-in for the person's yes (a temporary vault, never the user's)
    done = apply_decision(vault, decision, ctx.now, confirm=lambda plan: True)
    if done.outcome != "act":
        return FAIL, f"merge: {done.outcome} ({done.reason})"
    count = find_block(vault, _KEEP).count
    linked = f"[[{config.REGISTRY_FILE.removesuffix('.md')}#{_KEEP}]]" in note.read_text()
    if count != 3 or not linked:
        return FAIL, f"after merge: count {count} (expected 3), link moved to KEEP: {linked}"
    back = apply_decision(vault, Decision("restore", str(done.id)), ctx.now)
    if back.outcome != "act" or _files(vault) != before:
        return FAIL, f"restore {done.id}: {back.outcome}; files not as before ({back.reason})"
    return PASS, (
        "duplicate reported; merge waits for a person, then adds counts, moves links; "
        "restore byte for byte"
    )
