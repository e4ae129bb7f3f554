"""Read a few top-level frontmatter keys without YAML, when the block is simple enough.

The scanner reads every memory file's frontmatter after every session, and PyYAML costs
several times more than reading the file. Most frontmatter comes from templates:
``key: value`` lines with plain or quoted scalars, empty or simple lists, and one-level
mappings under keys nobody asked for (``relations:`` then ``  supersedes: "[[x]]"``). For such a
block ``read_keys`` returns exactly what the safe YAML loader would for the keys asked
for; for anything else it returns None and the caller parses with YAML. It never
guesses: a test checks it against the YAML path on generated and real frontmatter.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
import sys
from collections.abc import Collection
from typing import Any

# YAML's printable set less what PyYAML reads as a line break (NEL, U+2028/9) or a BOM;
# a tab or a lone CR also sends the block to YAML. Compiling the full class costs
# milliseconds at every start, so ASCII text (the spec's vaults) is checked with the
# ASCII part alone and the full class is compiled only when some text needs it.
_UNSAFE_ASCII = re.compile("[^\n\x20-\x7e]")
_UNSAFE_CLASS = (
    "[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)
_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_-]{0,99}):(?: +(.*))?$")
_ITEM = re.compile(r"( *)-(?: +(.*))?$")
# a key of a mapping nested under a key nobody asked for ("relations:" then "  parent: x")
_NESTED = re.compile(r"( +)([A-Za-z_][A-Za-z0-9_-]{0,99}):(?: +(.*))?$")
_COMMENT = r"(?: +#.*)?$"
_QUOTED = re.compile(r'(?:"([^"\\]*)"|\'((?:[^\']|\'\')*)\')' + _COMMENT)
_EMPTY_FLOW = re.compile(r"(\[ *\]|\{ *\})" + _COMMENT)
_DQ = r'"[^"\\]*"'
_FLOW_LIST = re.compile(rf"(\[ *{_DQ}(?: *, *{_DQ})* *\])" + _COMMENT)
_DQ_ITEM = re.compile(r'"([^"\\]*)"')
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_INT = re.compile(r"0|[1-9][0-9]*")
_DIGITS = frozenset("0123456789")
_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
# a key line whose value is valid YAML and needs no reading: for keys nobody asked for
_EASY = re.compile(r'([A-Za-z_][A-Za-z0-9_-]{0,99}): +(?:"[^"\\]*"|[A-Za-z_][^:#]*|\[\]|\{\})$')
# The commonest blocks, checked whole by one regex: every line a key with a quoted, plain,
# date, integer or empty-collection value (or none), a comment, or blank. No ASCII
# control character may appear (_BAD), so an ASCII block this matches needs no _unsafe.
_BAD = r"\x00-\x1f\x7f"
# An unquoted date YAML reads as a real one: any year but 0, every day of every month but
# 29 February (which a leap year would need; such a block goes the slower way, which
# checks it). So a block _BLOCK matches holds no date YAML would refuse.
_REAL_DATE = (
    r"(?!0000)[0-9]{4}-(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])"
    r"|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)"
)
_VALUE = (
    rf'(?: +(?:"[^"\\{_BAD}]*"|\'(?:[^\'{_BAD}]|\'\')*\'|[A-Za-z_][^:#{_BAD}]*'
    rf"|{_REAL_DATE}|(?:0|[1-9][0-9]*)|\[ *\]|\{{ *\}}"
    rf'|\[ *"[^"\\{_BAD}]*"(?: *, *"[^"\\{_BAD}]*")* *\]))?'
)
# Each line atomic where the engine has atomic groups (3.11+): once a line has matched up
# to its line break, no other way of matching it can help, and a block that fails then
# fails at once instead of retrying every line.
_ONCE = "(?>" if sys.version_info >= (3, 11) else "(?:"
_LINE = rf"(?:[A-Za-z_][A-Za-z0-9_-]{{0,99}}:{_VALUE} *(?: #[^{_BAD}]*)?|#[^{_BAD}]*| *)\n"
_LINES = rf"(?:{_ONCE}{_LINE}))*"
_BLOCK = re.compile(_LINES)
# A whole file that opens with such a block: none of its lines is a delimiter, so the
# first line after it closes the frontmatter, as model.split_frontmatter finds it.
_FRONT = re.compile(rf"---\n({_LINES})(?:---|\.\.\.)[ \t]*(?:\n|\Z)")
# a literal or folded block scalar's header, with its chomping indicator (no explicit
# indentation, no comment): its lines are skipped when its key is not wanted
_SCALAR_HEADERS = frozenset(("|", ">", "|-", ">-", "|+", ">+"))
# PyYAML's implicit resolvers for plain scalars that start with a letter
_WORDS: dict[str, Any] = {
    **dict.fromkeys(("yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), True),
    **dict.fromkeys(("no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), False),
    **dict.fromkeys(("null", "Null", "NULL"), None),
}


class _Unsure(Exception):
    pass


@functools.lru_cache(maxsize=1)
def _unsafe_unicode() -> re.Pattern[str]:
    return re.compile(_UNSAFE_CLASS)


def _unsafe(text: str) -> bool:
    """True when ``text`` holds a character the fast reader leaves to YAML."""
    if text.isascii():
        return _UNSAFE_ASCII.search(text) is not None
    return _unsafe_unicode().search(text) is not None


def _scalar(text: str) -> Any:
    """The value YAML gives the text after ``key:`` or ``-`` (raises _Unsure if unsure)."""
    if not text or text[0] == "#":
        return None
    first = text[0]
    if first in "\"'":
        m = _QUOTED.match(text)
        if m is None:
            raise _Unsure
        return m.group(1) if m.group(1) is not None else m.group(2).replace("''", "'")
    if first in "[{":
        m = _EMPTY_FLOW.match(text)
        if m is not None:
            return [] if first == "[" else {}
        m = _FLOW_LIST.match(text)
        if m is None:
            raise _Unsure
        return _DQ_ITEM.findall(m.group(1))
    cut = text.find(" #")
    plain = (text if cut == -1 else text[:cut]).rstrip(" ")
    if first in _DIGITS:
        if _DATE.fullmatch(plain):
            try:
                return dt.date.fromisoformat(plain)
            except ValueError:
                raise _Unsure from None  # YAML reports the impossible date
        if _INT.fullmatch(plain):
            try:
                return int(plain)
            except ValueError:  # past Python's int-string limit: YAML reports it
                raise _Unsure from None
        raise _Unsure
    # a plain string: starts with a letter (so no number, date or indicator), and no
    # ": " or final ":" (which would open a mapping); "https://x" is fine
    if first in _LETTERS and ": " not in plain and plain[-1] != ":":
        return _WORDS.get(plain, plain)
    raise _Unsure


def read_front(
    text: str, wanted: Collection[str]
) -> tuple[dict[str, Any], dict[str, int], str] | None:
    """read_keys for a whole file's text in its commonest form, with the frontmatter.

    (values, lines, yaml_text) when the file opens with a block _BLOCK matches (then
    ``yaml_text`` is what split_frontmatter gives), else None: split the file and use
    read_keys (or YAML). One regex instead of a split and a check.
    """
    m = _FRONT.match(text)
    if m is None or not m.group(1).isascii():
        return None
    yaml_text = m.group(1)
    picked = _pick(yaml_text, wanted)
    return None if picked is None else (*picked, yaml_text)


def read_more(
    yaml_text: str, wanted: Collection[str]
) -> tuple[dict[str, Any], dict[str, int]] | None:
    """read_keys of the ``yaml_text`` read_front gave (a block already matched whole:
    not matched again); None: use YAML."""
    return _pick(yaml_text, wanted)


def read_keys(
    yaml_text: str, wanted: Collection[str]
) -> tuple[dict[str, Any], dict[str, int]] | None:
    """(values, 1-based file lines) of the ``wanted`` keys present, or None: use YAML.

    ``yaml_text`` is the block between the ``---`` lines (its first line is line 2 of
    the file). None whenever any line is outside the simple forms, so a block YAML
    would reject, or read differently, always goes to YAML.
    """
    text = yaml_text.replace("\r\n", "\n")
    if not text.endswith("\n"):
        text += "\n"
    if _BLOCK.fullmatch(text) and (text.isascii() or not _unsafe(text)):
        return _pick(text, wanted)
    if _unsafe(text):
        return None
    values: dict[str, Any] = {}
    lines: dict[str, int] = {}
    key: str | None = None
    may_list = False  # the last key had no value: a block list or mapping may follow
    indent: int | None = None  # of the items (or nested keys) under the last key
    nested = False  # those are a mapping's keys, not list items
    scalar = False  # inside the block scalar (| or >) of a key nobody asked for
    scalar_indent: int | None = None
    try:
        for number, line in enumerate(text.split("\n"), start=2):
            if scalar:
                if not line:
                    continue
                if line[0] == " ":
                    content = line.lstrip(" ")
                    if not content:
                        return None  # an all-space line can change YAML's indentation
                    depth = len(line) - len(content)
                    if scalar_indent is None:
                        scalar_indent = depth
                    elif depth < scalar_indent:
                        return None
                    continue
                scalar = False  # a line at column 0 ends the scalar
            first = line[:1]
            if not line.strip(" ") or first == "#":
                continue
            if first in (" ", "-"):
                if line.lstrip(" ")[0] == "#":
                    continue
                m = _ITEM.match(line)
                is_key = m is None
                if is_key:
                    m = _NESTED.match(line)  # one level only, every key at one indentation
                if m is None or not may_list or key in wanted:
                    return None
                if indent is None:
                    indent, nested = len(m.group(1)), is_key
                elif indent != len(m.group(1)) or nested != is_key:
                    return None  # deeper, shallower, or a list mixed with a mapping
                _scalar((m.group(3 if is_key else 2) or "").rstrip(" "))
                continue
            m = _EASY.match(line)
            if m is not None and m.group(1) not in wanted:
                key, may_list, indent = m.group(1), False, None
                continue
            m = _KEY.match(line)
            if m is None:
                return None
            key, rest = m.group(1), (m.group(2) or "").rstrip(" ")
            if rest in _SCALAR_HEADERS:
                if key in wanted:
                    return None
                scalar, scalar_indent, may_list, indent = True, None, False, None
                continue
            value = _scalar(rest)
            may_list, indent = (not rest or rest[0] == "#"), None
            if key in wanted:
                if key in values:
                    return None  # a repeated key: leave it to YAML
                values[key] = value
                lines[key] = number
    except _Unsure:
        return None
    return values, lines


def _pick(text: str, wanted: Collection[str]) -> tuple[dict[str, Any], dict[str, int]] | None:
    """The wanted keys of a block _BLOCK matched whole (so only their values need reading)."""
    lead = "\n" + text  # every key line of a matched block starts after a "\n" here
    values: dict[str, Any] = {}
    lines: dict[str, int] = {}
    try:
        for key in wanted:
            needle = f"\n{key}:"
            at = lead.find(needle)
            if at == -1:
                continue
            if lead.find(needle, at + 1) != -1:
                return None  # a repeated key: leave it to YAML
            start = at + len(needle)
            values[key] = _scalar(lead[start : lead.find("\n", start)].strip(" "))
            lines[key] = lead.count("\n", 0, at) + 2
    except _Unsure:
        return None
    return values, lines
