"""Minimal edits to a JSON object's text: set or remove one member, keep every other byte.

A host's settings file comes back as it was apart from our one member. Members are
located with json's own decoder (``scanstring``, ``raw_decode``); each edit is checked by
parsing the result, and refused rather than written when it differs from the intent.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from json.decoder import scanstring  # type: ignore[attr-defined]  # no stub, but public
from typing import Any

from vaultkeeper.errors import VaultkeeperError

_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class Member:
    key: str
    key_start: int  # offset of the key's opening quote
    value_start: int
    value_end: int  # offset just past the value


@dataclass(frozen=True)
class Obj:
    open: int  # offset of "{"
    close: int  # offset of "}"
    members: tuple[Member, ...]

    def find(self, key: str) -> Member | None:
        found = [m for m in self.members if m.key == key]
        if len(found) > 1:
            raise VaultkeeperError(f"the key {key!r} appears {len(found)} times; nothing written")
        return found[0] if found else None


def _skip(text: str, pos: int) -> int:
    m = _WS.match(text, pos)
    return m.end() if m else pos


def parse_object(text: str, pos: int) -> Obj:
    """The object whose ``{`` is at ``pos`` (after whitespace), with its members' spans."""
    pos = _skip(text, pos)
    if text[pos : pos + 1] != "{":
        raise ValueError(f"expected an object at offset {pos}")
    members: list[Member] = []
    i = _skip(text, pos + 1)
    if text[i : i + 1] == "}":
        return Obj(pos, i, ())
    while True:
        if text[i : i + 1] != '"':
            raise ValueError(f"expected a key at offset {i}")
        key, j = scanstring(text, i + 1)
        j = _skip(text, j)
        if text[j : j + 1] != ":":
            raise ValueError(f"expected ':' at offset {j}")
        j = _skip(text, j + 1)
        _, end = _DECODER.raw_decode(text, j)
        members.append(Member(key, i, j, end))
        k = _skip(text, end)
        if text[k : k + 1] == ",":
            i = _skip(text, k + 1)
        elif text[k : k + 1] == "}":
            return Obj(pos, k, tuple(members))
        else:
            raise ValueError(f"expected ',' or '}}' at offset {k}")


def _line_indent(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    line = text[start:pos]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _dump(value: Any, indent: str, unit: str | None, nl: str) -> str:
    """``value`` as JSON laid out like the file: ``unit`` per level, nested under ``indent``
    (``unit`` None: on one line)."""
    if unit is None:
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", nl + indent)


def set_member(text: str, obj: Obj, key: str, value: Any, unit: str) -> str:
    """``text`` with ``obj[key] = value``: the old value's span replaced, or a member added,
    laid out as its neighbours are (one line, or one member a line) with the file's line
    ending."""
    nl = "\r\n" if "\r\n" in text else "\n"
    name = json.dumps(key, ensure_ascii=False)
    have = obj.find(key)
    one_line = "\n" not in text[obj.open : obj.close]
    if have is not None:
        indent = _line_indent(text, have.key_start)
        shown = _dump(value, indent, None if one_line else unit, nl)
        return text[: have.value_start] + shown + text[have.value_end :]
    if obj.members:  # after the last member, as it sits
        end = obj.members[-1].value_end
        indent = "" if one_line else _line_indent(text, obj.members[-1].key_start)
        member = f"{name}: {_dump(value, indent, None if one_line else unit, nl)}"
        return text[:end] + ("," + (" " if one_line else nl + indent)) + member + text[end:]
    outer = _line_indent(text, obj.open)
    indent = outer + unit
    member = f"{name}: {_dump(value, indent, unit, nl)}"
    return f"{text[: obj.open + 1]}{nl}{indent}{member}{nl}{outer}{text[obj.close :]}"


def remove_member(text: str, obj: Obj, key: str) -> str:
    """``text`` without ``obj[key]`` and the comma that joined it; the rest as it was."""
    have = obj.find(key)
    if have is None:
        return text
    at = obj.members.index(have)
    if at > 0:  # from the end of the member before it: its comma goes with it
        return text[: obj.members[at - 1].value_end] + text[have.value_end :]
    if len(obj.members) > 1:  # the first of several: up to the next key
        return text[: have.key_start] + text[obj.members[1].key_start :]
    return text[: obj.open + 1] + text[obj.close :]


def indent_unit(text: str) -> str:
    """The file's own indentation step (its first indented line), else two spaces."""
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            return line[: len(line) - len(stripped)]
    return "  "


def checked(new_text: str, expected: Any, where: str) -> str:
    """``new_text`` if it parses to ``expected``; otherwise refuse (nothing is written)."""
    try:
        ok = json.loads(new_text) == expected
    except ValueError:
        ok = False
    if not ok:
        raise VaultkeeperError(f"{where}: could not edit it in place safely; nothing written")
    return new_text
