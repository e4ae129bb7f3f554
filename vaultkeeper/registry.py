"""The pattern registry: ``### name`` blocks whose bodies carry bold-markdown counters.

    ### my-pattern
    **success count:** 2
    **last used:** 2026-08-26
    **promoted:** 2026-09-01 -> [[skills/my-pattern/SKILL]]

A block runs from its heading to the next heading of level 1-3 (or the end of the file);
headings inside fenced code are not blocks.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.model import (
    ParseError,
    Problem,
    decode,
    parse_date,
    split_frontmatter,
)
from vaultkeeper.vault import iter_markdown, rel

# CommonMark ATX heading: up to 3 spaces, 1-6 #, then text; a closing run of # counts
# only after a space (so `### C#` is named "C#").
_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))??(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")


def _counter(label: str) -> re.Pattern[str]:
    return re.compile(r"^[ \t]*[-*]?[ \t]*" + re.escape(label) + r"[ \t]*(.*?)[ \t]*$", re.I)


_COUNT = _counter(config.COUNT_LABEL)
_LAST_USED = _counter(config.LAST_USED_LABEL)
_PROMOTED = _counter(config.PROMOTED_LABEL)
_LABELS = (config.COUNT_LABEL, config.LAST_USED_LABEL, config.PROMOTED_LABEL)

# The same rules over a whole file in one pass (a registry may hold thousands of blocks).
# The pattern matches a "\n" and the line after it, in the text with one "\n" put in
# front (so the first line too follows a "\n"), when the line may matter: a heading
# (groups 1-2), a fence (3) or a counter (4-6 name the label, 7 is the rest). The leading
# "\n" lets the regex engine skip to candidates fast; the rest of each rule is applied
# to the few lines found. A line's trailing CRs are not content.
_LINES_NL = re.compile(
    r"\n(?: {0,3}(#{1,3})([^\n]*)|[ \t]{0,3}(`{3,}|~{3,})[^\n]*|[ \t]*[-*]?[ \t]*(?:"
    + "|".join(f"({re.escape(x)})" for x in _LABELS)
    + r")([^\n]*))",
    re.I,
)
_NO_NAME = ""  # a heading without a name: it ends a block but opens none


def _heading_name(rest: str) -> str | None:
    """What _HEADING gives for the text after a line's run of #: None (not a heading),
    _NO_NAME, or the name (the closing run of # and the blanks around it removed)."""
    rest = rest.rstrip("\r")
    if not rest or not rest.strip(" \t"):
        return _NO_NAME
    if rest[0] not in " \t":
        return None  # `###x`, or a fourth # (levels 4-6 neither open nor end a block)
    body = rest.rstrip(" \t")
    bare = body.rstrip("#")
    if bare != body and (not bare or bare[-1] in " \t"):
        body = bare.rstrip(" \t")  # a closing run of #, after a blank
    return body.lstrip(" \t")


def is_counter_line(line: str) -> bool:
    """True when ``line`` would be read as a block's count, last-used or promoted line."""
    return any(p.match(line) for p in (_COUNT, _LAST_USED, _PROMOTED))


@dataclass(frozen=True)
class RegistryBlock:
    name: str
    path: Path
    rel: str
    line: int  # 1-based line of the ``### name`` heading
    end_line: int  # 1-based last line of the block (inclusive)
    text: str  # the block's lines exactly as in the file
    count: int | None
    count_raw: str | None
    count_line: int | None
    last_used: dt.date | None
    last_used_raw: str | None
    last_used_line: int | None
    promoted: str | None
    promoted_line: int | None

    @property
    def hash(self) -> str:
        return block_hash(self.text)

    def problems(self) -> list[Problem]:
        """Why this block's counters can't be trusted, if they can't (one per counter)."""
        out: list[Problem] = []
        if self.count_raw is None:
            out.append(
                Problem(self.rel, self.line, f"### {self.name}: no {config.COUNT_LABEL} line")
            )
        elif self.count is None:
            out.append(
                Problem(
                    self.rel,
                    self.count_line,
                    f"### {self.name}: success count {self.count_raw!r} is not a whole number",
                )
            )
        if self.last_used_raw is None:
            out.append(
                Problem(self.rel, self.line, f"### {self.name}: no {config.LAST_USED_LABEL} line")
            )
        elif self.last_used is None:
            out.append(
                Problem(
                    self.rel,
                    self.last_used_line,
                    f"### {self.name}: last used {self.last_used_raw!r} is not an ISO date"
                    " (YYYY-MM-DD)",
                )
            )
        return out


def block_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _body_start(text: str) -> int:
    """Offset where a leading frontmatter block ends (0 when there is none)."""
    try:
        yaml_text, _, body_offset = split_frontmatter(text)
    except ParseError:
        return 0
    return 0 if yaml_text is None else body_offset


def parse_blocks(path: Path, rel_path: str, text: str) -> list[RegistryBlock]:
    """Every ``### name`` block of one registry file, in file order.

    A block runs from its heading to the next heading of level 1-3 outside fenced code;
    trailing blank lines belong to the gap. The first count / last-used / promoted line
    of each kind outside fenced code is the block's.
    """
    nl_text = "\n" + text  # offset i of nl_text is offset i - 1 of text
    heads: list[tuple[int, str]] = []  # ("\n" before the heading, name or _NO_NAME)
    counters: list[dict[int, tuple[str, int]]] = []  # per head: label group -> (raw, at)
    fence: str | None = None
    current: dict[int, tuple[str, int]] | None = None  # the open block's counters
    for m in _LINES_NL.finditer(nl_text, _body_start(text)):
        mark = m.group(3)
        if mark is not None:
            if fence is None:
                fence = mark
            elif mark[0] == fence[0] and len(mark) >= len(fence):
                line = nl_text[m.start() + 1 : m.end()].rstrip("\r")
                if not line.strip().strip(mark[0]):
                    fence = None
            continue
        if fence is not None:
            continue
        hashes = m.group(1)
        if hashes is not None:
            name = _heading_name(m.group(2))
            if name is None:
                continue
            if name and len(hashes) == 3:
                current = {}
                heads.append((m.start(), name))
                counters.append(current)
            else:
                current = None
                heads.append((m.start(), _NO_NAME))
                counters.append({})
            continue
        if current is not None:
            label = 4 if m.group(4) is not None else 5 if m.group(5) is not None else 6
            if label not in current:
                current[label] = (m.group(7), m.start())
    return _blocks(path, rel_path, nl_text, heads, counters)


def _blocks(
    path: Path,
    rel_path: str,
    nl_text: str,
    heads: list[tuple[int, str]],
    counters: list[dict[int, tuple[str, int]]],
) -> list[RegistryBlock]:
    blocks: list[RegistryBlock] = []
    dates: dict[str, dt.date | None] = {}  # a registry repeats its dates many times
    line, counted = 0, 0  # the line starting at offset ``counted`` of nl_text (its "\n"s before)
    count = nl_text.count
    for i, (at, name) in enumerate(heads):
        if not name:
            continue
        stop = heads[i + 1][0] + 1 if i + 1 < len(heads) else len(nl_text)
        segment = nl_text[at + 1 : stop]
        cut = segment.find("\n", len(segment.rstrip()))  # trailing blank lines: the gap
        block_text = segment if cut == -1 else segment[: cut + 1]
        line += count("\n", counted, at + 1)
        counted = at + 1
        found = {
            label: (raw.rstrip("\r").strip(" \t"), line + count("\n", counted, where + 1))
            for label, (raw, where) in counters[i].items()
        }
        count_raw, count_line = found.get(4, (None, None))
        last_raw, last_line = found.get(5, (None, None))
        promoted, promoted_line = found.get(6, (None, None))
        last_used = None
        if last_raw is not None:
            if last_raw not in dates:
                dates[last_raw] = parse_date(last_raw)
            last_used = dates[last_raw]
        n_lines = block_text.count("\n") + (0 if block_text.endswith("\n") else 1)
        blocks.append(
            RegistryBlock(
                name=name,
                path=path,
                rel=rel_path,
                line=line,
                end_line=line + n_lines - 1,
                text=block_text,
                count=_whole(count_raw),
                count_raw=count_raw,
                count_line=count_line,
                last_used=last_used,
                last_used_raw=last_raw,
                last_used_line=last_line,
                promoted=promoted,
                promoted_line=promoted_line,
            )
        )
    return blocks


def _whole(raw: str | None) -> int | None:
    """ASCII digits only: no sign, no Unicode digits, no underscores."""
    return int(raw) if raw is not None and raw.isascii() and raw.isdigit() else None


def registry_files(vault: Path) -> list[Path]:
    patterns = vault / config.PATTERNS_DIR
    if not patterns.is_dir() or patterns.is_symlink():  # the vault walk never follows links
        return []
    return sorted(iter_markdown(vault, under=patterns))


def load_registry(
    vault: Path, paths: Iterable[Path] | None = None
) -> tuple[list[RegistryBlock], list[Problem]]:
    """Every block in every registry file; unreadable files become problems."""
    blocks: list[RegistryBlock] = []
    problems: list[Problem] = []
    for path in registry_files(vault) if paths is None else paths:
        rel_path = rel(vault, path)
        try:
            text = decode(path.read_bytes())
        except ParseError as exc:
            problems.append(Problem(rel_path, exc.line, exc.reason))
            continue
        except OSError as exc:
            problems.append(Problem(rel_path, None, f"cannot read: {exc.strerror or exc}"))
            continue
        blocks.extend(parse_blocks(path, rel_path, text))
    return blocks, problems


def find_block(vault: Path, name: str) -> RegistryBlock:
    """The one block called ``name``; unknown or duplicated names are errors."""
    from vaultkeeper.errors import NotFoundError, VaultkeeperError

    blocks, problems = load_registry(vault)
    matches = [b for b in blocks if b.name == name]
    if not matches:
        hint = ""
        similar = [b for b in blocks if b.name.lower() == name.lower()]
        if similar:
            hint = f" (did you mean {similar[0].name!r} at {similar[0].rel}:{similar[0].line}?)"
        elif problems:
            hint = f" ({len(problems)} registry file(s) could not be read; first: {problems[0]})"
        raise NotFoundError(f"{name}: no ### {name} block in {config.PATTERNS_DIR}/{hint}")
    if len(matches) > 1:
        where = ", ".join(f"{b.rel}:{b.line}" for b in matches)
        raise VaultkeeperError(f"{name}: {len(matches)} registry blocks share this name ({where})")
    return matches[0]
