"""The vault model: notes with frontmatter, and problems for files that can't be read.

Every consumer (scanner, applier, linter) loads files through here, so a file that is
unreadable is reported the same way everywhere and never stops the others.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from vaultkeeper import config
from vaultkeeper.vault import iter_markdown, rel

try:  # the C loader is several times faster; both are the *safe* loader
    _Loader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Loader = yaml.SafeLoader


@dataclass(frozen=True)
class Problem:
    """A file (or a line in it) that could not be used, and why, in one line."""

    path: str
    line: int | None
    reason: str

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "reason": self.reason}


@dataclass(frozen=True)
class Frontmatter:
    """The YAML block at the top of a note, with where it sits in the file."""

    data: Mapping[str, Any]
    end_line: int  # 1-based line number of the closing ``---``
    key_lines: Mapping[str, int]  # top-level key -> 1-based line number


@dataclass(frozen=True)
class Note:
    """One markdown file. ``frontmatter`` is None when the file has none (not an entry)."""

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


@dataclass(frozen=True)
class VaultModel:
    vault: Path
    notes: tuple[Note, ...]
    problems: tuple[Problem, ...] = field(default=())

    @property
    def entries(self) -> tuple[Note, ...]:
        return tuple(n for n in self.notes if n.is_entry)


class ParseError(ValueError):
    def __init__(self, reason: str, line: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line


def decode(raw: bytes) -> str:
    """Bytes -> text, refusing binary and non-UTF-8 content with a one-line reason."""
    if b"\x00" in raw:
        raise ParseError("binary file (NUL bytes), not markdown")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ParseError(f"not UTF-8 (byte 0x{raw[exc.start]:02x})", line) from None
    return text[1:] if text.startswith("\ufeff") else text


def split_frontmatter(text: str) -> tuple[str | None, int, int]:
    """Locate the frontmatter block.

    Returns (yaml_text, closing_line, body_offset): yaml_text is None when the file does
    not open with ``---``; closing_line is the 1-based line of the closing delimiter;
    body_offset is the character offset where the body starts.
    """
    if not text.startswith("---"):
        return None, 0, 0
    first_end = text.find("\n")
    if first_end == -1 or text[:first_end].rstrip("\r").rstrip() != "---":
        return None, 0, 0
    pos = first_end + 1
    line_no = 1
    while pos <= len(text):
        nl = text.find("\n", pos)
        line = text[pos:] if nl == -1 else text[pos:nl]
        line_no += 1
        stripped = line.rstrip("\r").rstrip()
        if stripped in ("---", "..."):
            body_offset = len(text) if nl == -1 else nl + 1
            return text[first_end + 1 : pos], line_no, body_offset
        if nl == -1:
            break
        pos = nl + 1
    raise ParseError("frontmatter opened with --- but never closed", 1)


def load_yaml(yaml_text: str) -> Any:
    """Safe YAML only: a ``!!python/object`` tag is a parse error, never executed."""
    try:
        return yaml.load(yaml_text, Loader=_Loader)  # noqa: S506 - a safe loader
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line = None if mark is None else mark.line + 2  # +1 for 1-based, +1 for the ---
        problem = (exc.problem or str(exc)).strip()
        raise ParseError(f"bad YAML frontmatter: {problem}", line) from None
    except yaml.YAMLError as exc:
        raise ParseError(f"bad YAML frontmatter: {str(exc).splitlines()[0]}", None) from None
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        # e.g. an unquoted 2026-02-30 matches YAML's timestamp form but is no date
        raise ParseError(f"bad YAML frontmatter: {exc}", None) from None


def _key_lines(yaml_text: str) -> dict[str, int]:
    lines: dict[str, int] = {}
    for i, line in enumerate(yaml_text.splitlines(), start=2):
        if line[:1] not in ("", " ", "\t", "#", "-") and ":" in line:
            key = line.split(":", 1)[0].strip().strip("'\"")
            lines.setdefault(key, i)
    return lines


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
    fm = Frontmatter(data, end_line, _key_lines(yaml_text))
    return Note(path, rel_path, text, fm, text[body_offset:], end_line + 1)


def read_note(vault: Path, path: Path) -> Note:
    """Read and parse one file; raises ParseError (with no path) on any failure."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ParseError(f"cannot read: {exc.strerror or exc}") from None
    return parse_note(path, rel(vault, path), decode(raw))


def load_notes(vault: Path, paths: Iterable[Path]) -> tuple[list[Note], list[Problem]]:
    notes: list[Note] = []
    problems: list[Problem] = []
    for path in paths:
        try:
            notes.append(read_note(vault, path))
        except ParseError as exc:
            problems.append(Problem(rel(vault, path), exc.line, exc.reason))
    return notes, problems


def load_vault(vault: Path) -> VaultModel:
    """Every markdown file in the vault; bad files become problems, never exceptions."""
    notes, problems = load_notes(vault, iter_markdown(vault))
    return VaultModel(vault, tuple(notes), tuple(problems))


def parse_date(value: Any) -> dt.date | None:
    """A YAML date (quoted or not) -> date; anything that is not a real ISO date -> None."""
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc)
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        text = value.strip()
        if len(text) == 10:
            try:
                return dt.date.fromisoformat(text)
            except ValueError:
                return None
    return None


def is_memory_path(rel_path: str) -> bool:
    """True for files under ``projects/<p>/memory/`` (the held-out sub-tree)."""
    parts = rel_path.split("/")
    return (
        len(parts) >= 4 and parts[0] == config.PROJECTS_DIR and parts[2] == config.MEMORY_SUBDIR
    )
