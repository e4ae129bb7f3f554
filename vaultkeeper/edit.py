"""Minimal line edits: change one value, touch one line, keep every other byte.

These functions work on text and return text; writing is fsio's job. Each edit keeps
the edited line's own line ending (CRLF stays CRLF) and any trailing ``# comment``.
"""

from __future__ import annotations

import json
import re

from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.model import split_frontmatter

_PLAIN_SAFE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_./-]*$")
_YAML_WORDS = {"true", "false", "yes", "no", "on", "off", "null", "none", "~"}


def yaml_scalar(value: str) -> str:
    """A YAML scalar for ``value``: plain when that reads back as the same string."""
    if _PLAIN_SAFE.match(value) and value.lower() not in _YAML_WORDS and not _looks_numeric(value):
        return value
    return json.dumps(value, ensure_ascii=False)


def quoted(value: str) -> str:
    """Always double-quoted (dates must be quoted for the scanner's regex)."""
    return json.dumps(value, ensure_ascii=False)


def _looks_numeric(value: str) -> bool:
    return bool(re.fullmatch(r"[-+]?(\d[\d_]*(\.\d*)?|\.\d+)([eE][-+]?\d+)?|\d{4}-\d\d-\d\d.*", value))


def _ending(line: str) -> str:
    if line.endswith("\r\n"):
        return "\r\n"
    if line.endswith("\n"):
        return "\n"
    return ""


def _dominant_ending(lines: list[str]) -> str:
    crlf = sum(1 for line in lines if line.endswith("\r\n"))
    return "\r\n" if crlf * 2 > len(lines) else "\n"


def _split_comment(rest: str) -> tuple[str, str]:
    """Split ``value  # comment`` into value and the comment part (with its spacing)."""
    quote: str | None = None
    for i, ch in enumerate(rest):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "#" and i > 0 and rest[i - 1] in " \t":
            j = i
            while j > 0 and rest[j - 1] in " \t":
                j -= 1
            return rest[:j], rest[j:]
    return rest, ""


def _frontmatter_span(text: str) -> tuple[list[str], int]:
    """The file's lines and the 0-based index of the closing ``---``."""
    yaml_text, end_line, _ = split_frontmatter(text)
    if yaml_text is None:
        raise VaultkeeperError("file has no frontmatter to edit")
    return text.splitlines(keepends=True), end_line - 1


def _key_index(lines: list[str], close: int, key: str) -> int | None:
    pattern = re.compile(r"^" + re.escape(key) + r"[ \t]*:(?=[ \t]|$|\r?\n)")
    for i in range(1, close):
        if pattern.match(lines[i]):
            return i
    return None


def _value_extent(lines: list[str], close: int, index: int) -> int:
    """Index one past the last line belonging to the key at ``index`` (nested/list lines)."""
    j = index + 1
    while j < close and (lines[j][:1] in (" ", "\t", "-") or not lines[j].strip()):
        j += 1
    while j - 1 > index and not lines[j - 1].strip():
        j -= 1
    return j


def set_frontmatter_value(text: str, key: str, scalar: str) -> str:
    """Set top-level ``key`` to the already-formatted YAML ``scalar``.

    An existing one-line value is replaced on its own line; a key with a nested value
    has its continuation lines replaced too; a missing key is added as one new line
    just before the closing ``---``.
    """
    lines, close = _frontmatter_span(text)
    index = _key_index(lines, close, key)
    if index is None:
        ending = _ending(lines[close - 1]) if close > 0 else "\n"
        lines.insert(close, f"{key}: {scalar}{ending or _dominant_ending(lines)}")
        return "".join(lines)
    line = lines[index]
    ending = _ending(line)
    body = line[: len(line) - len(ending)]
    rest = body.split(":", 1)[1]
    _, comment = _split_comment(rest)
    extent = _value_extent(lines, close, index)
    lines[index:extent] = [f"{key}: {scalar}{comment}{ending}"]
    return "".join(lines)


def get_frontmatter_raw(text: str, key: str) -> str | None:
    """The raw text after ``key:`` on its line (without the comment), or None."""
    lines, close = _frontmatter_span(text)
    index = _key_index(lines, close, key)
    if index is None:
        return None
    line = lines[index].rstrip("\r\n")
    value, _ = _split_comment(line.split(":", 1)[1])
    return value.strip()


def append_to_list(text: str, key: str, item: str) -> str:
    """Append ``item`` (a string) to the top-level list ``key``; add the key if missing.

    ``key: []`` becomes ``key: ["item"]`` on the same line; a flow list gets the item
    before its ``]``; a block list gets one new ``- "item"`` line after its last item.
    """
    lines, close = _frontmatter_span(text)
    index = _key_index(lines, close, key)
    rendered = quoted(item)
    if index is None:
        return set_frontmatter_value(text, key, f"[{rendered}]")
    line = lines[index]
    ending = _ending(line)
    body = line[: len(line) - len(ending)]
    head, rest = body.split(":", 1)
    value, comment = _split_comment(rest)
    stripped = value.strip()
    if stripped.startswith("[") and stripped.endswith("]"):
        inner = stripped[1:-1].strip()
        new_value = f"[{inner}, {rendered}]" if inner else f"[{rendered}]"
        lines[index] = f"{head}: {new_value}{comment}{ending}"
        return "".join(lines)
    if stripped in ("", "~", "null"):
        extent = _value_extent(lines, close, index)
        items = [ln for ln in lines[index + 1 : extent] if ln.lstrip().startswith("-")]
        if stripped == "" and items:
            last = lines[extent - 1]
            indent = re.match(r"^[ \t]*", items[-1])
            prefix = indent.group(0) if indent else ""
            new_line = f"{prefix}- {rendered}{_ending(last) or _dominant_ending(lines)}"
            if not _ending(last):
                lines[extent - 1] = last + _dominant_ending(lines)
            lines.insert(extent, new_line)
            return "".join(lines)
        if extent == index + 1:
            lines[index] = f"{head}: [{rendered}]{comment}{ending}"
            return "".join(lines)
    raise VaultkeeperError(f"frontmatter key {key!r} is not a list that can be appended to")


def replace_line(text: str, line_no: int, new_content: str) -> str:
    """Replace 1-based line ``line_no``'s content, keeping its line ending."""
    lines = text.splitlines(keepends=True)
    old = lines[line_no - 1]
    lines[line_no - 1] = new_content + _ending(old)
    return "".join(lines)


def insert_line_after(text: str, line_no: int, new_content: str) -> str:
    """Insert a line after 1-based ``line_no``, using that line's ending (or the file's)."""
    lines = text.splitlines(keepends=True)
    anchor = lines[line_no - 1]
    ending = _ending(anchor) or _dominant_ending(lines)
    if not _ending(anchor):
        lines[line_no - 1] = anchor + ending
        ending = ""
    lines.insert(line_no, new_content + ending)
    return "".join(lines)


def replace_counter_value(line: str, value: str) -> str:
    """``**success count:** 2`` -> ``**success count:** 3``, keeping the label's spelling."""
    m = re.match(r"^(.*?\*\*[^*]+:\*\*[ \t]*)(.*?)([ \t]*)$", line.rstrip("\r\n"))
    if not m:
        raise VaultkeeperError(f"not a counter line: {line.strip()!r}")
    return f"{m.group(1)}{value}{m.group(3)}"
