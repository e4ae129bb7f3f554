"""Planned file changes: read exactly, show as a unified diff, write atomically.

A write that adds or removes a note (prune, restore, a skill promoted inside the vault)
also regenerates the index, as ``new`` does: ``check_index`` before the first write,
``reindex`` after it, both inside the writer lock the write holds.
"""

from __future__ import annotations

import contextlib
import difflib
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from vaultkeeper import config
from vaultkeeper.apply.decision import ACT, Decision, Outcome, outcome_for
from vaultkeeper.errors import GateRefused, VaultkeeperError
from vaultkeeper.index import delta as quick
from vaultkeeper.index.files import Keywords
from vaultkeeper.store.edit import BOM, read_for_edit
from vaultkeeper.store.fsio import atomic_write, writer_lock
from vaultkeeper.store.model import file_hash, split_lines


@dataclass(frozen=True)
class Source:
    """A file's text as the model sees it, plus the BOM it must keep on disk."""

    path: Path
    text: str
    bom: bool


@dataclass(frozen=True)
class Change:
    path: Path
    label: str  # how the diff names the file (vault-relative, or absolute outside it)
    before: str | None  # None: the file is created
    after: str | None  # None: the file goes (to .trash/)
    bom: bool = False
    # nothing the index lists changes: a counter line joins a registry block after its
    # heading or another counter line (its name and first paragraph stay as they are)
    unlisted: bool = False


def read_source(path: Path, where: str) -> Source:
    """Read ``path`` for editing; ``where`` names it in the one-line error."""
    text, bom = read_for_edit(path, where)
    return Source(path, text, bool(bom))


_Opcode = tuple[Literal["replace", "delete", "insert", "equal"], int, int, int, int]


class Pinned(difflib.SequenceMatcher):  # type: ignore[type-arg]
    """difflib's matcher with the equal lines at both ends (of the first ``limit``) taken
    as they are: only the lines between are compared (``key``: as what each line is
    aligned by), and the context kept at each end cannot shift."""

    def __init__(
        self, old: list[str], new: list[str], limit: int, key: Callable[[str], str] = str
    ) -> None:
        head = next((i for i in range(limit) if old[i] != new[i]), limit)
        tail = next((i for i in range(limit - head) if old[-1 - i] != new[-1 - i]), limit - head)
        a, b = [key(x) for x in old[head : len(old) - tail]], new[head : len(new) - tail]
        super().__init__(None, a, [key(x) for x in b])
        self.head, self.tail, self.sizes = head, tail, (len(old), len(new))

    def get_opcodes(self) -> list[_Opcode]:
        h, (m, n) = self.head, self.sizes
        codes: list[_Opcode] = [
            (t, i1 + h, i2 + h, j1 + h, j2 + h) for t, i1, i2, j1, j2 in super().get_opcodes()
        ]
        start: list[_Opcode] = [("equal", 0, h, 0, h)] if h else []
        ends: list[_Opcode] = [("equal", m - self.tail, m, n - self.tail, n)] if self.tail else []
        return start + codes + ends


def _span(start: int, stop: int) -> str:
    """A hunk's range as a unified diff writes it."""
    if stop - start == 1:
        return str(start + 1)
    return f"{start + 1 if stop > start else start},{stop - start}"


def unified_diff(changes: list[Change]) -> str:
    """The changes as one unified diff (3 lines of context). In a long file the lines it
    keeps at both ends are not compared: one block changed in a registry of 10,000
    lines is diffed at once, not in a second."""
    out: list[str] = []
    for change in changes:
        old = split_lines(change.before or "")
        new = split_lines(change.after or "")
        old_name = "/dev/null" if change.before is None else f"a/{change.label}"
        new_name = "/dev/null" if change.after is None else f"b/{change.label}"
        lines: list[str] = []
        limit = min(len(old), len(new)) if len(old) > 200 else 0
        for group in Pinned(old, new, limit).get_grouped_opcodes(3):
            lines += [] if lines else [f"--- {old_name}\n", f"+++ {new_name}\n"]
            (_, i1, _, j1, _), (_, _, i2, _, j2) = group[0], group[-1]
            lines.append(f"@@ -{_span(i1, i2)} +{_span(j1, j2)} @@\n")
            for tag, i1, i2, j1, j2 in group:
                if tag == "equal":
                    lines += [" " + line for line in old[i1:i2]]
                    continue
                lines += ["-" + line for line in old[i1:i2]] + ["+" + line for line in new[j1:j2]]
        out += [
            line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
            for line in lines
        ]
    return "".join(out)


def write(change: Change) -> None:
    """Write one planned change (creations and edits; removal is trash's job)."""
    if change.after is None:
        raise VaultkeeperError(f"{change.label}: removal goes through .trash/, not write()")
    atomic_write(change.path, (BOM if change.bom else "") + change.after)


@contextlib.contextmanager
def locked(vault: Path, dry_run: bool) -> Iterator[None]:
    """The writer lock, except on a dry run, which writes nothing at all (not even a lock)."""
    if dry_run:
        yield
        return
    with writer_lock(vault):
        yield


def _why(exc: Exception) -> str:
    if isinstance(exc, OSError):
        return f"{exc.filename or config.INDEX_FILE}: {exc.strerror or exc}"
    return str(exc)


def check_index(vault: Path) -> None:
    """Before the first write: an index that cannot be regenerated refuses now (reads only)."""
    try:
        quick.check(vault)  # the index stamp: no note read when it shows the index up to date
    except OSError as exc:  # unreadable: nothing is written, so a refusal, not "stopped"
        raise GateRefused(f"{_why(exc)}; the index could not be regenerated") from None


def reindex(
    vault: Path, outcome: Outcome, keep: Keywords | None = None, unlisted: tuple[Path, ...] = ()
) -> Outcome:
    """After the write: regenerate the index; if that fails, the outcome still says it
    was applied, and how to finish. ``keep``: see build_index; ``unlisted``: delta.carry."""
    try:
        quick.reindex(vault, keep, [os.fspath(p) for p in unlisted])  # only the changed lines
    except (OSError, VaultkeeperError) as exc:
        return outcome.with_reason(
            f"{outcome.reason}; {config.INDEX_FILE} not updated: {_why(exc)}; "
            "run `vaultkeeper index`"
        )
    return outcome


def carry(
    vault: Path,
    decision: Decision,
    changes: list[Change],
    what: str,
    *,
    dry_run: bool,
    extra: Mapping[str, Any],
    evidence: str | None = None,
    index: bool = False,
    hashes: tuple[str | None, str] | None = None,
) -> Outcome:
    """The frame every edit shares once its gates passed: the index checked (``index``:
    the edit changes what the index lists), each change written in order, the outcome
    (the first file's hashes unless given; the diff on a dry run), the index regenerated."""
    first = changes[0]
    if hashes is None:
        before = None if first.before is None else file_hash(first.before)
        hashes = (before, file_hash(first.after or ""))
    unlisted: tuple[Path, ...] = ()
    if not dry_run:
        if index:
            check_index(vault)
            unlisted = tuple(c.path for c in changes if c.unlisted and _as_checked(c))
        for change in changes:
            write(change)
    outcome = outcome_for(
        decision, ACT, what, hash_before=hashes[0], hash_after=hashes[1], extra=extra,
        diff=unified_diff(changes) if dry_run else "", dry_run=dry_run,
        **({} if evidence is None else {"evidence": evidence}),
    )  # fmt: skip
    return reindex(vault, outcome, None, unlisted) if index and not dry_run else outcome


def _as_checked(change: Change) -> bool:
    """Whether the file is still the text the change was planned on, now that the index
    check vouched for what the index lists of it."""
    try:
        text, bom = read_for_edit(change.path, change.label)
    except VaultkeeperError:
        return False
    return (text, bool(bom)) == (change.before, change.bom)
