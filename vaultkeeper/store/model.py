"""The vault model: notes with frontmatter, and problems for files that can't be read.

Every consumer loads files through here, so an unreadable file is reported the same way
everywhere and never stops the others (store.text and store.frontmatter's names too).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from vaultkeeper.store.frontmatter import load_yaml as load_yaml
from vaultkeeper.store.frontmatter import split_frontmatter as split_frontmatter
from vaultkeeper.store.frontmatter import top_key_lines
from vaultkeeper.store.text import ParseError as ParseError
from vaultkeeper.store.text import decode as decode
from vaultkeeper.store.text import read_regular as read_regular
from vaultkeeper.store.text import split_lines as split_lines
from vaultkeeper.store.vault import rel
from vaultkeeper.store.walk import OUT_REASON

_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


class Problem(NamedTuple):
    """A file (or a line in it) that could not be used, and why, in one line."""

    path: str
    line: int | None
    reason: str

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "reason": self.reason}


class Frontmatter(NamedTuple):
    """The YAML block at the top of a note, with where it sits in the file."""

    data: Mapping[str, Any]
    end_line: int  # 1-based line number of the closing ``---``
    key_lines: Mapping[str, int]  # top-level key -> 1-based line number


class Note(NamedTuple):
    """One markdown file (a scan builds one per entry). ``frontmatter`` is None when the
    file has none (not an entry)."""

    path: Path
    rel: str
    text: str
    frontmatter: Frontmatter | None
    body: str
    body_line: int  # 1-based line where the body starts

    @property
    def is_entry(self) -> bool:
        return self.frontmatter is not None

    @property
    def meta(self) -> Mapping[str, Any]:
        return self.frontmatter.data if self.frontmatter is not None else {}

    def get_str(self, key: str) -> str | None:
        value = self.meta.get(key)
        return None if value is None else str(value)


def parse_note(path: Path, rel_path: str, text: str) -> Note:
    """Parse one note's text; raises ParseError for frontmatter that can't be used."""
    yaml_text, end_line, body_offset = split_frontmatter(text)
    if yaml_text is None:
        return Note(path, rel_path, text, None, text, 1)
    data = load_yaml(yaml_text)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        kind = type(data).__name__
        raise ParseError(f"frontmatter is a {kind}, not a mapping of keys to values", 2)
    # Only lines that name a real top-level key (not a flow collection's continuation).
    key_lines = {k: n for k, n in top_key_lines(yaml_text).items() if k in data}
    fm = Frontmatter(data, end_line, key_lines)
    return Note(path, rel_path, text, fm, text[body_offset:], end_line + 1)


def read_note(vault: Path, path: Path) -> Note:
    """Read and parse one file; raises ParseError (with no path) on any failure."""
    return parse_note(path, rel(vault, path), decode(read_regular(path)))


def load_notes(vault: Path, paths: Iterable[Path]) -> tuple[list[Note], list[Problem]]:
    notes: list[Note] = []
    problems: list[Problem] = []
    for path in paths:
        try:
            notes.append(read_note(vault, path))
        except ParseError as exc:
            problems.append(Problem(rel(vault, path), exc.line, exc.reason))
    return notes, problems


def outside_problems(vault: str | os.PathLike[str], paths: Iterable[str]) -> list[Problem]:
    """One problem line per symlink out of the vault the walk left out (store.walk)."""
    cut = len(os.fspath(vault)) + 1
    return [Problem(p[cut:].replace(os.sep, "/"), None, OUT_REASON) for p in paths]


def file_hash(text: str) -> str:
    """sha256 (hex) of a file's decoded text: what the scan reports and ``--expect-hash``
    compares, so both call this one function."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def parse_date(value: Any) -> dt.date | None:
    """A YAML date (quoted or not) -> date; anything that is not a real ISO date -> None."""
    if isinstance(value, dt.datetime):
        moment: dt.datetime = value
        if moment.tzinfo is not None:
            try:
                moment = moment.astimezone(dt.timezone.utc)
            except OverflowError:  # 9999-12-31T23:00:00-05:00 is past the last UTC day
                return None
        return moment.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        text = value.strip()
        # YYYY-MM-DD only: Python 3.11's fromisoformat also takes 20260902 and 2026-W36-3
        if _ISO_DATE.fullmatch(text):
            try:
                return dt.date.fromisoformat(text)
            except ValueError:
                return None
    return None


def date_text(value: Any) -> str:
    """A frontmatter date value as a person wrote it (YAML's datetime as ISO, not repr)."""
    return value.isoformat() if isinstance(value, dt.date) else repr(value)
