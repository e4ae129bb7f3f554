"""Three-way merge of an index file (``_index.md``, ``_index/_index-<folder>.md``) for git.

Two machines that each run ``vaultkeeper new`` both add a line at the same spot of the
generated list, and git alone stops the pull with a conflict although nothing really
disagrees. Here the list between the markers is merged entry by entry, keyed by link
target: an entry added on a side is kept, one deleted on a side and unchanged on the
other is deleted, one changed on one side takes that side's line. The merged entries
are rendered by vaultkeeper.index.rows, so the list reads as ``vaultkeeper index``
writes it; the text outside the markers is merged by ``git merge-file`` (the merged
list is put in all three versions first, so git sees no change there).

Anything else goes to git's plain text merge of the whole file, conflict markers
included: an entry changed differently on both sides (or deleted on one, changed on
the other), a version whose list is not vaultkeeper's own format (it must read back to
the same bytes), markers missing or doubled, a file that is not UTF-8.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from vaultkeeper import config
from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.index.files import check_markers, is_index_name, with_section
from vaultkeeper.index.rows import ROOT_GROUP, Entry, render_entries
from vaultkeeper.registry.merge import MergeResult, git_merge_file, merge_three
from vaultkeeper.store.edit import BOM
from vaultkeeper.store.model import ParseError, decode

_LINE = re.compile(r"^- \[\[([^\[\]\r\n]+)\]\](.*)$")
_HEADING = "## "


@dataclass(frozen=True)
class _Item:
    """One listed entry: its group and the rest of its line, apart from the link."""

    folder: str
    description: str
    keywords: str | None


_Listing = dict[str, _Item]  # link target -> entry


def is_index_path(path: str | None) -> bool:
    """Whether git's %P names an index file of a vault: ``_index.md`` or a sub-index
    (in ``_index/``, or at the root where older versions wrote it), not a file under
    patterns/ (the vault may sit in a folder of the repository)."""
    if not path:
        return False
    parts = PurePosixPath(path.replace("\\", "/")).parts
    return is_index_name(parts[-1]) and config.PATTERNS_DIR not in parts[:-1]


def merge_index_files(base: Path, ours: Path, theirs: Path) -> MergeResult:
    """Merge the three index files and write the result to ``ours`` atomically (%A)."""
    return merge_three(base, ours, theirs, merge_index_bytes)


def merge_index_bytes(base: bytes, ours: bytes, theirs: bytes) -> MergeResult:
    """The merge of three index files' bytes (see the module docstring)."""
    bom = BOM.encode("utf-8")
    try:
        texts = [decode(raw) for raw in (base, ours, theirs)]
    except ParseError:
        texts = []
    merged = merge_index_texts(*texts) if texts else None
    if merged is None:
        text, conflicts = git_merge_file(ours, base, theirs)
        return MergeResult(text, conflicts, ())
    text, conflicts = merged
    return MergeResult((bom if ours.startswith(bom) else b"") + text, conflicts, ())


def merge_index_texts(base: str, ours: str, theirs: str) -> tuple[bytes, int] | None:
    """The merged file (UTF-8, no BOM) and git's conflict count, or None when the lists
    cannot be merged entry by entry (the caller then merges the whole file as text)."""
    listings = [_listing(text) for text in (base, ours, theirs)]
    b, o, t = listings
    if b is None or o is None or t is None:
        return None
    merged: _Listing = {}
    for link in dict.fromkeys([*b, *o, *t]):
        bi, oi, ti = b.get(link), o.get(link), t.get(link)
        if oi == ti or ti == bi:
            chosen = oi
        elif oi == bi:
            chosen = ti
        else:
            return None  # both sides changed this entry, differently
        if chosen is not None:
            merged[link] = chosen
    lines = render_listing(merged)
    versions = [with_section(text, lines).encode("utf-8") for text in (ours, base, theirs)]
    return git_merge_file(*versions)


def render_listing(listing: _Listing) -> list[str]:
    """The section's lines for ``listing``, rendered by ``vaultkeeper index``'s own code."""
    entries = [Entry(link, i.folder, i.description, (link, "")) for link, i in listing.items()]
    keywords = {(link, ""): i.keywords for link, i in listing.items() if i.keywords is not None}
    return render_entries(entries, keywords)


def _listing(text: str) -> _Listing | None:
    """The entries listed between the markers, or None when ``text`` has no one pair of
    markers or its list does not read back to the same text (a person's own format)."""
    if not text:  # added on both sides (git's base is then empty): nothing listed yet
        return {}
    try:
        check_markers(config.INDEX_FILE, text)
    except VaultkeeperError:
        return None
    start = text.find(config.INDEX_START)
    if start == -1:
        return None
    end = text.find(config.INDEX_END, start)
    listing: _Listing = {}
    folder: str | None = None
    for line in text[start + len(config.INDEX_START) : end].splitlines():
        match = _LINE.match(line)
        if line.startswith(_HEADING):
            name = line[len(_HEADING) :]
            folder = "" if name == ROOT_GROUP else name
        elif match is not None and folder is not None and match.group(1) not in listing:
            listing[match.group(1)] = _item(folder, match.group(2))
        elif line:
            return None
    if with_section(text, render_listing(listing)) != text:
        return None
    return listing


def _item(folder: str, rest: str) -> _Item:
    mark = rest.rfind(config.INDEX_KEYWORDS_MARK)
    keywords = None if mark == -1 else rest[mark + len(config.INDEX_KEYWORDS_MARK) :]
    head = rest if mark == -1 else rest[:mark]
    return _Item(folder, head.removeprefix(" - "), keywords)
