"""Three-way merge of a skill ``apply promote`` wrote (``skills/NAME/SKILL.md``), for git.

Two machines that both promote one pattern between two syncs (it crossed the threshold
on both) write two files that differ only in what the promotion put in figures: the
line ``Promoted from ... on DATE (success count N).`` and the receipt in the Evidence
section; git stops on them (add/add). Here those figures merge deterministically,
whichever side is ours:

- the promotion line: the earlier promotion's (then the lower count, then the text);
- the Evidence list: every receipt either side listed, each once (the earlier date
  where both added it), the base's in their order (one a side removed stays removed),
  then the new ones by date and receipt.

Both are put in all three versions, then ``git merge-file`` merges the rest of the text
as git would (a person's edits on both sides of one line are still a conflict). An
Evidence section holding anything but receipt lines is left to git.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from vaultkeeper import config
from vaultkeeper.registry.merge import MergeResult, git_merge_file, merge_three
from vaultkeeper.store.edit import BOM
from vaultkeeper.store.model import ParseError, decode, split_lines

SKILL_FILE = "SKILL.md"
_PROMOTED = re.compile(r"^Promoted from .* on (\d{4}-\d{2}-\d{2}) \(success count (\d+)\)\.$")
_ITEM = re.compile(r"^- (.+) \(added (\d{4}-\d{2}-\d{2})\)$")
_EVIDENCE = re.compile(r"^##[ \t]+Evidence[ \t]*$", re.I)
_HEADING = re.compile(r"^#{1,6}[ \t]")


def is_skill_path(path: str | None) -> bool:
    """Whether git's %P names a skill promote writes: ``skills/NAME/SKILL.md``."""
    if not path:
        return False
    parts = PurePosixPath(path.replace("\\", "/")).parts
    return len(parts) >= 3 and parts[-1] == SKILL_FILE and parts[-3] == config.SKILLS_DIR


def merge_skill_files(base: Path, ours: Path, theirs: Path) -> MergeResult:
    """Merge the three files and write the result to ``ours`` atomically (git's %A)."""
    return merge_three(base, ours, theirs, merge_skill_bytes)


def merge_skill_bytes(base: bytes, ours: bytes, theirs: bytes) -> MergeResult:
    bom = BOM.encode("utf-8")
    try:
        versions = [split_lines(decode(raw)) for raw in (base, ours, theirs)]
    except ParseError:
        merged, conflicts = git_merge_file(ours, base, theirs)
        return MergeResult(merged, conflicts, ())
    _merge_promoted(versions)
    _merge_evidence(versions)
    b, o, t = ("".join(v).encode("utf-8") for v in versions)
    merged, conflicts = git_merge_file(o, b, t)
    return MergeResult((bom if ours.startswith(bom) else b"") + merged, conflicts, ())


def _body(line: str) -> str:
    return line.rstrip("\r\n")


def _promoted_at(lines: list[str]) -> int | None:
    return next((i for i, x in enumerate(lines) if _PROMOTED.match(_body(x))), None)


def _merge_promoted(versions: list[list[str]]) -> None:
    at = [_promoted_at(v) for v in versions]
    sides = [_body(v[i]) for v, i in zip(versions[1:], at[1:], strict=True) if i is not None]
    if len(set(sides)) < 2:
        return

    def rank(line: str) -> tuple[str, int, str]:
        found = _PROMOTED.match(line)
        assert found is not None
        return found.group(1), int(found.group(2)), line

    chosen = min(sides, key=rank)
    for lines, i in zip(versions, at, strict=True):
        if i is not None:
            lines[i] = chosen + lines[i][len(_body(lines[i])) :]


def _section(lines: list[str]) -> tuple[int, int, dict[str, str]] | None:
    """(heading index, end index, receipt -> item line) of the Evidence section, or None
    when there is none or it holds anything but receipt lines and blank lines."""
    head = next((i for i, x in enumerate(lines) if _EVIDENCE.match(_body(x))), None)
    if head is None:
        return None
    stop = next((i for i in range(head + 1, len(lines)) if _HEADING.match(lines[i])), len(lines))
    items: dict[str, str] = {}
    for line in lines[head + 1 : stop]:
        found = _ITEM.match(_body(line))
        if found is None and line.strip():
            return None
        if found is not None:
            items.setdefault(found.group(1), _body(line))
    return head, stop, items


def _merge_evidence(versions: list[list[str]]) -> None:
    sections = [_section(v) for v in versions]
    base, ours, theirs = (s[2] if s else None for s in sections)
    if ours is None or theirs is None or ours == theirs:
        return
    old = base or {}
    kept = [line for r, line in old.items() if r in ours and r in theirs]
    new: dict[str, str] = {}
    for side in (ours, theirs):
        for receipt, line in side.items():
            if receipt not in old:
                new[receipt] = min(new.get(receipt, line), line, key=_added)
    merged = kept + sorted(new.values(), key=lambda line: (_added(line), line))
    for lines, section in zip(versions, sections, strict=True):
        if section is None:
            continue
        head, stop, _ = section
        nl = "\r\n" if lines[head].endswith("\r\n") else "\n"
        tail = 0  # the blank lines that end the section stay
        while stop - tail - 1 > head and not lines[stop - tail - 1].strip():
            tail += 1
        last = stop == len(lines) and tail == 0 and not lines[-1].endswith("\n")
        body = [f"{nl}", *(f"{line}{nl}" for line in merged)]
        if last:
            body[-1] = body[-1][: -len(nl)]
        lines[head + 1 : stop - tail] = body


def _added(line: str) -> str:
    found = _ITEM.match(line)
    return found.group(2) if found else ""
