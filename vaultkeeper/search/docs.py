"""The entries ``search`` looks through: one a note with frontmatter, one a ``### block``.

Split from vaultkeeper.search.rank (which re-exports the public names): how one file's text
becomes the entries it holds, apart from how they are found and shown. A file that
cannot be read holds none; frontmatter is read by the fast reader (quickmeta) and
only falls back to the full YAML parse when that one cannot say.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.registry.blocks import is_counter_line, parse_blocks
from vaultkeeper.store.model import ParseError, decode, parse_note, read_regular
from vaultkeeper.store.quickmeta import read_front
from vaultkeeper.upkeep.supersession import superseded_by

_KEYS = ("name", "description", "type", "status", config.SUPERSEDED_BY_KEY)


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
    folded: tuple[str, str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        body = "\n".join(self.lines).casefold()
        folded = (self.name.casefold(), self.description.casefold(), body)
        object.__setattr__(self, "folded", folded)

    @property
    def live(self) -> bool:
        return self.status not in config.SEARCH_DEAD_STATUSES and self.superseded_by is None


def file_lines(text: str) -> tuple[str, ...]:
    """``text`` cut at its newlines only, a CRLF's CR dropped: the lines a person's editor
    and the line numbers count. Not ``str.splitlines``, which also cuts at VT, FF, FS,
    GS, RS, NEL and U+2028/U+2029: a token cut by one would be served as two harmless
    halves on two lines, and every line number after it would be off."""
    return tuple(line.removesuffix("\r") for line in text.split("\n"))


def _project(rel_path: str) -> str | None:
    parts = rel_path.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == config.PROJECTS_DIR else None


def read_docs(vault: Path, rel_path: str) -> list[Doc]:
    """The entries one file holds; a file that cannot be read holds none."""
    path = vault / rel_path
    try:
        text = decode(read_regular(path))
    except ParseError:
        return []
    if rel_path.split("/", 1)[0] == config.PATTERNS_DIR:
        return _blocks(path, rel_path, text)
    front = read_front(text, _KEYS)
    if front is not None:
        meta, key_lines, yaml_text = front
        body_line = yaml_text.count("\n") + 3
        body = text.split("\n", body_line - 1)[-1] if body_line > 1 else text
    else:
        try:
            note = parse_note(path, rel_path, text)
        except ParseError:
            return []
        if note.frontmatter is None:
            return []  # not an entry
        meta, key_lines = dict(note.meta), dict(note.frontmatter.key_lines)
        body, body_line = note.body, note.body_line
    status = meta.get("status")
    stem = rel_path.rsplit("/", 1)[-1].removesuffix(".md")
    name = str(meta.get("name") or stem)
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
            lines=file_lines(body),
            body_line=body_line,
            cite=rel_path,
            link=f"[[{rel_path.removesuffix('.md')}]]",
        )
    ]


def _blocks(path: Path, rel_path: str, text: str) -> list[Doc]:
    out: list[Doc] = []
    for block in parse_blocks(path, rel_path, text):
        lines = file_lines(block.text)[1:]
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
                lines=tuple(lines),
                body_line=block.line + 1,
                cite=block.name,
                link=f"[[{rel_path.removesuffix('.md')}#{block.name}]]",
            )
        )
    return out
