"""``apply prune``: delete a registry block or an entry file, on a person's yes only.

There is no way around the person: with a terminal the caller passes ``confirm`` and
only a ``y``/``yes`` typed there deletes (over MCP, where the person turned it on: an
accept in the host's own dialog, mcp/prune.py); without one (``confirm=None``) the request is
queued for ``vaultkeeper review`` and the outcome is ``ask``. What goes, goes to
``.trash/``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.apply import journal, trash
from vaultkeeper.apply.decision import ACT, ASK, KEPT, SILENCE, Decision, Outcome, outcome_for
from vaultkeeper.apply.edits import (
    Change,
    Source,
    check_index,
    read_source,
    reindex,
    unified_diff,
    write,
)
from vaultkeeper.apply.gate import check_hash, entry_path, looks_like_path
from vaultkeeper.errors import GateRefused, NotFoundError
from vaultkeeper.registry.blocks import RegistryBlock, find_block
from vaultkeeper.store.fsio import move, writer_lock
from vaultkeeper.store.model import file_hash
from vaultkeeper.store.vault import own_dir, rel


@dataclass(frozen=True)
class PrunePlan:
    kind: str  # "block" | "file"
    target: str  # the block's name, or the file's vault-relative path
    where: str  # rel:line of what goes
    text: str  # exactly what goes (shown to the person)
    hash: str  # block hash or file hash, to notice a change before deleting
    count: int | None  # a block's success count, shown so nobody prunes a used pattern blind
    diff: str
    source: Source
    block: RegistryBlock | None
    removal: trash.Removal | None

    @property
    def path(self) -> Path:
        return self.source.path

    @property
    def rel(self) -> str:
        return self.where.rpartition(":")[0]


@dataclass(frozen=True)
class NoAnswer:
    """No person's answer is known (a host declined by itself, a dialog failed or went
    unanswered): nothing goes, and the request is queued for ``vaultkeeper review``."""

    why: str


# True only deletes; False or a reason (why the person's answer was not a yes) keeps;
# NoAnswer queues the request for review. A callback asking anywhere but at a terminal
# says where with a ``confirmed_via`` attribute and what is known of the yes with a
# ``yes_reason`` (mcp_prune: "accepted in Claude Code's dialog"): the journal line says both.
# A merge (merge.py) asks through the same callback with its MergePlan: DROP leaves the vault
# (named Any here: merge.py imports this module).
Confirm = Callable[[Any], "bool | str | NoAnswer"]


def plan(vault: Path, decision: Decision) -> PrunePlan:
    """Read what would go, fresh from disk; escapes are refused before any read."""
    if looks_like_path(decision.target):
        path = entry_path(vault, decision.target)
        relative = rel(vault, path)
        if relative.startswith(config.PATTERNS_DIR + "/"):
            raise GateRefused(f"{relative}: a registry file; prune its ### blocks by name")
        source = read_source(path, relative)
        change = Change(path, relative, source.text, None)
        return PrunePlan(
            "file", relative, f"{relative}:1", source.text, file_hash(source.text), None,
            unified_diff([change]), source, None, None,
        )  # fmt: skip
    block = find_block(vault, decision.target)
    source = read_source(block.path, block.rel)
    removal = trash.block_removal(source.text, block)
    change = Change(block.path, block.rel, source.text, removal.new_text)
    return PrunePlan(
        "block", block.name, f"{block.rel}:{block.line}", block.text, block.hash, block.count,
        unified_diff([change]), source, block, removal,
    )  # fmt: skip


def prune(
    vault: Path,
    decision: Decision,
    now: dt.datetime,
    *,
    dry_run: bool = False,
    confirm: Confirm | None = None,
) -> Outcome:
    found = planned(vault, decision, plan, "pruned")
    if isinstance(found, Outcome):
        return found
    check_hash(decision.expect_hash, found.hash, f"{found.target} ({found.where})")
    own_dir(vault, config.TRASH_DIR)  # refused before anyone is asked, not after a yes
    if dry_run:
        return outcome_for(
            decision, ACT, f"move {found.where} to {config.TRASH_DIR}/",
            hash_before=found.hash, diff=found.diff, dry_run=True,
        )  # fmt: skip
    decision = replace(decision, target=found.target)
    why = str(getattr(confirm, "yes_reason", "a person answered yes"))  # mcp: the host's dialog
    yes = lambda via: carry_out(vault, decision, now, found.hash, why, via)  # noqa: E731
    asked = "deleting needs a person's yes at a terminal"
    return ask_first(vault, decision, now, found, found.hash, confirm, yes, asked, "kept")


def planned(
    vault: Path, decision: Decision, plan: Callable[[Path, Decision], Any], word: str,
    match: Callable[[Any], bool] = lambda r: True,
) -> Any:  # fmt: skip
    """``plan``'s plan of a deletion, or once its target is gone, the journal's word that
    it was carried out already (silence)."""
    try:
        return plan(vault, decision)
    except NotFoundError:
        done = journal.last_act(vault, decision.action, decision.target, match)
        if done is None:
            raise
        why = f"already applied: {word} on {done.get('ts')}"
        return outcome_for(decision, SILENCE, why, id=done.get("id"))


def ask_first(
    vault: Path, decision: Decision, now: dt.datetime, shown: Any, digest: str,
    confirm: Confirm | None, yes: Callable[[str], Outcome], asked: str, kept: str,
    extra: dict[str, Any] | None = None,
) -> Outcome:  # fmt: skip
    """The frame of a deletion: without a person (no ``confirm``, or no answer known) it
    is queued for review; anything but a yes keeps; a yes runs ``yes(confirmed_via)``."""
    answer = NoAnswer(asked) if confirm is None else confirm(shown)
    if isinstance(answer, NoAnswer):
        return queued(vault, decision, digest, answer.why, now, extra)
    if answer is not True:
        why = answer if isinstance(answer, str) and answer else "the person did not answer yes"
        return outcome_for(
            decision,
            SILENCE,
            f"{kept}: {why}",
            hash_before=digest,
            extra={**(extra or {}), KEPT: True},
        )
    return yes(str(getattr(confirm, "confirmed_via", config.CONFIRMED_VIA_TERMINAL)))


def queued(
    vault: Path, decision: Decision, digest: str, reason: str, now: dt.datetime,
    extra: dict[str, Any] | None = None,
) -> Outcome:  # fmt: skip
    """Nothing goes: the request waits in the queue for ``vaultkeeper review`` (ask)."""
    with writer_lock(vault):
        known = journal.find_pending(vault, decision, decision.target)
        ask = known or journal.enqueue(vault, decision, decision.target, reason, digest, now)
    state = "already queued" if known else "queued"
    return outcome_for(
        decision, ASK, f"{reason}; a person must run `vaultkeeper review` ({state} as {ask.id})",
        id=ask.id, hash_before=digest, extra=extra,
    )  # fmt: skip


def carry_out(
    vault: Path,
    decision: Decision,
    now: dt.datetime,
    expected: str | None,
    why: str,
    via: str = config.CONFIRMED_VIA_TERMINAL,
) -> Outcome:
    """Delete (to .trash/) after a person's yes, if the target is still what they saw;
    ``via``: where the yes was given (journaled as ``confirmed_via``)."""
    with writer_lock(vault):
        found = plan(vault, decision)
        if expected is not None and found.hash != expected:
            raise GateRefused(
                f"{found.where} changed after it was shown; nothing deleted, decide again"
            )
        check_index(vault)
        trash_id = journal.new_id(now)
        before = file_hash(found.source.text)
        meta: dict[str, Any] = {"kind": found.kind, "source": found.rel}
        if found.block is not None and found.removal is not None:
            removal, content = found.removal, trash.content_name(found.block.name)
            after: str | None = file_hash(removal.new_text)
            meta.update(name=found.block.name, content=content, start=removal.start)
            meta.update(before_line=removal.before_line, after_line=removal.after_line)
            meta.update(hash_before=before, hash_after=after, block_hash=found.block.hash)
            where = trash.put_away(vault, trash_id, meta, {content: removal.span})
            source = found.source
            write(Change(found.path, found.rel, source.text, removal.new_text, source.bom))
        else:
            after = None
            meta.update(content=found.path.name, hash_before=before)
            where = trash.put_away(vault, trash_id, meta, {})
            move(found.path, vault / where / found.path.name)  # the bytes stay as they were
        journal.close_for(vault, found.target, "yes", now)  # asked twice, or elsewhere
        return reindex(vault, Outcome(
            "prune", found.target, ACT,
            f"{why}: moved {found.where} to {where}/ (undo: `vaultkeeper restore {trash_id}`)",
            evidence=decision.evidence, id=trash_id, hash_before=before, hash_after=after,
            extra={"kind": found.kind, "source": found.rel, "trash": where, "confirmed_via": via},
        ))  # fmt: skip
