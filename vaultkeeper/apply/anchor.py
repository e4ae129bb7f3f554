"""`apply anchor ENTRY --add PATH[::NAME]`: anchor an existing entry.

A minimal edit: the new ``  - {at, digest, commit}`` lines go after the entry's last
``anchors:`` item (or, without the key, ``anchors:`` and them just before the closing
``---``); no other byte changes. Digest and commit come from the project's repository
(its tie, see vaultkeeper/anchors/repo.py); journaled like every apply.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.anchors import check, repo
from vaultkeeper.anchors.format import AnchorError, item_yaml, parse_at, parse_items
from vaultkeeper.apply.decision import SILENCE, Decision, Outcome, outcome_for
from vaultkeeper.apply.edits import carry, locked
from vaultkeeper.apply.gate import check_hash
from vaultkeeper.apply.lifecycle import load_entry
from vaultkeeper.errors import GateRefused
from vaultkeeper.store.model import file_hash


def add_anchor(
    vault: Path, decision: Decision, now: dt.datetime, *, dry_run: bool = False, **_: object
) -> Outcome:
    with locked(vault, dry_run):
        entry = load_entry(vault, decision.target)
        decision = replace(decision, target=entry.rel)
        check_hash(decision.expect_hash, file_hash(entry.source.text), entry.rel)
        kind = entry.note.get_str("type")
        if kind not in ("memory", "decision"):
            raise GateRefused(f"{entry.rel}: anchors go on a memory or decision entry")
        project = repo.project_of(entry.rel)
        top = repo.located(vault, project) if project else None
        if top is None:
            raise GateRefused(
                f"{entry.rel}: project {project} is tied to no repository on this machine "
                "(vaultkeeper new ... --repo DIR, or a session ingest from it)"
            )
        have = {i.at for i in parse_items(entry.note.meta.get(config.ANCHORS_KEY))[0]}
        lines = []
        for spec in decision.anchors:
            try:
                digest, commit = check.record(top, parse_at(spec))
            except (AnchorError, ValueError) as exc:
                raise GateRefused(str(exc)) from None
            if spec.strip() not in have:
                lines.append(item_yaml(spec.strip(), digest, commit))
        if not lines:
            return outcome_for(decision, SILENCE, "already anchored", extra={"path": entry.rel})
        text = _with_lines(entry.source.text, entry.note.frontmatter, lines)
        return carry(
            vault, decision, [entry.change(text)], f"anchored to {', '.join(decision.anchors)}",
            dry_run=dry_run, extra={"path": entry.rel, "anchors": list(decision.anchors)},
        )  # fmt: skip


def _with_lines(text: str, fm: object, lines: list[str]) -> str:
    """``lines`` after the last line of the anchors: block, or a new block at the end."""
    rows = text.split("\n")
    end = getattr(fm, "end_line", 0) - 1  # index of the closing ---
    start = getattr(fm, "key_lines", {}).get(config.ANCHORS_KEY)
    if start is None:
        return "\n".join([*rows[:end], f"{config.ANCHORS_KEY}:", *lines, *rows[end:]])
    if rows[start - 1].strip() not in (f"{config.ANCHORS_KEY}:",):
        raise GateRefused(f"anchors: is not a block list (line {start}); add the items by hand")
    after = start
    while after < end and rows[after].startswith((" ", "-")):
        after += 1
    return "\n".join([*rows[:after], *lines, *rows[after:]])
