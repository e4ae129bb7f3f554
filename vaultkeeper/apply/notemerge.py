"""Three-way merge of a note's receipt lists, for git (``projects/**/*.md``).

``apply revalidate``, ``reactivate`` and ``supersede`` append to a lesson's frontmatter
lists on one line (``provenance: ["a", "b"]``, ``sources``, ``supersedes``). Two
machines that both re-check one held-out lesson due between two syncs (each brief shows
it) append different receipts to the same line, and git stops there although nothing
disagrees. Here such a list, changed on both sides, becomes the union: the base's items
both sides kept, then ours' new ones, then theirs' (each once), written as
``append_to_list`` writes it, in all three versions; then ``git merge-file`` merges the
rest of the note as git would. A different ``status`` on each side (one machine passed
the lesson, the other failed it) is a real disagreement and stays a conflict; so is a
list a person wrote in another shape.

A skill ``apply promote`` wrote (``skills/NAME/SKILL.md``) merges the same way: its
promotion line and its Evidence receipts (``merge_skill_files``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path, PurePosixPath

import yaml

from vaultkeeper import config
from vaultkeeper.registry.merge import MergeResult, git_merge_file, merge_three
from vaultkeeper.store.edit import BOM, quoted
from vaultkeeper.store.model import ParseError, decode, split_lines

LISTS = ("provenance", "sources", "supersedes")  # what apply appends receipts to
_FENCE = "---"
_LINE = re.compile(r"^(?P<key>[A-Za-z_]+):[ \t]*(?P<value>\[.*\])[ \t]*$")


def is_note_path(path: str | None) -> bool:
    """A note under ``projects/`` (the folder git's attribute sends here)."""
    if not path:
        return False
    parts = PurePosixPath(path.replace("\\", "/")).parts
    return path.endswith(".md") and config.PROJECTS_DIR in parts[:-1]


def merge_note_files(base: Path, ours: Path, theirs: Path) -> MergeResult:
    return merge_three(base, ours, theirs, merge_note_bytes)


def merge_note_bytes(base: bytes, ours: bytes, theirs: bytes) -> MergeResult:
    return _merge_rewritten(base, ours, theirs, _union_lists)


def _merge_rewritten(
    base: bytes, ours: bytes, theirs: bytes, rewrite: Callable[[list[list[str]]], None]
) -> MergeResult:
    """``rewrite`` the three versions' lines in place (base, ours, theirs) so that what
    both sides added agrees, then ``git merge-file`` the rest; text that does not decode
    is merged by git as it is. Ours' BOM is kept."""
    bom = BOM.encode("utf-8")
    try:
        versions = [split_lines(decode(raw)) for raw in (base, ours, theirs)]
    except ParseError:
        merged, conflicts = git_merge_file(ours, base, theirs)
        return MergeResult(merged, conflicts, ())
    rewrite(versions)
    b, o, t = ("".join(v).encode("utf-8") for v in versions)
    merged, conflicts = git_merge_file(o, b, t)
    return MergeResult((bom if ours.startswith(bom) else b"") + merged, conflicts, ())


def _union_lists(versions: list[list[str]]) -> None:
    """Each one-line list changed on both sides becomes the union, in all three versions."""
    found = [_lists(v) for v in versions]
    for key in LISTS:
        b, o, t = (f.get(key) for f in found)
        if o is None or t is None or o[1] == t[1] or b is not None and b[1] in (o[1], t[1]):
            continue  # one side alone changed it (or neither): git's merge is right
        old = b[1] if b is not None else []
        items = [x for x in old if x in o[1] and x in t[1]]
        for item in (*o[1], *t[1]):
            if item not in old and item not in items:
                items.append(item)
        line = f"{key}: [{', '.join(quoted(x) for x in items)}]"
        for lines, lists in zip(versions, found, strict=True):
            if key in lists:
                at = lists[key][0]
                lines[at] = line + lines[at][len(lines[at].rstrip("\r\n")) :]


def _lists(lines: list[str]) -> dict[str, tuple[int, list[str]]]:
    """key -> (line index, items) of each one-line list of strings in the frontmatter."""
    out: dict[str, tuple[int, list[str]]] = {}
    if not lines or lines[0].rstrip("\r\n") != _FENCE:
        return out
    for i in range(1, len(lines)):
        body = lines[i].rstrip("\r\n")
        if body == _FENCE:
            break
        found = _LINE.match(body)
        if found is None or found.group("key") not in LISTS:
            continue
        try:
            value = yaml.safe_load(found.group("value"))
        except yaml.YAMLError:
            continue
        if isinstance(value, list) and all(isinstance(x, str) for x in value):
            out[found.group("key")] = (i, value)
    return out


SKILL_FILE = config.SKILL_FILE
_PROMOTED = re.compile(r"^Promoted from .* on (\d{4}-\d{2}-\d{2}) \(success count (\d+)\)\.$")
_ITEM = re.compile(r"^- (.+) \(added (\d{4}-\d{2}-\d{2})\)$")
_EVIDENCE = re.compile(r"^##[ \t]+Evidence[ \t]*$", re.I)
_HEADING = re.compile(r"^#{1,6}[ \t]")


def evidence_span(lines: list[str]) -> tuple[int, int] | None:
    """(heading index, end index) of a skill's ``## Evidence`` section, or None."""
    head = next((i for i, x in enumerate(lines) if _EVIDENCE.match(_body(x))), None)
    if head is None:
        return None
    stop = next((i for i in range(head + 1, len(lines)) if _HEADING.match(lines[i])), len(lines))
    return head, stop


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
    return _merge_rewritten(base, ours, theirs, _merge_skill_lines)


def _merge_skill_lines(versions: list[list[str]]) -> None:
    _merge_promoted(versions)
    _merge_evidence(versions)


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
    span = evidence_span(lines)
    if span is None:
        return None
    head, stop = span
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
