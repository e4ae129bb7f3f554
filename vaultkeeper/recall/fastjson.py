"""JSON for the recall hook without importing ``json``: its C scanner and string encoder.

The hook runs on every prompt and file tool call. ``import json`` imports ``re`` (its
decoder's and scanner's patterns), and ``re`` imports ``enum`` and ``functools``: about
as much as the hook's own work. The decoding itself is done by ``_json``, the C module
``json`` uses, with the defaults ``json.loads`` gives it, so the values are the same;
a malformed text is handed to ``json.loads``, which raises its JSONDecodeError (a
ValueError), so ``json`` is imported only then.
Where ``_json`` is missing (another Python), ``json`` is used.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

try:
    import _json
except ImportError:  # pragma: no cover - CPython has it
    _json = None  # type: ignore[assignment]

_CONSTANTS = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}
_SPACE = " \t\n\r"


class _Context:
    """What ``_json.make_scanner`` reads from json.JSONDecoder: its defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__


_scan: Callable[[str, int], tuple[object, int]] | None = (
    None if _json is None else _json.make_scanner(_Context())  # type: ignore[arg-type]
)


def loads(data: bytes | str) -> object:
    """As ``json.loads``: one JSON value, whitespace around it, nothing else."""
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    if _scan is None:  # pragma: no cover
        import json

        return json.loads(text)
    start = len(text) - len(text.lstrip(_SPACE))
    try:
        value, end = _scan(text, start)
    except Exception:  # noqa: BLE001 - json says what is wrong (its error needs its module)
        value, end = None, -1
    if end == -1 or text[end:].strip(_SPACE):
        import json

        return json.loads(text)  # raises json.JSONDecodeError, a ValueError
    return value


def string(text: str, ascii_only: bool = False) -> str:
    """``text`` as a JSON string, quotes included (as ``json.dumps`` writes it)."""
    if _scan is None:  # pragma: no cover
        import json

        return json.dumps(text, ensure_ascii=ascii_only)
    encode = _json.encode_basestring_ascii if ascii_only else _json.encode_basestring
    return str(encode(text))


def obj(pairs: Mapping[str, object], ascii_only: bool = False) -> str:
    """A flat or nested object of strings as ``json.dumps`` writes it (``", "``, ``": "``)."""
    parts = []
    for key, value in pairs.items():
        if isinstance(value, dict):
            shown = obj(value, ascii_only)
        elif isinstance(value, str):
            shown = string(value, ascii_only)
        else:
            raise TypeError(f"{key}: {type(value).__name__} is not written here")
        parts.append(f"{string(key, ascii_only)}: {shown}")
    return "{" + ", ".join(parts) + "}"


def read_object(deadline: float, limit: int) -> tuple[dict[str, object] | None, int]:
    """A host's JSON object from stdin, and the bytes read: read until it parses, for a
    host may keep stdin open after writing it; None past ``deadline`` (time.monotonic),
    ``limit`` bytes, the end of input or anything but an object."""
    import os
    import select
    import time

    data = b""
    while len(data) < limit:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([0], [], [], left)[0]:
            break
        chunk = os.read(0, 65536)
        if not chunk:
            break
        data += chunk
        try:
            got = loads(data)
        except (ValueError, UnicodeDecodeError):
            continue
        except RecursionError:  # nested past the parser's depth: no object of ours
            break
        return (got if isinstance(got, dict) else None), len(data)
    return None, len(data)
