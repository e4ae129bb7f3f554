"""``restore <id>`` of a merge: every file the merge edited back to its original bytes.

The merge kept each original in ``.trash/<id>/`` with the digest of what it wrote; a
file changed since then is refused (nothing is restored), so a later edit is never lost.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Any

from vaultkeeper.apply.decision import ACT, Decision, Outcome
from vaultkeeper.errors import GateRefused
from vaultkeeper.store.fsio import atomic_write, note_written
from vaultkeeper.store.vault import file_in, rel, resolve_inside


def digest(data: bytes) -> str:
    """sha256 of the bytes a merge wrote (BOM and line endings included)."""
    return hashlib.sha256(data).hexdigest()


def unmerge(
    vault: Path, decision: Decision, meta: dict[str, Any], folder: Path, dry_run: bool
) -> Outcome:
    """``restore <id>`` of a merge: every edited file's original bytes, and DROP's file."""
    edits = meta.get("edits")
    if not isinstance(edits, list):
        raise GateRefused(f"{rel(vault, folder)}: not a merge record")
    plan_back: list[tuple[Path, bytes]] = []
    for item in edits:
        path = resolve_inside(vault, str(item["path"]))
        original = file_in(folder, str(item["original"]))
        now = path.read_bytes() if path.is_file() else b""
        if digest(now) != item.get("after"):
            raise GateRefused(
                f"{item['path']} changed since the merge; nothing restored (its original "
                f"is {rel(vault, original)})"
            )
        plan_back.append((path, original.read_bytes()))
    drop_file = meta.get("drop_kind") == "file"
    target = resolve_inside(vault, meta["source"])
    if drop_file and target.exists():
        raise GateRefused(f"{meta['source']}: exists again; restoring would overwrite it")
    how = f"un-merged {meta.get('name')} from {meta.get('keep')}: {len(plan_back)} file(s) back"
    if not dry_run:
        for path, data in plan_back:
            atomic_write(path, data)
        if drop_file:
            os.replace(file_in(folder, str(meta["content"])), target)
            note_written(target)  # the recall table's row (fsio)
        shutil.rmtree(folder)
    return Outcome(
        "restore", meta["source"], ACT, how, evidence=decision.evidence, id=meta["id"],
        extra={"kind": "merge", "name": meta.get("name"), "keep": meta.get("keep"),
               "files": [str(item["path"]) for item in edits]},
        dry_run=dry_run,
    )  # fmt: skip
