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
"""

from __future__ import annotations

import re
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
    bom = BOM.encode("utf-8")
    try:
        versions = [split_lines(decode(raw)) for raw in (base, ours, theirs)]
    except ParseError:
        merged, conflicts = git_merge_file(ours, base, theirs)
        return MergeResult(merged, conflicts, ())
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
    b_, o_, t_ = ("".join(v).encode("utf-8") for v in versions)
    merged, conflicts = git_merge_file(o_, b_, t_)
    return MergeResult((bom if ours.startswith(bom) else b"") + merged, conflicts, ())


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
