"""Load notes for lint: a file whose frontmatter can't be parsed still has a body to check.

Obsidian templates (the folder ``obsidian.templates_folder`` finds) hold placeholders
such as ``created: {{date}}`` that are not valid YAML until the template is used; there
the placeholders are read as strings, so a template's property links still count.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from vaultkeeper.store.model import (
    Note,
    ParseError,
    Problem,
    decode,
    load_notes,
    parse_note,
    read_regular,
    split_frontmatter,
)
from vaultkeeper.store.obsidian import in_folder, templates_folder

_PLACEHOLDER = re.compile(r"\{\{[^{}\r\n]*\}\}")


@dataclass(frozen=True)
class Loaded:
    notes: tuple[Note, ...]
    problems: tuple[Problem, ...]  # VK001: files or frontmatter that could not be read
    body_only: frozenset[str]  # notes whose frontmatter failed: only their body is checked
    # notes that are not UTF-8, their bad bytes read as U+FFFD: only their links are
    # checked (a merge or a rename must not leave a broken link there unsaid)
    links_only: frozenset[str] = frozenset()


def _as_template(path: Path, rel: str, text: str) -> Note | None:
    yaml_text, _, body_offset = split_frontmatter(text)
    if yaml_text is None or "{{" not in yaml_text:
        return None
    head = _PLACEHOLDER.sub(lambda m: json.dumps(m.group()), text[:body_offset])
    try:
        note = parse_note(path, rel, head + text[body_offset:])
    except ParseError:
        return None
    return note._replace(text=text)


def load(vault: Path, paths: Iterable[Path], *, meta: bool = True) -> Loaded:
    """The notes at ``paths``; ``meta=False`` (only the link rules run, no orphans to
    find): a frontmatter with no ``[[`` in it is not parsed, as none of its values can be
    a link and nothing asks what it holds -- the note keeps its body from the same line."""
    notes, problems = load_notes(vault, paths) if meta else _bodies(vault, paths)
    if not problems:
        return Loaded(tuple(notes), (), frozenset())
    templates = templates_folder(vault)
    kept: list[Problem] = []
    body_only: set[str] = set()
    links_only: set[str] = set()
    for problem in problems:
        path = vault / problem.path
        try:
            text = decode(read_regular(path))
            _, end_line, body_offset = split_frontmatter(text)
        except ParseError:
            kept.append(problem)
            loose = _undecodable(path, problem)
            if loose is not None:
                notes.append(loose)
                links_only.add(problem.path)
            continue
        if in_folder(problem.path, templates):
            note = _as_template(path, problem.path, text)
            if note is not None:
                notes.append(note)
                continue
        kept.append(problem)
        notes.append(Note(path, problem.path, text, None, text[body_offset:], end_line + 1))
        body_only.add(problem.path)
    notes.sort(key=lambda n: n.rel)
    return Loaded(tuple(notes), tuple(kept), frozenset(body_only), frozenset(links_only))


def _bodies(vault: Path, paths: Iterable[Path]) -> tuple[list[Note], list[Problem]]:
    notes: list[Note] = []
    problems: list[Problem] = []
    prefix = len(str(vault)) + 1
    for path in paths:
        rel = str(path)[prefix:].replace(os.sep, "/")
        try:
            text = decode(read_regular(path))
            yaml_text, end_line, body_offset = split_frontmatter(text)
            if yaml_text is None or "[[" in yaml_text:
                notes.append(parse_note(path, rel, text))
            else:
                notes.append(Note(path, rel, text, None, text[body_offset:], end_line + 1))
        except ParseError as exc:
            problems.append(Problem(rel, exc.line, exc.reason))
    return notes, problems


def _undecodable(path: Path, problem: Problem) -> Note | None:
    """A note that is not UTF-8, each bad byte read as U+FFFD (its lines stay its
    lines), for its links; None for any other problem."""
    if not problem.reason.startswith("not UTF-8"):
        return None
    try:
        text = read_regular(path).decode("utf-8", "replace")
    except ParseError:
        return None
    return Note(path, problem.path, text, None, text, 1)
