"""``native promote``: a Claude Code auto memory used in sessions becomes a vault lesson.

Gated on evidence: the memory's counter (patterns/native-memory.md) must show use in
``NATIVE_PROMOTE_SESSIONS`` sessions, and the usage log must hold that many receipts
(the transcript lines that cited it). The lesson is written as every new lesson is
(``new memory``: the vault's full frontmatter, held out, indexed), its body the
memory's own text (masked), its ``provenance`` the native file and the receipts. The
native file is left exactly as it is; its counter block gains a ``**promoted:**`` line
naming the lesson, so the review stops listing it. Journaled.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.apply import journal
from vaultkeeper.apply.decision import ACT, Decision, Outcome, outcome_for
from vaultkeeper.apply.native import find
from vaultkeeper.entries.create import new_entry
from vaultkeeper.errors import GateRefused, UsageError
from vaultkeeper.native.counts import block_name, counters
from vaultkeeper.native.files import read_memory
from vaultkeeper.store.frontmatter import split_frontmatter
from vaultkeeper.store.fsio import atomic_write, writer_lock
from vaultkeeper.store.secrets import served
from vaultkeeper.store.uses import read_events

ACTION = "native-promote"
_NOT_NAME = re.compile(r"[^a-z0-9]+")


def lesson_name(file: str) -> str:
    return _NOT_NAME.sub("-", file[: -len(".md")].lower()).strip("-") or "native-memory"


def _receipts(vault: Path, block: str) -> list[str]:
    """One receipt per session that cited the memory, oldest first."""
    seen: dict[str, str] = {}
    for event in read_events(vault, ("cite",)):
        if event.target == block:
            seen.setdefault(event.session, event.receipt)
    return list(seen.values())


def _mark_promoted(vault: Path, block: str, link: str) -> None:
    path = vault / config.NATIVE_REGISTRY_FILE
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.rstrip("\r\n") == f"### {block}")
    at = next(
        (i for i in range(start + 1, len(lines)) if lines[i].startswith(config.LAST_USED_LABEL)),
        start,
    )
    lines.insert(at + 1, f"{config.PROMOTED_LABEL} [[{link}]]\n")
    atomic_write(path, "".join(lines))


def promote(vault: Path, decision: Decision, now: dt.datetime, project: str) -> Outcome:
    folder, path = find(vault, decision.target)
    block = block_name(folder.project, path.name)
    with writer_lock(vault):
        journal.check(vault)  # before the lesson is written, not after it
        count = counters(vault).get(block, (None, None, None))[0] or 0
        receipts = _receipts(vault, block)
        need = config.NATIVE_PROMOTE_SESSIONS
        if count < need or len(receipts) < need:
            raise GateRefused(
                f"{block}: used in {len(receipts)} recorded session(s), count {count}; "
                f"promotion needs {need} with receipts in the usage log (run `vaultkeeper "
                "ingest` on the sessions that cited it)"
            )
        memory = read_memory(path)
        if memory is None:
            raise UsageError(f"{path}: unreadable")
        body = memory.text[split_frontmatter(memory.text)[2] :].strip("\n")
        made = new_entry(
            vault,
            "memory",
            lesson_name(path.name),
            memory.description or memory.name or lesson_name(path.name),
            project=project,
            today=now.date(),
            body=served(body) if body.strip() else None,
        )
        lesson = vault / made.path
        text = lesson.read_text(encoding="utf-8")
        provenance = [f"native:{path}", *receipts]
        text = text.replace("provenance: []\n", f"provenance: {json.dumps(provenance)}\n", 1)
        atomic_write(lesson, text)
        _mark_promoted(vault, block, made.path[: -len(".md")])
        reason = f"written to {made.path} (held out); the native file is unchanged"
        outcome = outcome_for(decision, ACT, reason, extra={"lesson": made.path})
        journal.append(vault, outcome, now)
        return outcome
