"""The YAML frontmatter of a note: where the block sits, and loading it safely.

The YAML guards apart from the note model (store.model re-exports them): a safe loader,
impossible dates, aliases that would expand without bound, numbers too long to read,
every error placed at its line. PyYAML is imported on first use (a stand-in,
docs/benchmarks.md: the brief imports this module and never parses YAML; PyYAML's
import is about 18 ms of its 150 ms bound).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from vaultkeeper.store.text import ParseError, split_lines


@functools.lru_cache(maxsize=1)
def _loader() -> Any:
    """The safe loader, with an impossible date (2026-02-30) reported at its line."""
    import yaml

    try:  # the C loader is several times faster; both are the *safe* loader
        base: Any = yaml.CSafeLoader
    except AttributeError:  # pragma: no cover - depends on how PyYAML was built
        base = yaml.SafeLoader

    def construct_timestamp(loader: Any, node: Any) -> Any:
        try:
            return yaml.constructor.SafeConstructor.construct_yaml_timestamp(loader, node)
        except ValueError as exc:
            # YAML's timestamp form matched but the calendar says no; without this the
            # ValueError would carry no line number.
            raise yaml.constructor.ConstructorError(
                None, None, f"{node.value!r} is not a real date ({exc})", node.start_mark
            ) from None

    loader: Any = type("_SafeLoader", (base,), {})
    loader.add_constructor("tag:yaml.org,2002:timestamp", construct_timestamp)
    return loader


def split_frontmatter(text: str) -> tuple[str | None, int, int]:
    """(yaml_text, closing_line, body_offset) of the frontmatter block: yaml_text None
    when the file does not open with ``---``; the closing line (1-based) is the first
    later ``---`` or ``...`` line, trailing whitespace stripped."""
    if not text.startswith("---"):
        return None, 0, 0
    first_end = text.find("\n")
    if first_end == -1 or text[:first_end].rstrip() != "---":
        return None, 0, 0
    find = text.find
    pos = first_end
    while True:
        # jump from one line starting with --- or ... to the next: no loop per line
        dashes = find("\n---", pos)
        dots = find("\n...", pos, len(text) if dashes == -1 else dashes)
        at = dashes if dots == -1 else dots
        if at == -1:
            raise ParseError("frontmatter opened with --- but never closed", 1)
        start = at + 1
        nl = find("\n", start)
        if (text[start:] if nl == -1 else text[start:nl]).rstrip() in ("---", "..."):
            body_offset = len(text) if nl == -1 else nl + 1
            return text[first_end + 1 : start], text.count("\n", 0, start) + 1, body_offset
        pos = start


def load_yaml(yaml_text: str) -> Any:
    """Safe YAML only: a ``!!python/object`` tag is a parse error, never executed."""
    import yaml

    try:
        data = yaml.load(yaml_text, Loader=_loader())  # noqa: S506 - a safe loader
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = None if mark is None else _mark_line(yaml_text, mark)
        raise ParseError(
            f"bad YAML frontmatter: {_one_line(exc.problem or str(exc))}", line
        ) from None
    except yaml.YAMLError as exc:
        raise ParseError(f"bad YAML frontmatter: {_one_line(str(exc))}", None) from None
    except ValueError as exc:
        if "integer string conversion" in str(exc):  # Python's int-string limit
            raise ParseError(_HUGE_NUMBER, _line_of(yaml_text, "[0-9_]{1000}")) from None
        raise ParseError(f"bad YAML frontmatter: {_one_line(str(exc))}", None) from None
    except (TypeError, OverflowError, RecursionError) as exc:
        raise ParseError(f"bad YAML frontmatter: {_one_line(str(exc))}", None) from None
    if "*" in yaml_text and _shares_a_collection(data):
        raise ParseError(ALIAS_REASON, _line_of(yaml_text, r"(?:^|[\s\[{,:-])\*[^\s,\[\]{}]"))
    return data


ALIAS_REASON = (
    "bad YAML frontmatter: an alias (*name) repeats a list or mapping; write the values out instead"
)


_HUGE_NUMBER = "bad YAML frontmatter: a number too long to read (thousands of digits)"


def _line_of(yaml_text: str, pattern: str) -> int | None:
    """The file line of the first YAML line matching ``pattern`` (the ``---`` is line 1)."""
    found = (n for n, line in enumerate(split_lines(yaml_text), 2) if re.search(pattern, line))
    return next(found, None)


def _shares_a_collection(data: Any) -> bool:
    """True when one list or mapping is reached twice (only an alias can do that): a
    reader walking it would expand nested aliases ("billion laughs") to gigabytes.
    Each collection visited once: linear in the loaded size."""
    seen: set[int] = set()
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, (dict, list)):
            if id(item) in seen:
                return True
            seen.add(id(item))
            stack.extend(item.values() if isinstance(item, dict) else item)
    return False


def _mark_line(yaml_text: str, mark: Any) -> int:
    # from the character index (YAML also breaks at U+2028 and NEL, editors do not); +2:
    # 1-based, and the opening ---; an error at the stream's end is on the last line
    last = max(yaml_text.count("\n"), 1) + 1
    index = getattr(mark, "index", None)
    if isinstance(index, int) and 0 <= index <= len(yaml_text):
        return min(yaml_text.count("\n", 0, index) + 2, last)
    return min(int(mark.line) + 2, last)


def _one_line(message: str) -> str:
    return " ".join(message.split()) or "unreadable"


def top_key_lines(yaml_text: str) -> dict[str, int]:
    """Top-level key -> its 1-based line in the file (the opening ``---`` is line 1)."""
    lines: dict[str, int] = {}
    for i, line in enumerate(yaml_text.split("\n"), start=2):  # at \n only, as split_lines
        if line[:1] not in ("", " ", "\t", "#", "-") and ":" in line:
            lines.setdefault(line.split(":", 1)[0].strip().strip("'\""), i)
    return lines
