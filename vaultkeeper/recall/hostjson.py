"""A host's JSON object on a hook's stdin, read until it parses, within a time and size.

A host may keep stdin open after writing its JSON, so a hook cannot read to the end of
input: it reads what is there, tries to parse it, and reads more only when the text is
not whole yet; it gives up past the deadline, the size limit, the end of input, or
when the value is not an object. Used by the recall hook and the session-start hook.
"""

from __future__ import annotations

import os
import select
import time
from collections.abc import Callable


def read_object(
    deadline: float, limit: int, parse: Callable[[bytes], object]
) -> tuple[dict[str, object] | None, int]:
    """(the host's JSON object or None, the bytes read) from stdin; ``deadline`` is a
    time.monotonic() value, ``limit`` the bytes read at most, ``parse`` raises
    ValueError on a text that is not whole JSON."""
    data = b""
    while len(data) < limit:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([0], [], [], left)[0]:
            break
        chunk = os.read(0, min(65536, limit - len(data)))
        if not chunk:
            break
        data += chunk
        if not data.rstrip().endswith(b"}"):
            continue  # not whole yet: no parse of a long text per chunk
        try:
            got = parse(data)
        except ValueError:
            continue
        except RecursionError:  # nested past the parser's depth: no object of ours
            break
        return (got if isinstance(got, dict) else None), len(data)
    return None, len(data)
