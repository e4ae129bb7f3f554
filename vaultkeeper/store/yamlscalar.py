"""YAML scalars as the edits write them: plain when that reads back as the same string,
else double-quoted pure ASCII.

Split from edit.py, which places the values in the file's lines; choosing how a value
is spelled is a rule of its own (YAML 1.1's surprises live here). yaml_scalar and
quoted are re-exported from edit.py, where callers import them.
"""

from __future__ import annotations

import json
import re

from vaultkeeper.store.model import ParseError, load_yaml

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
