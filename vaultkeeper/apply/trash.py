"""``.trash/``: deleted content moved in (Obsidian's own trash), and ``restore`` back.

Each deletion gets ``.trash/<id>/`` holding the content exactly as it was and
``trash.json`` saying where it came from. A file comes back byte-identical; a registry
block goes back exactly where it was when the file has not changed since, else beside
the same neighbouring lines, else at the end of the file, and never over a block or
file that exists again. A merge comes back off (``unmerge``) even after a later edit of
a file it wrote: exactly the merge's lines are taken off by a line-wise three-way merge
(``take_off``), a counter changed on both sides reconciled.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.apply import journal, native
from vaultkeeper.apply.decision import ACT, SILENCE, Decision, Outcome, outcome_for
from vaultkeeper.apply.edits import (
    Change,
    Pinned,
    check_index,
    locked,
    read_source,
    reindex,
    unified_diff,
    write,
)
from vaultkeeper.apply.gate import slug
from vaultkeeper.apply.journal import trash_folder
from vaultkeeper.errors import GateRefused, NotFoundError, VaultkeeperError
from vaultkeeper.index.files import index_keywords
from vaultkeeper.index.rows import sha
from vaultkeeper.registry.blocks import RegistryBlock, is_counter_line, parse_blocks, whole_count
from vaultkeeper.store.edit import BOM, replace_counter_value
from vaultkeeper.store.fsio import atomic_write, move
from vaultkeeper.store.model import file_hash, split_lines
from vaultkeeper.store.vault import file_in, rel, resolve_inside


@dataclass(frozen=True)
class Removal:
    """A registry block cut from its file, with what it takes to put it back exactly."""

    start: int  # 0-based index of the first removed line
    span: str  # the removed lines (the block and the blank lines that went with it)
    before_line: str | None  # the line just above the cut (None: start of file)
    after_line: str | None  # the line just below it (None: end of file)
    new_text: str


def block_removal(text: str, block: RegistryBlock) -> Removal:
    """The block plus the blank lines after it; at the end of a file, the ones before it."""
    lines = split_lines(text)
    start, stop = block.line - 1, block.end_line
    while stop < len(lines) and not lines[stop].strip():
        stop += 1
    if stop == len(lines):
        while start > 0 and not lines[start - 1].strip():
            start -= 1
    return Removal(
        start=start,
        span="".join(lines[start:stop]),
        before_line=lines[start - 1] if start > 0 else None,
        after_line=lines[stop] if stop < len(lines) else None,
        new_text="".join(lines[:start] + lines[stop:]),
    )


def keywords_key(meta: dict[str, Any]) -> tuple[str, str]:
    """The index's key for what a trash record holds: (file, heading casefolded or "")."""
    if meta.get("kind") == "merge" and meta.get("drop_kind") == "file":
        return str(meta["source"]), ""  # a merged file's record names it by its path
    return str(meta["source"]), str(meta.get("name", "")).casefold()


def put_away(vault: Path, trash_id: str, meta: dict[str, Any], files: dict[str, Any]) -> str:
    """``files`` (name -> bytes or text) and the record ``meta`` (with the keywords a person
    added on the entry's index line) into ``.trash/<id>/``, before anything leaves its
    place, so a crash loses nothing; the folder, vault-relative."""
    folder = trash_folder(vault, trash_id)
    for name, data in files.items():
        atomic_write(folder / name, data)
    words = index_keywords(vault).get(keywords_key(meta))  # the index drops them with the entry
    meta = meta if words is None else {**meta, "keywords": words}
    record = json.dumps({"id": trash_id, **meta}, indent=2) + "\n"
    atomic_write(folder / config.TRASH_META_FILE, record)
    return rel(vault, folder)


def content_name(name: str) -> str:
    """The file a block's (or a merged file's) text is kept in (``### \u2603``: block.md)."""
    return f"{slug(name, 'block')}.md"


def _record(folder: Path, trash_id: str) -> Any:
    """The trash record as JSON, read once; the folder's name is the id the person typed."""
    try:
        return json.loads((folder / config.TRASH_META_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:  # nested past json's depth too
        where = f"{config.TRASH_DIR}/{trash_id}/{config.TRASH_META_FILE}"
        raise VaultkeeperError(f"{where}: unreadable ({exc})") from None


def _checked(meta: Any, trash_id: str) -> dict[str, Any]:
    """A record restore can follow: the content's name a plain name in its folder, and
    where the block began a count (a hand-edited one would put it in the wrong place)."""
    content = meta.get("content") if isinstance(meta, dict) else None
    start = meta.get("start", 0 if meta.get("kind") == "file" else None) if content else None
    if (
        not isinstance(content, str)
        or "/" in content
        # a dot-file entry (.hidden.md) keeps its own name; only names that would
        # leave the folder or be the record itself are refused
        or content in (".", "..", config.TRASH_META_FILE)
        or not isinstance(meta.get("source"), str)
        or type(start) is not int
        or start < 0
    ):
        where = f"{config.TRASH_DIR}/{trash_id}/{config.TRASH_META_FILE}"
        raise VaultkeeperError(f"{where}: not a vaultkeeper trash record")
    return {**meta, "id": trash_id}


def _entry(vault: Path, given: object) -> Path:
    """A record's path, resolved, when it is a markdown file prune could have taken
    (gate.entry_path's rule): a record naming a git hook or config (.git/, a nested
    repository's too), .obsidian/ or state/, as written or through a symlink, is refused
    (.trash/ comes with the vault: another clone may have written it)."""
    path = resolve_inside(vault, str(given))
    relative = rel(vault.resolve(), path)
    parts = relative.casefold().split("/")
    if (
        not relative.endswith(".md")
        or parts[0] in config.EXCLUDED_DIRS
        or parts[0].startswith(".")
        or ".git" in parts[:-1]
    ):
        raise GateRefused(f"{given}: not a vault entry; nothing restored")
    return path


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
        meta = _record(folder, trash_id)
        if isinstance(meta, dict) and meta.get("kind") == native.KIND and not dry_run:
            return native.restore(vault, decision, {**meta, "id": trash_id}, folder)
        meta = _checked(meta, trash_id)
        target = _entry(vault, meta["source"])
        content = file_in(folder, str(meta["content"]))
        if not dry_run:
            check_index(vault)
        if meta.get("kind") == "merge":
            outcome = unmerge(vault, decision, meta, folder, dry_run)
        else:
            outcome = _put_back(vault, decision, meta, target, content, folder, dry_run)
        if outcome.outcome != ACT or dry_run:
            return outcome
        words = meta.get("keywords")
        keep = {keywords_key(meta): words} if isinstance(words, str) and words else None
        return reindex(vault, outcome, keep)


def _put_back(
    vault: Path,
    decision: Decision,
    meta: dict[str, Any],
    target: Path,
    content: Path,
    folder: Path,
    dry_run: bool,
) -> Outcome:
    """A pruned file back byte for byte, or a pruned block back into its file (``_place``)."""
    kept, source = read_source(content, rel(vault, content)).text, meta["source"]
    whole = meta.get("kind") == "file"
    if whole and target.exists():
        if target.is_file() and target.read_bytes() == content.read_bytes():
            return outcome_for(decision, SILENCE, f"{source} is already back", id=meta["id"])
        raise GateRefused(
            f"{source}: exists and differs; restoring would overwrite it "
            f"(the deleted copy stays in {rel(vault, content)})"
        )
    if whole:
        change, how = Change(target, source, None, kept), f"restored {source}"
    elif not target.exists():
        change = Change(target, source, None, _trimmed(kept, "\r\n" if "\r\n" in kept else "\n"))
        how = f"{source} was gone; recreated it holding ### {meta.get('name', '')}"
    else:
        name, now = str(meta.get("name", "")), read_source(target, source)
        clash = [b for b in parse_blocks(target, source, now.text) if b.name == name]
        if clash:
            raise GateRefused(
                f"{source}:{clash[0].line}: a ### {name} block exists again; restoring "
                f"would duplicate it (the deleted block stays in {rel(vault, content)})"
            )
        new_text, how = _place(now.text, kept, meta)
        change = Change(target, source, now.text, new_text, now.bom)
    if not dry_run and whole:
        target.parent.mkdir(parents=True, exist_ok=True)
        move(content, target)
    elif not dry_run:
        write(change)
    if not dry_run:
        shutil.rmtree(folder)
    return Outcome(
        "restore", source, ACT, how, evidence=decision.evidence, id=meta["id"],
        hash_before=None if change.before is None else file_hash(change.before),
        hash_after=file_hash(change.after or ""),
        extra={"kind": meta.get("kind"), "name": meta.get("name")},
        diff=unified_diff([change]) if dry_run else "", dry_run=dry_run,
    )  # fmt: skip


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
        path = _entry(vault, item["path"])
        original = file_in(folder, str(item["original"]))
        now = path.read_bytes() if path.is_file() else b""
        if sha(now) == item.get("after"):
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
    target = _entry(vault, meta["source"])
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


_VALUE = re.compile(r"^.*?\*\*[^*]+:\*\*[ \t]*(.*?)[ \t]*$")
_LABEL = re.compile(r"^(.*?\*\*[^*]+:\*\*)")


@dataclass(frozen=True)
class _Side:
    lines: dict[int, str]  # base line index -> its replacement (same-length replaces)
    spans: list[tuple[int, int, list[str]]]  # base [i1, i2) -> lines (inserts, deletes)


def _key(line: str) -> str:
    """How lines are aligned: a counter line by its label alone, so a count the edit (or a
    use since) changed lines up with itself instead of blurring the hunks around it."""
    if not is_counter_line(line):
        return line
    m = _LABEL.match(line)
    return "\x00counter " + (m.group(1).casefold() if m else line)


def _patch_side(base: list[str], other: list[str]) -> _Side:
    lines: dict[int, str] = {}
    spans: list[tuple[int, int, list[str]]] = []
    # what both share at the ends is left out of the diff: most of a file, most times;
    # junk on: blank and counter lines are too common to anchor on, and would make a long
    # registry's diff quadratic; runs still extend across them
    for tag, i1, i2, j1, j2 in Pinned(base, other, min(len(base), len(other)), _key).get_opcodes():
        if tag == "equal":  # equal keys: a counter's value may still differ
            lines.update(
                (i1 + k, other[j1 + k]) for k in range(i2 - i1) if base[i1 + k] != other[j1 + k]
            )
        elif tag == "replace" and i2 - i1 == j2 - j1:
            lines.update((i1 + k, other[j1 + k]) for k in range(i2 - i1))
        else:
            spans.append((i1, i2, other[j1:j2]))
    return _Side(lines, spans)


def _clash(a: _Side, b: _Side) -> int | None:
    """The first base line where a span of one side meets any change of the other."""
    for one, two in ((a, b), (b, a)):
        for i1, i2, _ in one.spans:
            if any(i1 <= k < i2 for k in two.lines):
                return i1
            for o1, o2, _ in two.spans:
                overlap = i1 < o2 and o1 < i2
                inside = i1 == i2 and o1 < i1 < o2  # an insertion inside the other's span
                both_insert = i1 == i2 == o1 == o2  # two insertions at one place: which first?
                if overlap or inside or both_insert:
                    return i1
    return None


def _value(line: str) -> str:
    m = _VALUE.match(line.rstrip("\r\n"))
    return m.group(1) if m else ""


def _counter(base: str, back: str, now: str) -> str | None:
    """A counter line both sides changed, reconciled; None when it cannot be."""
    if not (is_counter_line(base) and is_counter_line(back) and is_counter_line(now)):
        return None
    label = now.casefold()
    if config.LAST_USED_LABEL.casefold() in label:
        return now  # the later date: a use since the edit set it to its own day
    if config.COUNT_LABEL.casefold() not in label:
        return None
    added_by_edit = [whole_count(_value(x)) for x in (base, back)]
    current = whole_count(_value(now))
    if added_by_edit[0] is None or added_by_edit[1] is None or current is None:
        return None
    value = current - (added_by_edit[0] - added_by_edit[1])
    if value < 0:
        return None
    end = now[len(now.rstrip("\r\n")) :]
    return replace_counter_value(now, str(value)) + end


def take_off(base: str, back: str, now: str, where: str) -> str:
    """``now`` with the change ``back`` -> ``base`` undone (see the module docstring)."""
    b, u, n = split_lines(base), split_lines(back), split_lines(now)
    undo, since = _patch_side(b, u), _patch_side(b, n)
    at = _clash(undo, since)
    if at is not None:
        raise GateRefused(
            f"{where}: line {at + 1} was edited since, where the merge wrote; nothing restored"
        )
    inserts: dict[int, list[str]] = {}
    replaced: dict[int, tuple[int, list[str]]] = {}
    for side in (undo, since):
        for i1, i2, lines in side.spans:
            if i1 == i2:
                inserts.setdefault(i1, []).extend(lines)
            else:
                replaced[i1] = (i2, lines)
    out: list[str] = []
    k = 0
    while k <= len(b):
        out.extend(inserts.get(k, ()))
        if k == len(b):
            break
        if k in replaced:
            k, lines = replaced[k]
            out.extend(lines)
            continue
        mine, theirs = undo.lines.get(k), since.lines.get(k)
        if theirs is None:
            out.append(b[k] if mine is None else mine)
        elif mine is None or mine == theirs:
            out.append(theirs)
        else:
            merged = _counter(b[k], mine, theirs)
            if merged is None:
                raise GateRefused(
                    f"{where}: line {k + 1} was edited since, where the merge wrote; "
                    "nothing restored"
                )
            out.append(merged)
        k += 1
    return "".join(out)
