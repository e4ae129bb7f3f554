"""The entries the full-text index holds: one a note with frontmatter, one a ``### block``.

``read_docs`` turns one file's text into the entries it holds, with what ``search``
shows of each (the line to open, what to cite) and what the recall hook needs of a
lesson (a note under ``projects/<p>/memory/``): its text to serve, its anchors' files
and its ``paths:`` globs. A file that cannot be read holds none; frontmatter is read by
the model's YAML parser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.registry.blocks import is_counter_line, parse_blocks
from vaultkeeper.store.model import ParseError, decode, parse_note, read_regular
from vaultkeeper.store.vault import is_memory_path
from vaultkeeper.upkeep.supersession import superseded_by

_HEADING = re.compile(r"#{1,6}\s+(.*)")
_PLACE_KEYS = ("at", "path", "place", "file")
RECALL_TEXT_MAX = 16_384  # what a lesson's row keeps to serve: cut at a line's end


@dataclass(frozen=True)
class Doc:
    """One searchable entry: a note with frontmatter, or one registry ``### block``."""

    kind: str
    name: str
    description: str
    project: str | None
    status: str | None
    superseded_by: str | None  # the newer entry's link target, when one replaces this
    path: str  # vault-relative
    line: int  # the entry's first line (a block's heading)
    name_line: int
    description_line: int
    lines: tuple[str, ...]  # the body's lines as in the file
    body_line: int  # file line of lines[0]
    cite: str  # what the cite tool takes: a pattern NAME or the note's path
    link: str  # the [[wikilink]] a note uses to point here
    lesson: bool = False  # a note under projects/<p>/memory/: the recall hook serves it
    places: tuple[str, ...] = ()  # its anchors' files and folders (a lesson's)
    globs: tuple[str, ...] = ()  # its ``paths:`` globs (a lesson's)

    @property
    def live(self) -> bool:
        return self.status not in config.SEARCH_DEAD_STATUSES and self.superseded_by is None

    @property
    def headings(self) -> str:
        """The body's markdown headings, one per line."""
        found = (_HEADING.fullmatch(x.strip()) for x in self.lines if x.startswith("#"))
        return "\n".join(m.group(1) for m in found if m)

    @property
    def recall_text(self) -> str:
        """What the recall hook serves of a lesson, raw: its description, then the body's
        lines that are not headings or rules. Lines are split at ``\\n`` only (never at a
        VT, FF or U+2028 inside a token: the hook masks the whole text before it cuts
        it), and the text is cut at a line's end."""
        prose = [x for x in self.lines if x.strip() and not x.strip().startswith(("#", "---"))]
        text = "\n".join([self.description, *prose] if self.description else prose)
        if len(text) > RECALL_TEXT_MAX:
            text = text[: text.rfind("\n", 0, RECALL_TEXT_MAX) + 1 or RECALL_TEXT_MAX]
        return text


def _project(rel_path: str) -> str | None:
    parts = rel_path.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == config.PROJECTS_DIR else None


def anchor_file(place: object) -> str | None:
    """The file (or folder) part of one anchor: the text before ``::`` or ``: ``."""
    if isinstance(place, dict):
        place = next((place[k] for k in _PLACE_KEYS if isinstance(place.get(k), str)), None)
    if not isinstance(place, str):
        return None
    head = place.split("::", 1)[0].split(": ", 1)[0].strip()
    while head.startswith("./"):
        head = head[2:]
    head = head.rstrip("/")
    if not head or head.startswith("/") or ".." in head.split("/") or "\x00" in head:
        return None
    return head


def _as_list(value: object) -> list[object]:
    if isinstance(value, (str, dict)):
        return [value]
    return list(value) if isinstance(value, list) else []


def _split_lines(body: str) -> tuple[str, ...]:
    """The body's lines at ``\\n`` (``\\r\\n`` too), as a person's editor shows them."""
    lines = body.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return tuple(x[:-1] if x.endswith("\r") else x for x in lines)


def read_docs(vault: Path, rel_path: str) -> list[Doc]:
    """The entries one file holds; a file that cannot be read holds none."""
    path = vault / rel_path
    try:
        text = decode(read_regular(path))
    except ParseError:
        return []
    if rel_path.split("/", 1)[0] == config.PATTERNS_DIR:
        return _blocks(path, rel_path, text)
    lesson = is_memory_path(rel_path)
    try:
        note = parse_note(path, rel_path, text)
    except ParseError:
        return []
    if note.frontmatter is None:
        return []  # not an entry
    meta, key_lines = dict(note.frontmatter.data), dict(note.frontmatter.key_lines)
    body, body_line = note.body, note.body_line
    status = meta.get("status")
    stem = rel_path.rsplit("/", 1)[-1].removesuffix(".md")
    name = str(meta.get("name") or stem)
    places: tuple[str, ...] = ()
    globs: tuple[str, ...] = ()
    if lesson:
        anchors = _as_list(meta.get(config.ANCHORS_KEY))
        places = tuple(sorted({f for f in map(anchor_file, anchors) if f}))
        found = (g.strip() for g in _as_list(meta.get(config.PATHS_KEY)) if isinstance(g, str))
        globs = tuple(g for g in found if g and not g.startswith("/"))
    return [
        Doc(
            kind=str(meta.get("type") or "note"),
            name=name,
            description=" ".join(str(meta.get("description") or "").split()),
            project=_project(rel_path),
            status=None if status is None else str(status),
            superseded_by=superseded_by(meta),
            path=rel_path,
            line=1,
            name_line=key_lines.get("name", 1),
            description_line=key_lines.get("description", 1),
            lines=_split_lines(body),
            body_line=body_line,
            cite=rel_path,
            link=f"[[{rel_path.removesuffix('.md')}]]",
            lesson=lesson,
            places=places,
            globs=globs,
        )
    ]


def _blocks(path: Path, rel_path: str, text: str) -> list[Doc]:
    out: list[Doc] = []
    for block in parse_blocks(path, rel_path, text):
        lines = _split_lines(block.text)[1:]
        prose = [x.strip() for x in lines if x.strip() and not is_counter_line(x)]
        out.append(
            Doc(
                kind="pattern",
                name=block.name,
                description=prose[0] if prose else "",
                project=None,
                status=None,
                superseded_by=None,
                path=rel_path,
                line=block.line,
                name_line=block.line,
                description_line=block.line + 1,
                lines=lines,
                body_line=block.line + 1,
                cite=block.name,
                link=f"[[{rel_path.removesuffix('.md')}#{block.name}]]",
            )
        )
    return out
