"""``native prune`` and its ``restore``: a Claude Code auto memory leaves, on a person's yes.

The memory file moves into the vault's ``.trash/<id>/`` (its bytes and modification
time kept) and its ``MEMORY.md`` line is taken out by a one-line edit; ``restore ID``
puts both back byte for byte. Only a ``y``/``yes`` typed at a terminal deletes:
without a terminal the request is queued for ``vaultkeeper review`` (outcome ``ask``,
exit 3), journaled, and nothing moves.
Nothing is written outside the vault but the adopted folder the memory is in.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.anchors.repo import git
from vaultkeeper.apply import journal
from vaultkeeper.apply.decision import ACT, ASK, SILENCE, Decision, Outcome, outcome_for
from vaultkeeper.errors import GateRefused, NotFoundError, UsageError
from vaultkeeper.native.files import moved_out
from vaultkeeper.native.folders import Folder, adopted, pruned_here, set_pruned
from vaultkeeper.store.fsio import atomic_write, writer_lock
from vaultkeeper.store.model import file_hash

ACTION = journal.NATIVE_ACTION
KIND = "native"


@dataclass(frozen=True)
class NativePlan:
    folder: Folder
    path: Path
    data: bytes
    mtime_ns: int
    index_before: bytes | None  # MEMORY.md as it is
    index_after: bytes | None  # without the lines naming the file
    index_cut: tuple[tuple[int, str], ...]  # (0-based line, text) taken out

    @property
    def target(self) -> str:
        return f"{self.folder.project}/{self.path.name}"

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


Confirm = Callable[[NativePlan], bool]


def find(vault: Path, target: str) -> tuple[Folder, Path]:
    """``<project>/<file>`` of an adopted folder, as the review names it."""
    project, _, file = target.strip().partition("/")
    bad = not project or project in (".", "..") or "/" in file or file.startswith(".")
    if bad or not file.endswith(".md"):
        raise UsageError(f"{target!r}: name a native memory as <project>/<file>.md")
    folder = next((f for f in adopted(vault) if f.project == project), None)
    if folder is None:
        raise NotFoundError(f"{project}: no adopted auto-memory folder of that name")
    _check_folder(folder)
    path = Path(folder.path) / file
    if path.is_symlink() or not path.is_file():
        raise NotFoundError(f"{folder.path}/{file}: no such memory file")
    return folder, path


def _check_folder(folder: Folder) -> None:
    """GateRefused when the adopted folder became a symlink (or went) since it was
    adopted: nothing outside the host's own folder is moved, or written back."""
    why = moved_out(Path(folder.path))
    if why is not None:
        raise GateRefused(f"{folder.project}: {why}; nothing moved")


def _cut_index(index: Path, file: str) -> tuple[bytes | None, bytes | None, tuple[Any, ...]]:
    if index.is_symlink() or not index.is_file():
        return None, None, ()
    before = index.read_bytes()
    lines = before.splitlines(keepends=True)
    marks = (f"]({file})".encode(), f"](<{file}>)".encode(), f"](./{file})".encode())
    cut = [(i, line) for i, line in enumerate(lines) if any(m in line for m in marks)]
    if not cut:
        return before, before, ()
    kept = b"".join(line for i, line in enumerate(lines) if i not in {n for n, _ in cut})
    return before, kept, tuple((n, line.decode("utf-8", "surrogateescape")) for n, line in cut)


def plan(vault: Path, target: str) -> NativePlan:
    folder, path = find(vault, target)
    before, after, cut = _cut_index(path.parent / config.NATIVE_INDEX_FILE, path.name)
    return NativePlan(folder, path, path.read_bytes(), path.stat().st_mtime_ns, before, after, cut)


def prune(vault: Path, decision: Decision, now: dt.datetime, confirm: Confirm | None) -> Outcome:
    """Move the memory to ``.trash/`` on a person's yes; queued (``ask``) without one."""
    with writer_lock(vault):
        journal.check(vault)  # before the queue or the move, not after them
        p = plan(vault, decision.target)
        if confirm is None:  # queued, as a vault prune is: `vaultkeeper review` asks
            ask = journal.enqueue(vault, decision, p.target, "delete", file_hash(p.text), now)
            reason = f"queued for a person (id {ask.id}): run `vaultkeeper review`"
            done = outcome_for(decision, ASK, reason, id=ask.id)
        elif not confirm(p):
            done = outcome_for(decision, SILENCE, "kept: the person said no")
        else:
            done = carry_out(vault, decision, now, file_hash(p.text))
        journal.append(vault, done, now)
        return done


def carry_out(vault: Path, decision: Decision, now: dt.datetime, expect_hash: str) -> Outcome:
    """The move itself, after a person's yes (the caller journals it), unless the memory
    changed since it was shown."""
    with writer_lock(vault):
        p = plan(vault, decision.target)
        if file_hash(p.text) != expect_hash:
            raise GateRefused(f"{p.target}: changed since it was shown; not deleted")
        trash_id = journal.new_id(now)
        folder = journal.trash_folder(vault, trash_id)
        meta = {
            "id": trash_id,
            "kind": KIND,
            "source": p.target,
            "path": str(p.path),
            "project": p.folder.project,
            "content": p.path.name,
            "mtime_ns": p.mtime_ns,
            "hash_before": expect_hash,
            "index_cut": [[n, line] for n, line in p.index_cut],
            "index_after": None if p.index_after is None else file_hash(_text(p.index_after)),
            "index_mtime_ns": _mtime(p.path.parent / config.NATIVE_INDEX_FILE),
        }
        # the copy and its record land in .trash/ before anything leaves the folder
        record = json.dumps(meta, indent=2) + "\n"
        atomic_write(folder / p.path.name, p.data)
        atomic_write(folder / config.TRASH_META_FILE, record)
        set_pruned(vault, trash_id, _digest(record.encode("utf-8"), p.data))
        if p.index_after is not None and p.index_cut:
            atomic_write(p.path.parent / config.NATIVE_INDEX_FILE, p.index_after)
        os.unlink(p.path)
        journal.close_for(vault, p.target, "yes", now, native=True)  # every ask about it answered
        lines = len(p.index_cut)
        reason = (
            f"moved to {config.TRASH_DIR}/{trash_id}/ and {lines} {config.NATIVE_INDEX_FILE} "
            f"line{'s' if lines != 1 else ''} taken out; `vaultkeeper restore {trash_id}` "
            "puts both back"
        )
        return outcome_for(decision, ACT, reason, id=trash_id, hash_before=expect_hash)


def _mtime(path: Path) -> int | None:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return None


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="surrogateescape")


def _digest(record: bytes, data: bytes) -> str:
    """What vouches for a native trash folder: its record's bytes and the memory's."""
    return hashlib.sha256(b"%d\n%b%b" % (len(record), record, data)).hexdigest()


def _vouched(vault: Path, meta: dict[str, Any], folder: Path) -> None:
    """GateRefused unless this machine's own prune wrote ``folder`` as it is now: a
    record committed by someone else (``.trash/`` travels with the vault), or a kept copy
    edited since, would write a memory file and a ``MEMORY.md`` line the host loads
    into every session."""
    mine = f"{config.STATE_DIR}/{config.MACHINE_FILE}"
    if git(str(vault), "ls-files", "--error-unmatch", "--", mine) is not None:
        raise GateRefused(  # `git add -f`: another clone's records came with the vault
            f"{mine} is tracked by git, so it may be another clone's; restored nothing "
            f"(untrack it: git rm --cached {mine})"
        )
    want = pruned_here(vault).get(str(meta["id"]))
    content = meta.get("content")
    record, kept = folder / config.TRASH_META_FILE, folder / str(content)
    got = None
    usable = isinstance(content, str) and "/" not in content and kept.is_file()
    if want is not None and usable and not (record.is_symlink() or kept.is_symlink()):
        got = _digest(record.read_bytes(), kept.read_bytes())
    if got is None or got != want:
        raise GateRefused(
            f"{config.TRASH_DIR}/{meta['id']}: not written by a prune on this machine, or "
            "changed since; restored nothing (copy the file back by hand if you trust it)"
        )


def restore(vault: Path, decision: Decision, meta: dict[str, Any], folder: Path) -> Outcome:
    """Put a pruned native memory and its index lines back (the caller holds the lock)."""
    home = next((f for f in adopted(vault) if f.project == meta.get("project")), None)
    content = meta.get("content")
    if home is None or not isinstance(content, str) or "/" in content:
        raise GateRefused(
            f"{config.TRASH_DIR}/{meta['id']}: its auto-memory folder is not adopted here; "
            "adopt it (vaultkeeper native adopt) and restore again"
        )
    _vouched(vault, meta, folder)
    _check_folder(home)
    target = Path(home.path) / content  # never the recorded path: only an adopted folder
    kept = folder / content
    if kept.is_symlink() or not kept.is_file():
        raise GateRefused(f"{config.TRASH_DIR}/{meta['id']}/{content}: missing or not a file")
    data = kept.read_bytes()
    if target.exists():
        if target.read_bytes() == data:
            return outcome_for(decision, SILENCE, f"{target} is already back", id=meta["id"])
        raise GateRefused(f"{target}: exists and differs; restoring would overwrite it")
    index = target.parent / config.NATIVE_INDEX_FILE
    cut = [(int(n), str(line)) for n, line in meta.get("index_cut") or ()]
    if cut and index.is_file() and not index.is_symlink():
        now_there = index.read_bytes()
        # untouched since the prune: its time goes back with its bytes
        untouched = file_hash(_text(now_there)) == meta.get("index_after")
        lines = now_there.splitlines(keepends=True)
        for number, line in cut:  # lowest first: each goes back where it was
            raw = line.encode("utf-8", "surrogateescape")
            if lines and number >= len(lines) and not lines[-1].endswith(b"\n"):
                lines[-1] += b"\n"
            lines.insert(min(number, len(lines)), raw)
        atomic_write(index, b"".join(lines))
        stamp = meta.get("index_mtime_ns")
        if untouched and isinstance(stamp, int):
            os.utime(index, ns=(stamp, stamp))
    atomic_write(target, data)
    mtime = meta.get("mtime_ns")
    if isinstance(mtime, int):
        os.utime(target, ns=(mtime, mtime))

    shutil.rmtree(folder)
    set_pruned(vault, str(meta["id"]), None)
    reason = f"put back at {target} with its {len(cut)} index line(s)"
    return Outcome("restore", meta["source"], ACT, reason, id=meta["id"], extra={"kind": KIND})
