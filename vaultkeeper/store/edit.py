"""Minimal line edits: change one value, touch one line, keep every other byte.

These functions work on text and return text; writing is fsio's job. Each edit keeps
the edited line's own line ending (CRLF stays CRLF) and any trailing ``# comment``.
How a value is spelled as a YAML scalar is at the end of this module.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.store.model import (
    ParseError,
    decode,
    load_yaml,
    read_regular,
    split_frontmatter,
    split_lines,
)

BOM = "\ufeff"


def read_for_edit(path: Path, where: str | None = None) -> tuple[str, str]:
    """``(text, bom)`` of a file about to be edited; write back ``bom + new_text``.

    ``bom`` is the UTF-8 byte-order mark when the file starts with one (model.decode drops
    it), else "". A file that is not UTF-8 text is a VaultkeeperError naming ``where``.
    """
    label = where or str(path)
    try:
        raw = read_regular(path)  # a FIFO is refused, never waited on
    except ParseError as exc:
        raise VaultkeeperError(f"{label}: {exc.reason}") from None
    try:
        text = decode(raw)
    except ParseError as exc:
        line = f":{exc.line}" if exc.line else ""
        raise VaultkeeperError(f"{label}{line}: {exc.reason}") from None
    return text, BOM if raw.startswith(BOM.encode("utf-8")) else ""


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
    escaped = False
    previous = ""  # last non-blank character outside quotes
    for i, ch in enumerate(rest):
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\" and quote == '"':
                escaped = True
            elif ch == quote:
                quote = None
                previous = ch
            continue
        if ch in "\"'" and previous in ("", "[", "{", ",", ":", "-", "?"):
            # a quote opens a quoted scalar only where a scalar starts; inside a plain
            # value (it's, 5'11") it is just a character
            quote = ch
        elif ch == "#" and i > 0 and rest[i - 1] in " \t":
            j = i
            while j > 0 and rest[j - 1] in " \t":
                j -= 1
            return rest[:j], rest[j:]
        elif ch not in " \t":
            previous = ch
    return rest, ""


def _find(text: str, key: str) -> tuple[list[str], int, int | None]:
    """The file's lines, the 0-based index of the closing ``---`` and of top-level
    ``key``'s line (None: absent)."""
    try:
        yaml_text, end_line, _ = split_frontmatter(text)
    except ParseError as exc:
        raise VaultkeeperError(f"cannot edit: {exc.reason}") from None
    if yaml_text is None:
        raise VaultkeeperError("file has no frontmatter to edit")
    lines, close = split_lines(text), end_line - 1
    pattern = _key_pattern(key)
    found = [i for i in range(1, close) if pattern.match(lines[i])]
    if len(found) > 1:
        # YAML keeps the last one; editing the first would change nothing a reader sees
        where = " and ".join(str(i + 1) for i in found)
        raise VaultkeeperError(f"frontmatter key {key!r} appears on lines {where}; keep one")
    return lines, close, found[0] if found else None


def _key_pattern(key: str) -> re.Pattern[str]:
    k = re.escape(key)
    return re.compile(r"^(?:" + k + '|"' + k + "\"|'" + k + r"')[ \t]*:(?=[ \t]|$|\r?\n)")


def _value_extent(lines: list[str], close: int, index: int) -> int:
    """Index one past the last line belonging to the key at ``index`` (nested/list lines)."""
    j = index + 1
    while j < close and (lines[j][:1] in (" ", "\t", "-") or not lines[j].strip()):
        j += 1
    # trailing blank and comment lines are the gap before the next key, not the value
    while j - 1 > index and (not lines[j - 1].strip() or lines[j - 1].lstrip().startswith("#")):
        j -= 1
    return j


def _parts(line: str, key: str) -> tuple[str, str, str, str, str]:
    """``status:   held_out # c\n`` -> (``status:``, ``   held_out``, ``held_out``, `` # c``,
    ``\n``): the key as spelled, its value with and without blanks, comment, ending."""
    ending = _ending(line)
    body = line[: len(line) - len(ending)]
    m = _key_pattern(key).match(body)
    if m is None:  # pragma: no cover - callers found the line with the same pattern
        raise VaultkeeperError(f"frontmatter key {key!r} not found")
    value, comment = _split_comment(body[m.end() :])
    return body[: m.end()], value, value.strip(), comment, ending


def set_frontmatter_value(text: str, key: str, scalar: str) -> str:
    """Set top-level ``key`` to the already-formatted YAML ``scalar``.

    An existing one-line value is replaced on its own line; a key with a nested value
    has its continuation lines replaced too; a missing key is added as one new line
    just before the closing ``---``.
    """
    lines, close, index = _find(text, key)
    if index is None:
        ending = _ending(lines[close - 1]) if close > 0 else "\n"
        lines.insert(close, f"{key}: {scalar}{ending or _dominant_ending(lines)}")
        return "".join(lines)
    head, value, bare, comment, ending = _parts(lines[index], key)
    # keep the key's own spelling and the spacing after its colon (aligned values)
    gap = value[: len(value) - len(value.lstrip(" \t"))] if bare else " "
    extent = _value_extent(lines, close, index)
    lines[index:extent] = [f"{head}{gap or ' '}{scalar}{comment}{ending}"]
    return "".join(lines)


def get_frontmatter_raw(text: str, key: str) -> str | None:
    """The raw text after ``key:`` on its line (without the comment), or None."""
    lines, close, index = _find(text, key)
    if index is None:
        return None
    return _parts(lines[index], key)[2]


def key_block(text: str, key: str) -> str | None:
    """The exact lines (endings kept) of top-level ``key`` and its nested value, or None."""
    lines, close, index = _find(text, key)
    if index is None:
        return None
    return "".join(lines[index : _value_extent(lines, close, index)])


def put_key_block(text: str, key: str, block: str | None) -> str:
    """Put back what ``key_block`` returned: replace the key's lines with ``block``, drop
    them (None), or add ``block`` just before the closing ``---`` where the key is absent.

    The inverse of ``set_frontmatter_value`` / ``append_to_list`` on the same key, so an
    undo restores every byte.
    """
    lines, close, index = _find(text, key)
    new = split_lines(block) if block else []
    if index is None:
        lines[close:close] = new
    else:
        lines[index : _value_extent(lines, close, index)] = new
    return "".join(lines)


def append_to_list(text: str, key: str, item: str) -> str:
    """Append ``item`` (a string) to the top-level list ``key``; add the key if missing.

    ``key: []`` becomes ``key: ["item"]`` on the same line; a flow list gets the item
    before its ``]``; a block list gets one new ``- "item"`` line after its last item.
    """
    lines, close, index = _find(text, key)
    rendered = quoted(item)
    if index is None:
        return set_frontmatter_value(text, key, f"[{rendered}]")
    head, value, stripped, comment, ending = _parts(lines[index], key)
    head = head[:-1]  # without the colon
    if stripped.startswith("[") and stripped.endswith("]"):
        inner = stripped[1:-1]
        if inner.strip():
            # only the closing bracket moves: the items and their spacing stay as written
            close_at = value.rindex("]")
            inner_end = len(value[:close_at].rstrip(" \t"))
            sep = " " if value[:inner_end].endswith(",") else ", "  # [a, b,] stays valid
            new_rest = value[:inner_end] + f"{sep}{rendered}" + value[inner_end:]
        else:
            new_rest = value[: value.index("[")] + f"[{rendered}]" + value[value.rindex("]") + 1 :]
        lines[index] = f"{head}:{new_rest}{comment}{ending}"
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
    lines = split_lines(text)
    set_line(lines, line_no, new_content)
    return "".join(lines)


def insert_line_after(text: str, line_no: int, new_content: str) -> str:
    """Insert a line after 1-based ``line_no``, using that line's ending (or the file's)."""
    lines = split_lines(text)
    add_line_after(lines, line_no, new_content)
    return "".join(lines)


def set_line(lines: list[str], line_no: int, new_content: str) -> None:
    """replace_line on a file's lines (split_lines), in place: many edits, one split."""
    lines[line_no - 1] = new_content + _ending(lines[line_no - 1])


def add_line_after(lines: list[str], line_no: int, new_content: str) -> None:
    """insert_line_after on a file's lines, in place (edit from the bottom up)."""
    anchor = lines[line_no - 1]
    ending = _ending(anchor) or _dominant_ending(lines)
    if not _ending(anchor):
        lines[line_no - 1] = anchor + ending
        ending = ""
    lines.insert(line_no, new_content + ending)


def replace_counter_value(line: str, value: str) -> str:
    """``**success count:** 2`` -> ``**success count:** 3``, keeping the label's spelling."""
    m = re.match(r"^(.*?\*\*[^*]+:\*\*[ \t]*)(.*?)([ \t]*)$", line.rstrip("\r\n"))
    if not m:
        raise VaultkeeperError(f"not a counter line: {line.strip()!r}")
    label = m.group(1)
    if not label.endswith((" ", "\t")) and not m.group(2):
        label += " "  # `**last used:**` with no value: don't glue the date to the label
    return f"{label}{value}{m.group(3)}"


# -- YAML scalars as the edits write them: plain when that reads back as the same
# string, else double-quoted pure ASCII (YAML 1.1's surprises live here).

_PLAIN_SAFE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_./-]*$")
_YAML_WORDS = {"true", "false", "yes", "no", "on", "off", "null", "none", "~"}


def yaml_scalar(value: str) -> str:
    """A YAML scalar for ``value``: plain when that reads back as the same string."""
    if (
        _PLAIN_SAFE.match(value)
        and value.lower() not in _YAML_WORDS
        and not _looks_numeric(value)
        and _reads_back(value)
    ):
        return value
    return quoted(value)


def _reads_back(value: str) -> bool:
    # The last word on plain-vs-quoted: YAML 1.1 also resolves 0x1f, 0b101, 0o17 ...
    try:
        return bool(load_yaml(f"k: {value}\n") == {"k": value})
    except ParseError:
        return False


def quoted(value: str) -> str:
    """Always double-quoted (dates must be quoted for the scanner's regex).

    Pure ASCII: anything else is written as a YAML escape (\\u00e9, \\U0001f600), so the
    vault stays ASCII and characters YAML reads as line breaks (U+2028, NEL) or refuses
    (DEL, C1 controls) still read back as themselves.
    """
    return _NON_ASCII.sub(_escape, json.dumps(value, ensure_ascii=False))


_NON_ASCII = re.compile(r"[^\x20-\x7e]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _looks_numeric(value: str) -> bool:
    return bool(
        re.fullmatch(r"[-+]?(\d[\d_]*(\.\d*)?|\.\d+)([eE][-+]?\d+)?|\d{4}-\d\d-\d\d.*", value)
    )
