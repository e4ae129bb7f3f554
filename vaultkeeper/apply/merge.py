"""``apply merge KEEP DROP``: fold a duplicate into the entry that stays, on a person's yes.

Merging takes DROP out of the vault, so it is a deletion and is gated as ``apply prune``
is (prune.py): with a terminal the caller passes ``confirm`` and only a ``y``/``yes``
typed there merges; without one (``confirm=None``: an agent's shell, a hook, a batch
piped in) the request is queued for ``vaultkeeper review`` and the outcome is ``ask``.
No flag, environment variable or batch field stands in for the person. The yes is bound
to the exact diff the person was shown (merge_plan.MergePlan.digest): if anything in it
changed before the write, nothing is merged. That the scan listed the pair as possible
duplicates is shown to the person; it is never a yes by itself.

What it writes (merge_plan.py): KEEP gains DROP's text, counts add up, links follow.
DROP goes to ``.trash/<id>/`` with the original and merged bytes of every file edited,
so ``vaultkeeper restore <id>`` takes the merge back off (unmerge.py), even after a
later ``use`` of KEEP. Journaled, and it takes an evidence receipt.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.apply import journal, queue
from vaultkeeper.apply.decision import ACT, ASK, KEPT, SILENCE, Decision, Outcome, outcome_for
from vaultkeeper.apply.edits import check_index, reindex
from vaultkeeper.apply.gate import check_receipt, slug
from vaultkeeper.apply.merge_plan import MergePlan, as_bytes, plan
from vaultkeeper.apply.prune import Confirm, NoAnswer
from vaultkeeper.apply.trash import with_keywords
from vaultkeeper.apply.unmerge import digest
from vaultkeeper.errors import GateRefused, NotFoundError
from vaultkeeper.store.fsio import atomic_write, move, writer_lock
from vaultkeeper.store.vault import own_dir, rel, resolve_inside

NEEDS_PERSON = "merging takes {drop} out of the vault: it needs a person's yes at a terminal"


def merge(
    vault: Path,
    decision: Decision,
    now: dt.datetime,
    *,
    dry_run: bool = False,
    confirm: Confirm | None = None,
    **_: object,
) -> Outcome:
    """Gate, plan, ask, and carry out one merge (see the module docstring)."""
    receipt = check_receipt(vault, decision.evidence)
    try:
        found = plan(vault, decision)  # read only; carry_out plans again under the lock
    except NotFoundError:
        done = journal.last_act(
            vault, "merge", decision.target, lambda r: r.get("drop") == decision.drop
        )
        if done is None:
            raise
        return outcome_for(
            decision, SILENCE, f"already applied: merged on {done.get('ts')}", id=done.get("id")
        )
    decision = replace(decision, target=found.keep.target, drop=found.drop.target)
    if dry_run:
        what = f"merge {found.drop.target} into {found.keep.target}; {found.links} link(s)"
        return outcome_for(
            decision, ACT, f"{what} rewritten", diff=found.diff_text, dry_run=True,
            extra={"drop": found.drop.target},
        )  # fmt: skip
    own_dir(vault, config.TRASH_DIR)  # refused before anyone is asked, not after a yes
    seen = found.digest
    if confirm is None:
        why = NEEDS_PERSON.format(drop=found.drop.target)
        return queued(vault, decision, found.drop.target, seen, why, now)
    answer = confirm(found)
    if isinstance(answer, NoAnswer):
        return queued(vault, decision, found.drop.target, seen, answer.why, now)
    if answer is not True:
        why = answer if isinstance(answer, str) and answer else "the person did not answer yes"
        return outcome_for(
            decision, SILENCE, f"kept both: {why}", hash_before=seen,
            extra={"drop": found.drop.target, KEPT: True},
        )  # fmt: skip
    via = str(getattr(confirm, "confirmed_via", config.CONFIRMED_VIA_TERMINAL))
    return carry_out(vault, decision, now, seen, "a person answered yes", via, receipt)


def queued(
    vault: Path, decision: Decision, drop: str, seen: str, reason: str, now: dt.datetime
) -> Outcome:
    """Nothing is merged: the request waits for ``vaultkeeper review`` (ask)."""
    with writer_lock(vault):
        known = queue.find_pending(vault, decision, decision.target)
        ask = known or queue.enqueue(vault, decision, decision.target, reason, seen, now)
    state = "already queued" if known else "queued"
    return outcome_for(
        decision, ASK,
        f"{reason}; a person must run `vaultkeeper review` ({state} as {ask.id})",
        id=ask.id, hash_before=seen, extra={"drop": drop},
    )  # fmt: skip


def carry_out(
    vault: Path,
    decision: Decision,
    now: dt.datetime,
    expected: str,
    why: str,
    via: str = config.CONFIRMED_VIA_TERMINAL,
    receipt: str | None = None,
) -> Outcome:
    """Merge after a person's yes, if the diff is still exactly what they were shown."""
    receipt = receipt if receipt is not None else check_receipt(vault, decision.evidence)
    with writer_lock(vault):
        found = plan(vault, decision)
        if found.digest != expected:
            raise GateRefused(
                f"{found.keep.target} / {found.drop.target} changed after the merge was "
                "shown; nothing merged, decide again"
            )
        check_index(vault)
        trash_id = journal.new_id(now)
        where = _carry_out(vault, found, trash_id)
        _answer_asks(vault, found, now)
        return reindex(vault, outcome_for(
            replace(decision, target=found.keep.target, drop=found.drop.target), ACT,
            f"{why}: merged {found.drop.target} into {found.keep.target}; {found.links} "
            f"link(s) rewritten; {found.drop.target} moved to {where}/ "
            f"(undo: `vaultkeeper restore {trash_id}`)",
            evidence=receipt, id=trash_id,
            extra={"drop": found.drop.target, "trash": where, "links": found.links,
                   "files": sorted(found.texts), "source": found.drop.rel,
                   "confirmed_via": via},
        ))  # fmt: skip


def _answer_asks(vault: Path, found: MergePlan, now: dt.datetime) -> None:
    """DROP is gone: every request queued about it (a prune, this merge asked twice or
    from elsewhere) is answered, so review and status no longer count it."""
    queue.close_for(vault, found.drop.target, "yes", now)
    for ask in queue.pending(vault):
        if (ask.action, ask.target, ask.drop) == ("merge", found.keep.target, found.drop.target):
            queue.close(vault, ask.id, "yes", now)


def _carry_out(vault: Path, found: MergePlan, trash_id: str) -> str:
    """Everything to .trash/ first (so a crash loses nothing), then the edits, then DROP."""
    folder = vault / config.TRASH_DIR / trash_id
    content = f"{slug(Path(found.drop.target).stem)}.md"
    edits: list[dict[str, Any]] = []
    for n, (relative, (source, text)) in enumerate(sorted(found.texts.items())):
        original, merged = f"orig-{n}.bin", f"after-{n}.bin"
        atomic_write(folder / original, as_bytes(source, source.text))
        after = as_bytes(source, text)
        # what the merge wrote, so undo can take exactly that off a file changed since
        atomic_write(folder / merged, after)
        edits.append(
            {"path": relative, "original": original, "merged": merged, "after": digest(after)}
        )
    meta = {
        "id": trash_id,
        "kind": "merge",
        "drop_kind": "block" if found.drop.block is not None else "file",
        "source": found.drop.rel,
        "name": found.drop.target,
        "keep": found.keep.target,
        "content": content,
        "start": found.removal_start,
        "edits": edits,
    }
    meta = with_keywords(vault, meta)  # DROP's keywords on its index line, for restore
    if found.drop.block is not None:
        atomic_write(folder / content, found.drop_text)
    atomic_write(folder / config.TRASH_META_FILE, json.dumps(meta, indent=2) + "\n")
    for relative, (source, text) in found.texts.items():
        atomic_write(resolve_inside(vault, relative), as_bytes(source, text))
    if found.drop.block is None:
        dropped = resolve_inside(vault, found.drop.rel)
        move(dropped, folder / content)  # counted; its row in the recall table goes (fsio)
    return rel(vault, folder)
