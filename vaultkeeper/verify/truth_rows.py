"""Rows beyond the spec's twelve, that keep memory true: supersession."""

from __future__ import annotations

from vaultkeeper import config
from vaultkeeper.verify.common import DAY, FAIL, PASS, Context


def supersession(ctx: Context) -> tuple[str, str]:
    """supersede -> OLD archived and linked, never served as held-out, lint clean ->
    reactivate -> both files byte for byte as before."""
    from vaultkeeper.apply.batch import apply_decision
    from vaultkeeper.apply.decision import Decision
    from vaultkeeper.entries.create import init_vault, new_entry
    from vaultkeeper.lint import lint_vault
    from vaultkeeper.scan.classify import classify
    from vaultkeeper.store.model import read_note
    from vaultkeeper.upkeep.supersession import is_superseded, supersedes

    vault = ctx.tmp / "vault"
    init_vault(vault)
    today = ctx.now.date()
    old, new = (
        new_entry(vault, "memory", name, f"lesson {name}", project="p", label="rule", today=today)
        for name in ("old-way", "new-way")
    )
    files = [vault / old.path, vault / new.path]
    before = [f.read_bytes() for f in files]
    receipt = f"{config.INDEX_FILE}:1"

    def run(action: str, by: str | None = None) -> str:
        outcome = apply_decision(vault, Decision(action, old.path, receipt, by=by), ctx.now)
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
    due = [c.path for c in classify(vault, later).held_out]
    if old.path in due:
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
