"""``json.loads`` for plain JSON, without importing json: the state file on the no-op path.

The throttled scan (a session-end hook's usual run) reads one small JSON file, the state
file write_state wrote, and importing json would cost about a tenth of that run. ``loads``
reads the plain JSON such a file holds -- ASCII, objects, arrays, strings without escapes,
integers, true/false/null -- and returns exactly what ``json.loads`` returns for it. For
anything else (a float, an escape, non-ASCII text, deep nesting, a syntax error) it
returns NOT_PLAIN and the caller uses json, which also reports the errors. It never
guesses: a test checks it against json.loads on generated and mangled documents.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NOT_PLAIN = object()  # "ask json": never a value JSON can hold
_MAX_DEPTH = 32  # deeper documents go to json (which has its own recursion limit)
_MAX_DIGITS = 18  # longer integers go to json (int() refuses past 4300 digits)
_WS = " \t\n\r"  # JSON's whitespace, exactly
_LITERALS = (("null", None), ("true", True), ("false", False))
_NUMBER_END = frozenset(".eE0123456789")  # after an integer's digits: a float, or bad


class _NotPlain(Exception):
    pass


def loads(raw: bytes) -> Any:
    """What ``json.loads(raw)`` returns, or NOT_PLAIN when the text is not plain JSON."""
    if not raw.isascii():
        return NOT_PLAIN
    text = raw.decode("ascii")
    try:
        value, at = _value(text, _skip(text, 0), 0)
        if _skip(text, at) != len(text):
            return NOT_PLAIN
    except (_NotPlain, IndexError, ValueError):  # ValueError: no closing quote
        return NOT_PLAIN
    return value


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in _WS:
        at += 1
    return at


def _string(text: str, at: int) -> tuple[str, int]:
    """The string whose opening quote is at ``at``, and the index after its closing one."""
    end = text.index('"', at + 1)  # ValueError -> not found
    found = text[at + 1 : end]
    if "\\" in found or not found.isprintable():  # an escape, or a control character
        raise _NotPlain
    return found, end + 1


def _value(text: str, at: int, depth: int) -> tuple[Any, int]:
    first = text[at]
    if first == '"':
        return _string(text, at)
    if first == "{" or first == "[":
        if depth >= _MAX_DEPTH:
            raise _NotPlain
        return _container(text, at, depth + 1)
    if first == "-" or "0" <= first <= "9":
        end = at + 1
        while end < len(text) and "0" <= text[end] <= "9":
            end += 1
        digits = text[at + 1 if first == "-" else at : end]
        if (
            not digits
            or len(digits) > _MAX_DIGITS
            or (digits[0] == "0" and len(digits) > 1)
            or (end < len(text) and text[end] in _NUMBER_END)
        ):
            raise _NotPlain
        return int(text[at:end]), end
    for word, value in _LITERALS:
        if text.startswith(word, at):
            return value, at + len(word)
    raise _NotPlain


def _container(text: str, at: int, depth: int) -> tuple[Any, int]:
    """The object or array opening at ``at``, and the index after it."""
    is_object = text[at] == "{"
    close = "}" if is_object else "]"
    items: Any = {} if is_object else []
    at = _skip(text, at + 1)
    if text[at] == close:
        return items, at + 1
    while True:
        if is_object:
            if text[at] != '"':
                raise _NotPlain
            key, at = _string(text, at)
            at = _skip(text, at)
            if text[at] != ":":
                raise _NotPlain
            value, at = _value(text, _skip(text, at + 1), depth)
            items[key] = value  # a repeated key: the last one, as json.loads keeps it
        else:
            value, at = _value(text, at, depth)
            items.append(value)
        at = _skip(text, at)
        if text[at] == close:
            return items, at + 1
        if text[at] != ",":
            raise _NotPlain
        at = _skip(text, at + 1)
