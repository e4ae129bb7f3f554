"""Three-way merge of a registry file, for git's merge driver (``vaultkeeper merge-driver``).

Two machines that each count a use of one pattern both edit its ``**success count:**``
line; git alone would report a conflict, and a person picking one side loses a use.
Here the counters are merged by arithmetic and everything else exactly as git would:

- count = base + (ours - base) + (theirs - base), a block new on a side having base 0;
- last used = the later date; promoted = kept, the earlier date when both sides have it;
- a block one side deleted (a person pruned it) while the other only counted uses stays
  deleted; the uses are named in a note instead of vanishing silently.

How: in all three versions each counter line's value is set to the merged value, so
git's own ``git merge-file`` sees no change on those lines and merges the rest of the
text line by line (conflict markers included) as it would have without counters.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.registry.blocks import RegistryBlock, is_counter_line, parse_blocks
from vaultkeeper.store.edit import BOM, insert_line_after, replace_counter_value
from vaultkeeper.store.fsio import atomic_write
from vaultkeeper.store.model import ParseError, decode, parse_date, split_lines

LABELS = ("ours", "base", "theirs")  # conflict-marker labels, in git merge-file's order
_KINDS = ("count", "last_used", "promoted")  # RegistryBlock's <kind>_line fields


@dataclass(frozen=True)
class MergeResult:
    """The merged text, how many conflicts git marked in it, and notes for stderr."""

    text: bytes
    conflicts: int
    notes: tuple[str, ...]


def merge_files(base: Path, ours: Path, theirs: Path, path_label: str | None = None) -> MergeResult:
    """Merge the three files and write the result to ``ours`` atomically (git's %A)."""
    label = path_label or str(ours)
    return merge_three(base, ours, theirs, lambda b, o, t: merge_bytes(b, o, t, label))


def merge_bytes(base: bytes, ours: bytes, theirs: bytes, path_label: str) -> MergeResult:
    """The merge of three registry files' bytes (see the module docstring).

    A version that is not UTF-8 text is merged by ``git merge-file`` alone, as git
    would have merged it without this driver.
    """
    try:
        texts = [decode(raw) for raw in (base, ours, theirs)]
    except ParseError:
        merged, conflicts = git_merge_file(ours, base, theirs)
        return MergeResult(merged, conflicts, ())
    bom = BOM.encode("utf-8") if ours.startswith(BOM.encode("utf-8")) else b""
    result = merge_texts(texts[0], texts[1], texts[2], path_label)
    return MergeResult(bom + result.text, result.conflicts, result.notes)


def merge_texts(base: str, ours: str, theirs: str, path_label: str) -> MergeResult:
    """The merge of three registry texts (BOM-free); the result is UTF-8 without a BOM."""
    where = Path(path_label)
    b, o, t = (parsed_version(where, path_label, text) for text in (base, ours, theirs))
    o, t = aligned(b, o), aligned(b, t)
    notes: list[str] = []
    keep_promoted: dict[Key, str] = {}
    keys = list(dict.fromkeys([*b.blocks, *o.blocks, *t.blocks]))
    old = {name for name, _ in b.blocks}
    fresh = {id(v): [x for (n, _), x in v.blocks.items() if n not in old] for v in (o, t)}
    moves: set[int] = set()  # blocks that are a base block renamed
    for key in keys:
        bb, ob, tb = b.blocks.get(key), o.blocks.get(key), t.blocks.get(key)
        if ob is not None and tb is not None:
            _merge_counters(key, (b, o, t), (bb, ob, tb), keep_promoted)
        elif bb is not None and (ob is not None or tb is not None):
            side = o if ob is None else t
            moved = renamed(b, bb, side, fresh[id(side)])
            if moved is not None:  # the same body under a new heading: merge its counters
                moves.add(id(moved))
                trio = (bb, moved, tb) if tb is not None else (bb, ob or moved, moved)
                _merge_counters(key, (b, o, t), trio, keep_promoted)
                continue
            note = _deleted_on_one_side(path_label, bb, (o, ob) if ob else (t, tb), ob is None)
            if note:
                notes.append(note)
    twins = [k for k in o.blocks if k not in b.blocks and _same_text(o, t, k)]
    mine = [k for k, x in o.blocks.items() if _one_sided(k, x, b, t, moves)]
    yours = [k for k, x in t.blocks.items() if _one_sided(k, x, b, o, moves)]
    aside = [f for _, f in set_aside(o, mine + twins)]
    aside += [f for k, f in set_aside(t, yours + twins) if k not in twins]
    merged, conflicts = git_merge_file(*("".join(v.lines).encode("utf-8") for v in (o, b, t)))
    if aside:
        merged = put_back(where, path_label, merged.decode("utf-8"), aside).encode("utf-8")
    if conflicts == 0 and keep_promoted:
        text = _put_back_promoted(where, path_label, merged.decode("utf-8"), keep_promoted)
        merged = text.encode("utf-8")
    return MergeResult(merged, conflicts, tuple(notes))


def _same_text(ours: Version, theirs: Version, key: Key) -> bool:
    """Whether a block both sides have reads the same on both (counters merged already)."""
    o, t = ours.blocks.get(key), theirs.blocks.get(key)
    if o is None or t is None:
        return False
    return ours.lines[o.line - 1 : o.end_line] == theirs.lines[t.line - 1 : t.end_line]


def _one_sided(
    key: Key, block: RegistryBlock, base: Version, other: Version, moves: set[int]
) -> bool:
    """A block new on one side only (see set_aside below), not another block renamed."""
    return key not in base.blocks and key not in other.blocks and id(block) not in moves


def _set(version: Version, line_no: int | None, value: str) -> None:
    """Set the counter value on 1-based ``line_no``, keeping its label and line ending."""
    if line_no is None:
        return
    line = version.lines[line_no - 1]
    ending = line[len(line.rstrip("\r\n")) :]
    version.lines[line_no - 1] = replace_counter_value(line, value) + ending


def _promoted_date(raw: str | None) -> dt.date | None:
    return parse_date(raw.split()[0]) if raw and raw.split() else None


def merged_values(
    base: RegistryBlock | None, ours: RegistryBlock, theirs: RegistryBlock
) -> dict[str, str]:
    """The merged value of each counter that can be merged by its rule.

    A counter is left out (and merged as plain text) when a version's value can't be
    read, or when neither side has its line.
    """
    out: dict[str, str] = {}
    present = [x for x in (base, ours, theirs) if x is not None]
    if all(x.count is not None for x in present):
        b = base.count if base is not None and base.count is not None else 0
        o, t = ours.count or 0, theirs.count or 0
        count = max(0, b + (o - b) + (t - b))
        if len(str(count)) <= config.COUNT_MAX_DIGITS:
            out["count"] = str(count)
    if all(x.last_used_raw is None or x.last_used is not None for x in present):
        dates = [x.last_used for x in (ours, theirs) if x.last_used is not None]
        if dates:
            out["last_used"] = max(dates).isoformat()
    sides = [x.promoted for x in (ours, theirs) if x.promoted is not None]
    if sides and all(x.promoted is None or _promoted_date(x.promoted) for x in present):
        out["promoted"] = min(sides, key=lambda raw: _promoted_date(raw) or dt.date.max)
    return out


def _merge_counters(
    key: Key,
    versions: tuple[Version, Version, Version],
    blocks: tuple[RegistryBlock | None, RegistryBlock, RegistryBlock],
    keep_promoted: dict[Key, str],
) -> None:
    values = merged_values(*blocks)
    for kind, value in values.items():
        for version, block in zip(versions, blocks, strict=True):
            if block is not None:
                _set(version, getattr(block, f"{kind}_line"), value)
    base = blocks[0]
    if "promoted" in values and base is not None and base.promoted is not None:
        # git would take a side's removal of the line; the rule keeps it
        side = blocks[1] if blocks[1].promoted == values["promoted"] else blocks[2]
        line_no = side.promoted_line
        side_version = versions[1] if side is blocks[1] else versions[2]
        if line_no is not None:
            keep_promoted[key] = side_version.lines[line_no - 1].rstrip("\r\n")


def _deleted_on_one_side(
    label: str,
    base_block: RegistryBlock,
    kept: tuple[Version, RegistryBlock | None],
    ours_deleted: bool,
) -> str | None:
    """A block deleted on one side and kept on the other: if the keeping side changed only
    its counters, set them back to the base's values so git's deletion goes through, and
    say how many uses that drops. Any other change is git's to merge (a conflict)."""
    version, block = kept
    if block is None:
        return None
    before = list(version.lines)
    for kind in _KINDS:
        raw = _raw(base_block, kind)
        if raw is not None and getattr(block, f"{kind}_line") is not None:
            _set(version, getattr(block, f"{kind}_line"), raw)
    start, end = block.line - 1, block.end_line
    if "".join(version.lines[start:end]) != base_block.text or _has_extra_counter(
        block, base_block
    ):
        version.lines[:] = before  # more than counters changed: git decides (a conflict)
        return None
    uses = (block.count or 0) - (base_block.count or 0)
    if uses == 0 and block.last_used_raw == base_block.last_used_raw:
        return None
    deleter, keeper = ("ours", "theirs") if ours_deleted else ("theirs", "ours")
    return (
        f"{label}:{base_block.line}: ### {base_block.name} was deleted on {deleter} and stays "
        f"deleted; {uses} use(s) counted on {keeper} (last used "
        f"{block.last_used_raw or 'never'}) are not kept"
    )


def _has_extra_counter(block: RegistryBlock, base_block: RegistryBlock) -> bool:
    return any(
        getattr(block, f"{kind}_line") is not None and _raw(base_block, kind) is None
        for kind in _KINDS
    )


def _raw(block: RegistryBlock, kind: str) -> str | None:
    return block.promoted if kind == "promoted" else getattr(block, f"{kind}_raw")


def _put_back_promoted(where: Path, label: str, text: str, keep: dict[Key, str]) -> str:
    """A promoted line either side had is kept, even where the other side removed it."""
    blocks = parsed_version(where, label, text).blocks
    missing: list[tuple[int, str]] = []
    for key, line in keep.items():
        block = blocks.get(key)
        if block is not None and block.promoted is None:
            anchor = max(n for n in (block.line, block.count_line, block.last_used_line) if n)
            missing.append((anchor, line))
    for anchor, line in sorted(missing, reverse=True):  # bottom up: anchors stay valid
        text = insert_line_after(text, anchor, line)
    return text


# -- which block is which across the three versions ---------------------------------------

Key = tuple[str, int]  # a block's name and which block of that name (0 = the first)


@dataclass(frozen=True)
class Version:
    lines: list[str]
    blocks: dict[Key, RegistryBlock]


def parsed_version(where: Path, label: str, text: str) -> Version:
    seen: dict[str, int] = {}
    blocks: dict[Key, RegistryBlock] = {}
    for block in parse_blocks(where, label, text):
        n = seen.get(block.name, 0)
        seen[block.name] = n + 1
        blocks[(block.name, n)] = block
    return Version(split_lines(text), blocks)


def aligned(base: Version, side: Version) -> Version:
    """``side`` with its blocks keyed as base's: where a name has several blocks, a side's
    block takes the key of the base block with its body (a side that deleted the first
    of two ``### foo`` keeps the second's key), the rest the remaining keys in order."""
    names = {name for name, n in base.blocks if n} | {name for name, n in side.blocks if n}
    if not names:
        return side
    blocks: dict[Key, RegistryBlock] = {}
    for name in dict.fromkeys(name for name, _ in side.blocks):
        mine = [x for (n, _), x in side.blocks.items() if n == name]
        if name not in names:
            blocks[(name, 0)] = mine[0]
            continue
        free = [key for key in base.blocks if key[0] == name]
        bodies = {key: _body(base.blocks[key]) for key in free}
        left: list[RegistryBlock] = []
        for block in mine:
            key = next((k for k in free if bodies[k] == _body(block)), None)
            if key is None:
                left.append(block)
            else:
                free.remove(key)
                blocks[key] = block
        extra = max((n for m, n in base.blocks if m == name), default=-1) + 1
        for block in left:
            key = free.pop(0) if free else (name, extra)
            extra += key == (name, extra)
            blocks[key] = block
    order = {id(x): i for i, x in enumerate(side.blocks.values())}
    return Version(side.lines, dict(sorted(blocks.items(), key=lambda kv: order[id(kv[1])])))


def _body(block: RegistryBlock) -> list[str]:
    """A block's lines without its heading and counter lines (blank lines dropped)."""
    lines = split_lines(block.text)[1:]
    return [x.rstrip() for x in lines if x.strip() and not is_counter_line(x)]


def renamed(
    base: Version, base_block: RegistryBlock, side: Version, fresh: list[RegistryBlock]
) -> RegistryBlock | None:
    """The block among a side's new ones (``fresh``) that is ``base_block`` renamed, if
    one is: the one new block with its body, a body no other base block has, in its
    place (after the same block), its counters not below the base's. A block that was
    deleted and an unrelated new one that happens to share its body are two blocks."""
    body = _body(base_block)
    same = [x for x in fresh if _body(x) == body]
    if not body or len(same) != 1 or sum(_body(x) == body for x in base.blocks.values()) > 1:
        return None
    block = same[0]
    if (block.count or 0) < (base_block.count or 0) or (
        base_block.last_used is not None
        and (block.last_used is None or block.last_used < base_block.last_used)
    ):
        return None
    return block if _before(base, base_block) == _before(side, block) else None


def _before(version: Version, block: RegistryBlock) -> str | None:
    """The name of the block just above ``block`` in ``version`` (None: it is first)."""
    above = [x.name for x in version.blocks.values() if x.line < block.line]
    return above[-1] if above else None


# -- blocks new on one side: set aside, put back whole -----------------------------------
#
# Two machines that each append a pattern between two syncs add different lines at the
# same spot (the end of the file), and git's line merge then holds only the two headings
# and descriptions in its conflict hunk, the shared counter lines below it: keeping both
# sides leaves the first block with no counters. A block only one side has (not in the
# base, not on the other side, not another block renamed) is therefore taken out of that
# side before the text merge and put back afterwards, whole, right after the block that
# preceded it on its side (the nearest one the merged file still has; else before the
# first block, or at the end). Blocks put after the same block keep ours' order first,
# then theirs'. A block new on both sides with the same text once its counters are
# merged (two machines first citing the same auto memories, in another order) is taken
# out of both and put back once, where ours has it.


@dataclass(frozen=True)
class Fresh:
    """A block set aside: its lines, and the blocks above it on its side (nearest first)."""

    lines: tuple[str, ...]
    above: tuple[str, ...]  # the names of the side's blocks above it, nearest first


def set_aside(side: Version, keys: list[Key]) -> list[tuple[Key, Fresh]]:
    """Take the blocks ``keys`` of ``side`` out of its lines (with the blank lines that
    part each from the block above; the first block, those below it); return them in
    file order. ``side.lines`` is changed in place."""
    if not keys:
        return []
    chosen = {id(side.blocks[k]) for k in keys}
    key_of = {id(block): key for key, block in side.blocks.items()}
    ordered = list(side.blocks.values())
    out: list[tuple[Key, Fresh]] = []
    cut: list[tuple[int, int]] = []
    for i, block in enumerate(ordered):
        if id(block) not in chosen:
            continue
        above = tuple(x.name for x in reversed(ordered[:i]) if id(x) not in chosen)
        lines = side.lines[block.line - 1 : block.end_line]
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += _ending(lines[0])
        out.append((key_of[id(block)], Fresh(tuple(lines), above)))
        start, end = block.line - 1, block.end_line
        if i:  # the blank lines that part it from the block above go with it
            while start > 0 and not side.lines[start - 1].strip():
                start -= 1
        else:  # the first block: those below it (the text above is not a block's)
            while end < len(side.lines) and not side.lines[end].strip():
                end += 1
        cut.append((start, end))
    for start, end in reversed(cut):
        del side.lines[start:end]
    return out


def put_back(where: Path, label: str, text: str, fresh: list[Fresh]) -> str:
    """``text`` with the set-aside blocks put back (see the module docstring)."""
    if not fresh:
        return text
    lines = split_lines(text)
    blocks = list(parsed_version(where, label, text).blocks.values())
    by_name: dict[str, RegistryBlock] = {}
    for block in blocks:
        by_name.setdefault(block.name, block)
    groups: dict[int, list[str]] = {}  # insert before this 0-based line -> lines
    for item in fresh:
        anchor = next((by_name[n] for n in item.above if n in by_name), None)
        if anchor is not None:
            at, chunk = anchor.end_line, [_ending(item.lines[0]), *item.lines]
        elif blocks:
            at, chunk = blocks[0].line - 1, [*item.lines, _ending(item.lines[0])]
        else:
            at = len(lines)
            gap = [_ending(item.lines[0])] if lines and lines[-1].strip() else []
            chunk = [*gap, *item.lines]
        groups.setdefault(at, []).extend(chunk)
    if lines and not lines[-1].endswith("\n") and len(lines) in groups:
        lines[-1] += "\n"
    for at in sorted(groups, reverse=True):
        lines[at:at] = groups[at]
    return "".join(lines)


def _ending(line: str) -> str:
    return "\r\n" if line.endswith("\r\n") else "\n"


def git_merge_file(ours: bytes, base: bytes, theirs: bytes) -> tuple[bytes, int]:
    """``git merge-file -p``: the merged bytes and the number of conflicts git marked."""
    git = shutil.which("git")
    if git is None:
        raise VaultkeeperError("git: not found on PATH; the merge driver runs git merge-file")
    with tempfile.TemporaryDirectory(prefix="vaultkeeper-merge-") as tmp:
        argv = [git, "merge-file", "-p"]
        for label, data in zip(LABELS, (ours, base, theirs), strict=True):
            Path(tmp, label).write_bytes(data)
            argv += ["-L", label]
        done = subprocess.run(
            [*argv, *(os.path.join(tmp, x) for x in LABELS)], capture_output=True, check=False
        )
    if done.returncode < 0 or done.returncode > 127:
        why = " ".join(done.stderr.decode("utf-8", "replace").split()) or f"exit {done.returncode}"
        raise VaultkeeperError(f"git merge-file failed: {why}")
    return done.stdout, done.returncode


def merge_three(
    base: Path, ours: Path, theirs: Path, merge: Callable[[bytes, bytes, bytes], MergeResult]
) -> MergeResult:
    """Read git's three files, merge their bytes with ``merge`` and write the result to
    ``ours`` atomically (git's %A): the file half every merge driver shares."""
    try:
        raw = [p.read_bytes() for p in (base, ours, theirs)]
    except OSError as exc:
        raise VaultkeeperError(f"{exc.filename}: cannot read: {exc.strerror or exc}") from None
    result = merge(raw[0], raw[1], raw[2])
    atomic_write(ours, result.text)
    return result
