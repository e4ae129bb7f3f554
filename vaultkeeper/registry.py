"""The pattern registry: ``### name`` blocks whose bodies carry bold-markdown counters.

    ### my-pattern
    **success count:** 2
    **last used:** 2026-08-26
    **promoted:** 2026-09-01 -> [[skills/my-pattern/SKILL]]

A block runs from its heading to the next heading of level 1-3 (or the end of the file);
headings inside fenced code are not blocks.
"""

from __future__ import annotations

import bisect
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
    split_lines,
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


_COUNTERS = (("count", _COUNT), ("last", _LAST_USED), ("promoted", _PROMOTED))
# Each counter regex needs its label in the line: one search skips the other lines cheaply.
_ANY_LABEL = re.compile(
    "|".join(
        re.escape(x) for x in (config.COUNT_LABEL, config.LAST_USED_LABEL, config.PROMOTED_LABEL)
    ),
    re.I,
)


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


def _frontmatter_lines(text: str) -> int:
    """How many lines a leading frontmatter block takes (0 when there is none)."""
    try:
        yaml_text, end_line, _ = split_frontmatter(text)
    except ParseError:
        return 0
    return 0 if yaml_text is None else end_line


def parse_blocks(path: Path, rel_path: str, text: str) -> list[RegistryBlock]:
    lines = split_lines(text)
    starts: list[tuple[int, str]] = []  # (0-based index, name)
    ends: list[int] = []  # 0-based indices of headings that close a block
    fenced: set[int] = set()  # 0-based indices of lines inside (or opening/closing) a fence
    fence: str | None = None
    for i in range(_frontmatter_lines(text), len(lines)):
        line = lines[i].rstrip("\r\n")
        # the substring tests only skip regexes that could not match (a long registry)
        m = _FENCE.match(line) if ("`" in line or "~" in line) else None
        if m:
            mark = m.group(1)
            fenced.add(i)
            if fence is None:
                fence = mark
            elif (
                mark[0] == fence[0] and len(mark) >= len(fence) and not line.strip().strip(mark[0])
            ):
                fence = None
            continue
        if fence is not None:
            fenced.add(i)
            continue
        h = _HEADING.match(line) if "#" in line else None
        if h and len(h.group(1)) <= 3:
            ends.append(i)
            if len(h.group(1)) == 3 and h.group(2):
                starts.append((i, h.group(2)))
    blocks: list[RegistryBlock] = []
    for start, name in starts:
        after = bisect.bisect_right(ends, start)  # every start is also in ends, which is sorted
        stop = ends[after] if after < len(ends) else len(lines)
        # trailing blank lines belong to the gap, not the block
        last = stop - 1
        while last > start and not lines[last].strip():
            last -= 1
        blocks.append(_block(path, rel_path, name, start, lines[start : last + 1], fenced))
    return blocks


def _block(
    path: Path,
    rel_path: str,
    name: str,
    start: int,
    lines: list[str],
    fenced: set[int] | None = None,
) -> RegistryBlock:
    found: dict[str, tuple[str, int]] = {}
    for offset, line in enumerate(lines[1:], start=start + 2):
        if fenced and offset - 1 in fenced:
            continue  # an example inside a code fence is not the block's counter
        stripped = line.rstrip("\r\n")
        if not _ANY_LABEL.search(stripped):
            continue
        for key, pattern in _COUNTERS:
            m = pattern.match(stripped)
            if m and key not in found:
                found[key] = (m.group(1), offset)
    count_raw, count_line = found.get("count", (None, None))
    last_raw, last_line = found.get("last", (None, None))
    promoted, promoted_line = found.get("promoted", (None, None))
    count = int(count_raw) if count_raw is not None and re.fullmatch(r"[0-9]+", count_raw) else None
    last_used = parse_date(last_raw) if last_raw is not None else None
    return RegistryBlock(
        name=name,
        path=path,
        rel=rel_path,
        line=start + 1,
        end_line=start + len(lines),
        text="".join(lines),
        count=count,
        count_raw=count_raw,
        count_line=count_line,
        last_used=last_used,
        last_used_raw=last_raw,
        last_used_line=last_line,
        promoted=promoted,
        promoted_line=promoted_line,
    )


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
