"""``lint --fix``: the spec's ASCII replacements and quoting holdout_until, as minimal edits.

Only the characters a rule names change; code (fenced blocks, inline spans) is never
touched, and a frontmatter edit is kept only if the YAML still reads back the same.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.errors import UnsafePathError
from vaultkeeper.lint.schema import bare_date
from vaultkeeper.registry.blocks import load_registry, name_key, parse_blocks
from vaultkeeper.store.edit import get_frontmatter_raw, quoted, set_frontmatter_value
from vaultkeeper.store.fsio import atomic_write, writer_lock
from vaultkeeper.store.links import code_lines, code_spans, find_fences, split_lines
from vaultkeeper.store.model import ParseError, decode, load_yaml, split_frontmatter
from vaultkeeper.store.vault import resolve_inside

_BOM = b"\xef\xbb\xbf"


def _replace(value: Any) -> Any:
    if isinstance(value, str):
        return "".join(config.ASCII_REPLACEMENTS.get(c, c) for c in value)
    if isinstance(value, Mapping):
        return {k: _replace(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace(v) for v in value]
    return value


def _fix_line(line: str, skip: list[tuple[int, int]]) -> tuple[str, int]:
    out: list[str] = []
    count = 0
    lead = len(line) - len(line.lstrip(" \t"))
    starts = [a for a, _ in skip]  # sorted, not overlapping: one bisect per glyph
    for col, char in enumerate(line):
        new = config.ASCII_REPLACEMENTS.get(char)
        if new is None:
            out.append(char)
            continue
        at = bisect.bisect_right(starts, col) - 1
        # ``>=`` or ``-`` opening a line would turn it into a quote or a list item.
        if (at >= 0 and col < skip[at][1]) or (col == lead and new[0] in ">-"):
            out.append(char)
            continue
        out.append(new)
        count += 1
    return "".join(out), count


def _block_name(line: str) -> str | None:
    blocks = parse_blocks(Path("r.md"), "r.md", line)
    return blocks[0].name if blocks else None


def fix_ascii(text: str, taken: set[str] | None = None) -> tuple[str, int]:
    """Replace the spec's glyphs outside code; the new text and how many changed.
    ``taken`` (a registry's block name keys): a heading whose fixed name is taken stays."""
    if text.isascii():
        return text, 0
    yaml_text, end_line, body_offset = split_frontmatter(text)
    lines = split_lines(text)
    body_line = end_line + 1 if yaml_text is not None else 1
    code = code_lines(find_fences(text, body_offset, body_line), len(lines))
    total = 0
    if yaml_text is not None and not yaml_text.isascii():
        new_fm = [_fix_line(line, []) for line in lines[1 : end_line - 1]]
        changed = sum(n for _, n in new_fm)
        new_yaml = "".join(line for line, _ in new_fm)
        try:
            same = load_yaml(new_yaml) == _replace(load_yaml(yaml_text))
        except ParseError:
            same = False
        if changed and same:
            lines[1 : end_line - 1] = [line for line, _ in new_fm]
            total += changed
    for index in range(body_line - 1, len(lines)):
        line = lines[index]
        if line.isascii() or index + 1 in code:
            continue
        fixed, n = _fix_line(line, code_spans(line) if "`" in line else [])
        if n and taken is not None and "#" in line and not _rename_ok(line, fixed, taken):
            continue
        lines[index] = fixed
        total += n
    return "".join(lines), total


def _rename_ok(line: str, fixed: str, taken: set[str]) -> bool:
    old, new = _block_name(line), _block_name(fixed)
    if old is None or new is None or name_key(old) == name_key(new):
        return True
    if name_key(new) in taken:
        return False
    taken.add(name_key(new))
    return True


def fix_holdout(text: str) -> tuple[str, int]:
    """Quote a bare ``holdout_until: 2026-09-02``; anything else is left for a person."""
    if split_frontmatter(text)[0] is None:
        return text, 0
    raw = get_frontmatter_raw(text, "holdout_until")
    if raw is None or not bare_date(raw):
        return text, 0
    return set_frontmatter_value(text, "holdout_until", quoted(raw)), 1


def apply_fixes(
    vault: Path, rels: Iterable[str], *, ascii: bool, holdout: bool
) -> tuple[int, tuple[str, ...]]:
    """Fix the named files in place, under the writer lock, one atomic write per file;
    how many characters were replaced and values quoted, and the files rewritten."""
    fixed = 0
    written: list[str] = []
    with writer_lock(vault):
        blocks, _ = load_registry(vault)
        taken = {name_key(b.name) for b in blocks}
        for rel in sorted(set(rels)):
            try:
                # through a symlink: fix its target (the link stays a link), never outside
                path = resolve_inside(vault, rel)
            except UnsafePathError:
                continue
            try:
                raw = path.read_bytes()
                text = decode(raw)
                registry = rel.startswith(config.PATTERNS_DIR + "/")
                new, count = fix_ascii(text, taken if registry else None) if ascii else (text, 0)
                if holdout:
                    new, quoted_count = fix_holdout(new)
                    count += quoted_count
            except (OSError, ParseError):
                continue  # reported as VK001; nothing to fix safely
            if count and new != text:
                atomic_write(path, (_BOM if raw.startswith(_BOM) else b"") + new.encode("utf-8"))
                fixed += count
                written.append(rel)
    return fixed, tuple(written)
