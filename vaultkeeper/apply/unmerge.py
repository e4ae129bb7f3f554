"""``restore <id>`` of a merge: every file the merge edited back to its original bytes.

The merge kept each original in ``.trash/<id>/`` with what it wrote. A file as the
merge left it gets its original bytes back. A file changed since (a ``use`` of KEEP
raised its count, a person edited another line) gets exactly the merge's lines taken
off and keeps the rest (unpatch.py); where a later edit touched a line the merge wrote
(other than a counter), nothing is restored, so a later edit is never lost.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Any

from vaultkeeper.apply.decision import ACT, Decision, Outcome
from vaultkeeper.apply.unpatch import take_off
from vaultkeeper.errors import GateRefused
from vaultkeeper.store.edit import BOM
from vaultkeeper.store.fsio import atomic_write, move
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
    since = 0
    for item in edits:
        path = resolve_inside(vault, str(item["path"]))
        original = file_in(folder, str(item["original"]))
        now = path.read_bytes() if path.is_file() else b""
        if digest(now) == item.get("after"):
            plan_back.append((path, original.read_bytes()))
            continue
        merged = item.get("merged")
        if not isinstance(merged, str) or not path.is_file():  # a record from before
            raise GateRefused(
                f"{item['path']} changed since the merge; nothing restored (its original "
                f"is {rel(vault, original)})"
            )
        plan_back.append((path, _taken_off(folder, item, original, now)))
        since += 1
    drop_file = meta.get("drop_kind") == "file"
    target = resolve_inside(vault, meta["source"])
    if drop_file and target.exists():
        raise GateRefused(f"{meta['source']}: exists again; restoring would overwrite it")
    how = f"un-merged {meta.get('name')} from {meta.get('keep')}: {len(plan_back)} file(s) back"
    if since:
        how += f" ({since} changed since the merge: only the merge's lines taken off)"
    if not dry_run:
        if drop_file:  # its folder first: a person may have removed it, emptied by the merge
            target.parent.mkdir(parents=True, exist_ok=True)
        for path, data in plan_back:
            atomic_write(path, data)
        if drop_file:
            move(file_in(folder, str(meta["content"])), target)  # counted, and its recall row
        shutil.rmtree(folder)
    return Outcome(
        "restore", meta["source"], ACT, how, evidence=decision.evidence, id=meta["id"],
        extra={"kind": "merge", "name": meta.get("name"), "keep": meta.get("keep"),
               "files": [str(item["path"]) for item in edits]},
        dry_run=dry_run,
    )  # fmt: skip


BOM_BYTES = BOM.encode("utf-8")


def _decoded(data: bytes, where: str) -> tuple[str, bool]:
    bom = data.startswith(BOM_BYTES)
    try:
        return data[len(BOM_BYTES) if bom else 0 :].decode("utf-8"), bom
    except UnicodeDecodeError:
        raise GateRefused(f"{where}: not UTF-8 text any more; nothing restored") from None


def _taken_off(folder: Path, item: dict[str, Any], original: Path, now: bytes) -> bytes:
    """The file as it is now, less exactly what the merge wrote into it."""
    where = str(item["path"])
    base, _ = _decoded(file_in(folder, str(item["merged"])).read_bytes(), where)
    back, _ = _decoded(original.read_bytes(), where)
    text, bom = _decoded(now, where)
    undone = take_off(base, back, text, where)
    return (BOM_BYTES if bom else b"") + undone.encode("utf-8")
