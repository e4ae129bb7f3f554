"""The vault model: notes with frontmatter, and problems for files that can't be read.

Every consumer (scanner, applier, linter) loads files through here, so a file that is
unreadable is reported the same way everywhere and never stops the others.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import os
import re
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.vault import iter_markdown, rel

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing itself is a scan's largest import it never uses
    from typing import Any


@functools.lru_cache(maxsize=1)
def _loader() -> Any:
    """The safe loader, with an impossible date (2026-02-30) reported at its line.

    Built on first use: importing PyYAML costs a scan that needs no YAML (most
    frontmatter is read by quickmeta) about a tenth of its time.
    """
    import yaml

    try:  # the C loader is several times faster; both are the *safe* loader
        base: Any = yaml.CSafeLoader
    except AttributeError:  # pragma: no cover - depends on how PyYAML was built
        base = yaml.SafeLoader

    def construct_timestamp(loader: Any, node: Any) -> Any:
        try:
            return yaml.constructor.SafeConstructor.construct_yaml_timestamp(loader, node)
        except ValueError as exc:
            # YAML's timestamp form matched but the calendar says no; without this the
            # ValueError would carry no line number.
            raise yaml.constructor.ConstructorError(
                None, None, f"{node.value!r} is not a real date ({exc})", node.start_mark
            ) from None

    loader: Any = type("_SafeLoader", (base,), {})
    loader.add_constructor("tag:yaml.org,2002:timestamp", construct_timestamp)
    return loader


_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split on ``\n`` only.

    ``str.splitlines`` also splits on form feed, U+2028, NEL and more; line numbers
    must match what editors, grep and ``path:line`` messages count.
    """
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


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
    """Every markdown file of a vault as notes, and the files that could not be read."""

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
    body_offset is the character offset where the body starts. The closing delimiter is
    the first later line that is ``---`` or ``...`` once trailing whitespace is stripped.
    """
    if not text.startswith("---"):
        return None, 0, 0
    first_end = text.find("\n")
    if first_end == -1 or text[:first_end].rstrip() != "---":
        return None, 0, 0
    find = text.find
    pos = first_end
    while True:
        # jump from one line starting with --- or ... to the next: no loop per line
        dashes = find("\n---", pos)
        dots = find("\n...", pos, len(text) if dashes == -1 else dashes)
        at = dashes if dots == -1 else dots
        if at == -1:
            raise ParseError("frontmatter opened with --- but never closed", 1)
        start = at + 1
        nl = find("\n", start)
        if (text[start:] if nl == -1 else text[start:nl]).rstrip() in ("---", "..."):
            body_offset = len(text) if nl == -1 else nl + 1
            return text[first_end + 1 : start], text.count("\n", 0, start) + 1, body_offset
        pos = start


def load_yaml(yaml_text: str) -> Any:
    """Safe YAML only: a ``!!python/object`` tag is a parse error, never executed."""
    import yaml

    try:
        data = yaml.load(yaml_text, Loader=_loader())  # noqa: S506 - a safe loader
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = None if mark is None else _mark_line(yaml_text, mark)
        raise ParseError(
            f"bad YAML frontmatter: {_one_line(exc.problem or str(exc))}", line
        ) from None
    except yaml.YAMLError as exc:
        raise ParseError(f"bad YAML frontmatter: {_one_line(str(exc))}", None) from None
    except ValueError as exc:
        if "integer string conversion" in str(exc):  # Python's int-string limit
            raise ParseError(_HUGE_NUMBER, _huge_number_line(yaml_text)) from None
        raise ParseError(f"bad YAML frontmatter: {_one_line(str(exc))}", None) from None
    except (TypeError, OverflowError, RecursionError) as exc:
        raise ParseError(f"bad YAML frontmatter: {_one_line(str(exc))}", None) from None
    if "*" in yaml_text and _shares_a_collection(data):
        raise ParseError(ALIAS_REASON, _alias_line(yaml_text))
    return data


ALIAS_REASON = (
    "bad YAML frontmatter: an alias (*name) repeats a list or mapping; write the values out instead"
)


_HUGE_NUMBER = "bad YAML frontmatter: a number too long to read (thousands of digits)"


def _huge_number_line(yaml_text: str) -> int | None:
    for number, line in enumerate(split_lines(yaml_text), start=2):
        if re.search("[0-9_]{1000}", line):
            return number
    return None


def _shares_a_collection(data: Any) -> bool:
    """True when one list or mapping is reached twice (only an alias can do that).

    The loader builds an aliased node once and shares it, so loading is cheap; but
    every reader that walks or prints the value (index, lint, status) would expand
    it, and nested aliases ("billion laughs") expand to gigabytes. Refusing any
    shared collection bounds the expanded size to what the file spells out.
    Iterative, and each collection is visited once: linear in the loaded size.
    """
    seen: set[int] = set()
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, (dict, list)):
            if id(item) in seen:
                return True
            seen.add(id(item))
            stack.extend(item.values() if isinstance(item, dict) else item)
    return False


def _alias_line(yaml_text: str) -> int | None:
    for number, line in enumerate(split_lines(yaml_text), start=2):
        if re.search(r"(?:^|[\s\[{,:-])\*[^\s,\[\]{}]", line):
            return number
    return None


def _mark_line(yaml_text: str, mark: Any) -> int:
    # Count from the character index: YAML also breaks lines at U+2028 and NEL, editors
    # do not. +1 for 1-based, +1 for the opening ---.
    # An error found at the end of the stream is reported on the last YAML line, not
    # on the closing ---.
    last = max(yaml_text.count("\n"), 1) + 1
    index = getattr(mark, "index", None)
    if isinstance(index, int) and 0 <= index <= len(yaml_text):
        return min(yaml_text.count("\n", 0, index) + 2, last)
    return min(int(mark.line) + 2, last)


def _one_line(message: str) -> str:
    return " ".join(message.split()) or "unreadable"


def _key_lines(yaml_text: str) -> dict[str, int]:
    lines: dict[str, int] = {}
    for i, line in enumerate(split_lines(yaml_text), start=2):
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
    # Only lines that name a real top-level key (not a flow collection's continuation).
    key_lines = {k: n for k, n in _key_lines(yaml_text).items() if k in data}
    fm = Frontmatter(data, end_line, key_lines)
    return Note(path, rel_path, text, fm, text[body_offset:], end_line + 1)


_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # POSIX only; elsewhere there are no FIFOs to meet


def read_regular(path: str | os.PathLike[str]) -> bytes:
    """A regular file's bytes; raises ParseError (with no path) when it can't be read.

    Every reader of vault files goes through here: a FIFO or device named *.md would
    block the read for ever or never end. One open and one fstat per file; the
    non-blocking open lets a FIFO be refused instead of waited on.
    """
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK)
    except OSError as exc:
        raise ParseError(f"cannot read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ParseError("not a regular file")
        data = os.read(fd, info.st_size + 1)
        if len(data) == info.st_size:
            return data
        chunks = [data]
        while chunks[-1]:  # it grew or shrank while we read, or the read came back short
            chunks.append(os.read(fd, 1 << 16))
        return b"".join(chunks)
    except OSError as exc:
        raise ParseError(f"cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


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


def load_vault(vault: Path) -> VaultModel:
    """Every markdown file in the vault; bad files become problems, never exceptions."""
    notes, problems = load_notes(vault, iter_markdown(vault))
    return VaultModel(vault, tuple(notes), tuple(problems))


def file_hash(text: str) -> str:
    """sha256 (hex) of a file's decoded text (``Note.text``) encoded as UTF-8.

    The scanner reports it for a memory file and the applier's ``--expect-hash``
    compares against it, so both must call this one function. (A registry block's
    hash is ``RegistryBlock.hash``: the same digest over the block's own text.)
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def parse_date(value: Any) -> dt.date | None:
    """A YAML date (quoted or not) -> date; anything that is not a real ISO date -> None."""
    if isinstance(value, dt.datetime):
        moment: dt.datetime = value
        if moment.tzinfo is not None:
            moment = moment.astimezone(dt.timezone.utc)
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


def is_memory_path(rel_path: str) -> bool:
    """True for files under ``projects/<p>/memory/`` (the held-out sub-tree)."""
    parts = rel_path.split("/")
    return len(parts) >= 4 and parts[0] == config.PROJECTS_DIR and parts[2] == config.MEMORY_SUBDIR
