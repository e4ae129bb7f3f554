"""``restore``: put what ``.trash/<id>/`` holds back where it came from.

Split from vaultkeeper.apply.trash, which moves content in: this is the way back.
A file comes back byte-identical; a registry block goes back exactly where it was
when the file has not changed since, else beside the same neighbouring lines, else at
the end of the file, and never over a block or file that exists again.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.apply import journal, native
from vaultkeeper.apply.decision import ACT, SILENCE, Decision, Outcome, outcome_for
from vaultkeeper.apply.edits import (
    Change,
    check_index,
    locked,
    read_source,
    reindex,
    unified_diff,
    write,
)
from vaultkeeper.apply.merge import unmerge
from vaultkeeper.apply.trash import keywords_key, trash_folder
from vaultkeeper.errors import GateRefused, NotFoundError, VaultkeeperError
from vaultkeeper.registry.blocks import parse_blocks
from vaultkeeper.store.fsio import move
from vaultkeeper.store.model import file_hash, split_lines
from vaultkeeper.store.vault import file_in, rel, resolve_inside


def _raw(folder: Path, trash_id: str) -> dict[str, Any]:
    try:
        meta: Any = json.loads((folder / config.TRASH_META_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:  # nested past json's depth too
        where = f"{config.TRASH_DIR}/{trash_id}/{config.TRASH_META_FILE}"
        raise VaultkeeperError(f"{where}: unreadable ({exc})") from None
    if not isinstance(meta, dict):
        raise VaultkeeperError(f"{config.TRASH_DIR}/{trash_id}: not a vaultkeeper trash record")
    return {**meta, "id": trash_id}


def _kind(folder: Path) -> object:
    try:
        return json.loads((folder / config.TRASH_META_FILE).read_text("utf-8")).get("kind")
    except (OSError, ValueError, AttributeError, RecursionError):
        return None  # _load_meta says why


def _load_meta(folder: Path, trash_id: str) -> dict[str, Any]:
    where = f"{config.TRASH_DIR}/{trash_id}/{config.TRASH_META_FILE}"
    try:
        meta: Any = json.loads((folder / config.TRASH_META_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:  # nested past json's depth too
        raise VaultkeeperError(f"{where}: unreadable ({exc})") from None
    content = meta.get("content") if isinstance(meta, dict) else None
    start = meta.get("start", 0 if meta.get("kind") == "file" else None) if content else None
    if (
        not isinstance(content, str)
        or "/" in content
        # a dot-file entry (.hidden.md) is trashed under its own name; only names that
        # would leave the folder or be the record itself are refused
        or content in (".", "..", config.TRASH_META_FILE)
        or not isinstance(meta.get("source"), str)
        # a hand-edited start would put the block back in the wrong place
        or type(start) is not int
        or start < 0
    ):
        raise VaultkeeperError(f"{where}: not a vaultkeeper trash record")
    return {**meta, "id": trash_id}  # the folder's name is the id the person typed


def restore(vault: Path, decision: Decision, *, dry_run: bool = False) -> Outcome:
    """Put ``.trash/<id>/`` back where it came from."""
    trash_id = decision.target.strip()
    folder = trash_folder(vault, trash_id)
    if not (folder / config.TRASH_META_FILE).is_file():
        done = journal.latest(
            vault,
            lambda r: (
                r.get("action") == "restore" and r.get("id") == trash_id and r.get("outcome") == ACT
            ),
        )
        if done is not None:
            return outcome_for(
                decision,
                SILENCE,
                f"already restored on {done.get('ts')} to {done.get('target')}",
                id=trash_id,
            )
        raise NotFoundError(
            f"{config.TRASH_DIR}/{trash_id}: no such deletion (`vaultkeeper log` lists prune ids)"
        )
    with locked(vault, dry_run):
        if _kind(folder) == native.KIND and not dry_run:
            return native.restore(vault, decision, _raw(folder, trash_id), folder)
        meta = _load_meta(folder, trash_id)
        target = resolve_inside(vault, meta["source"])
        content = file_in(folder, str(meta["content"]))
        if not dry_run:
            check_index(vault)
        if meta.get("kind") == "merge":
            outcome = unmerge(vault, decision, meta, folder, dry_run)
        else:
            put_back = _restore_file if meta.get("kind") == "file" else _restore_block
            outcome = put_back(vault, decision, meta, target, content, folder, dry_run)
        if outcome.outcome != ACT or dry_run:
            return outcome
        words = meta.get("keywords")
        keep = {keywords_key(meta): words} if isinstance(words, str) and words else None
        return reindex(vault, outcome, keep)


def _done(
    decision: Decision, meta: dict[str, Any], how: str, change: Change, dry_run: bool
) -> Outcome:
    return Outcome(
        "restore",
        meta["source"],
        ACT,
        how,
        evidence=decision.evidence,
        id=meta["id"],
        hash_before=None if change.before is None else file_hash(change.before),
        hash_after=file_hash(change.after or ""),
        extra={"kind": meta.get("kind"), "name": meta.get("name")},
        diff=unified_diff([change]) if dry_run else "",
        dry_run=dry_run,
    )


def _restore_file(
    vault: Path,
    decision: Decision,
    meta: dict[str, Any],
    target: Path,
    content: Path,
    folder: Path,
    dry_run: bool,
) -> Outcome:
    kept = read_source(content, rel(vault, content))
    if target.exists():
        if target.read_bytes() == content.read_bytes():
            return outcome_for(
                decision, SILENCE, f"{meta['source']} is already back", id=meta["id"]
            )
        raise GateRefused(
            f"{meta['source']}: exists and differs; restoring would overwrite it "
            f"(the deleted copy stays in {rel(vault, content)})"
        )
    change = Change(target, meta["source"], None, kept.text)
    if not dry_run:
        target.parent.mkdir(parents=True, exist_ok=True)
        move(content, target)
        shutil.rmtree(folder)
    return _done(decision, meta, f"restored {meta['source']}", change, dry_run)


def _restore_block(
    vault: Path,
    decision: Decision,
    meta: dict[str, Any],
    target: Path,
    content: Path,
    folder: Path,
    dry_run: bool,
) -> Outcome:
    span = read_source(content, rel(vault, content)).text
    source_rel, name = meta["source"], str(meta.get("name", ""))
    if not target.exists():
        body = _trimmed(span, "\r\n" if "\r\n" in span else "\n")
        change = Change(target, source_rel, None, body)
        how = f"{source_rel} was gone; recreated it holding ### {name}"
    else:
        src = read_source(target, source_rel)
        clash = [b for b in parse_blocks(target, source_rel, src.text) if b.name == name]
        if clash:
            raise GateRefused(
                f"{source_rel}:{clash[0].line}: a ### {name} block exists again; restoring "
                f"would duplicate it (the deleted block stays in {rel(vault, content)})"
            )
        new_text, how = _place(src.text, span, meta)
        change = Change(target, source_rel, src.text, new_text, src.bom)
    if not dry_run:
        write(change)
        shutil.rmtree(folder)
    return _done(decision, meta, how, change, dry_run)


def _trimmed(span: str, nl: str) -> str:
    """The block without the blank lines that separated it, ending in one newline."""
    lines = split_lines(span)
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    body = "".join(lines)
    return body if body.endswith("\n") else body + nl


def _fits(lines: list[str], i: int, before: str | None, after: str | None) -> bool:
    """Would a block inserted before ``lines[i]`` sit between its old neighbours?"""
    above = i == 0 if before is None else i > 0 and lines[i - 1] == before
    below = i == len(lines) if after is None else i < len(lines) and lines[i] == after
    return above and below


def _heading_line(head: str, chunk: str) -> int:
    """The line of the ### heading in ``chunk`` put after ``head``: prune's ``path:N``."""
    blanks = next((i for i, line in enumerate(split_lines(chunk)) if line.strip()), 0)
    return head.count("\n") + blanks + 1


def _place(text: str, span: str, meta: dict[str, Any]) -> tuple[str, str]:
    """Where the block goes back: exactly, beside the same neighbours, or at the end."""
    lines = split_lines(text)
    start = int(meta.get("start", 0))
    source = meta["source"]
    if file_hash(text) == meta.get("hash_after") and start <= len(lines):
        head = "".join(lines[:start])
        at = _heading_line(head, span)
        return head + span + "".join(lines[start:]), (
            f"back in {source} at line {at}; the file is as before the prune"
        )
    before, after = meta.get("before_line"), meta.get("after_line")
    spots = [i for i in range(len(lines) + 1) if _fits(lines, i, before, after)]
    if spots:
        pos = min(spots, key=lambda i: abs(i - start))
        head = "".join(lines[:pos])
        if head and not head.endswith("\n"):
            head += "\r\n" if "\r\n" in text else "\n"
        new = head + span + "".join(lines[pos:])
        return new, (
            f"back in {source} at line {_heading_line(head, span)}, its original place (the "
            "lines around it match; the file changed elsewhere meanwhile)"
        )
    nl = "\r\n" if "\r\n" in text else "\n"
    body = _trimmed(span, nl)
    sep = "" if not text or text.endswith(nl * 2) else (nl if text.endswith("\n") else nl * 2)
    return text + sep + body, (
        f"appended at the end of {source}, line {_heading_line(text + sep, body)}: "
        "the text around its old place had changed"
    )
