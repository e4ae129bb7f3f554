"""``paths:`` globs (Claude Code's ``.claude/rules`` convention), matched in bounded time.

The recall hook matches them on every file tool call, and a regex built from a crafted
glob backtracks exponentially. Here ``**`` is any number of whole folders, ``*`` and
``?`` stay within one name, ``[...]`` is a class; matching is dynamic programming over
(part, part) and (character, character), never exponential. ``problem`` names a glob
too long or with too many ``**`` (lint VK207; never matched). A glob with no ``/``
matches the file's name in any folder: ``matches("src/**/*.py", ["src/a/c.py"])``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence  # sqlite3 has them loaded: no typing

MAX_CHARS = 256  # a longer glob is refused (lint) and never matched (the hook)
MAX_STARS = 8  # ``**`` parts at most
MAX_PATH = 4096  # a longer path is never matched


def problem(glob: str) -> str | None:
    """Why ``glob`` cannot be matched quickly (None: it can)."""
    if len(glob) > MAX_CHARS:
        return f"is {len(glob)} characters long (at most {MAX_CHARS})"
    if glob.split("/").count("**") > MAX_STARS:
        return f"has more than {MAX_STARS} '**' parts"
    return None


def _class(pattern: str, i: int) -> tuple[int, set[str], bool] | None:
    """The ``[...]`` class at ``pattern[i]``: (index after it, its characters, negated);
    None when it is not closed (then ``[`` is a plain character)."""
    j = i + 1
    negated = j < len(pattern) and pattern[j] == "!"
    if negated:
        j += 1
    start = j
    while j < len(pattern) and (pattern[j] != "]" or j == start):
        j += 1
    if j >= len(pattern):
        return None
    body = pattern[start:j]
    chars: set[str] = set()
    k = 0
    while k < len(body):
        if k + 2 < len(body) and body[k + 1] == "-":
            lo, hi = ord(body[k]), ord(body[k + 2])
            chars.update(chr(c) for c in range(lo, min(hi, lo + 256) + 1))
            k += 3
        else:
            chars.add(body[k])
            k += 1
    return j + 1, chars, negated


Token = tuple[str, str, frozenset[str], bool]  # kind (= ? * [), the character, a class
_STAR: Token = ("*", "", frozenset(), False)


def _tokens(pattern: str) -> list[Token]:
    out: list[Token] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "*":
            if not out or out[-1] != _STAR:  # ``**`` inside a name is one ``*``
                out.append(_STAR)
            i += 1
        elif c == "?":
            out.append(("?", "", frozenset(), False))
            i += 1
        elif c == "[" and (got := _class(pattern, i)) is not None:
            i, chars, negated = got
            out.append(("[", "", frozenset(chars), negated))
        else:
            out.append(("=", c, frozenset(), False))
            i += 1
    return out


def _one(token: Token, c: str) -> bool:
    kind, char, chars, negated = token
    if kind == "?":
        return True
    if kind == "[":
        return (c in chars) != negated
    return char == c


def _reach(
    items: Sequence[object], seq: Sequence[str], star: object, one: Callable[..., bool]
) -> bool:
    """Whether ``items`` (glob parts, or one part's tokens) match ``seq`` (names, or one
    name's characters), ``star`` standing for any run: O(len(items) * len(seq))."""
    reach = [True] + [False] * len(seq)  # reach[j]: the items so far can match seq[:j]
    for item in items:
        if item == star:
            seen = False
            for j in range(len(reach)):
                seen = seen or reach[j]
                reach[j] = seen
        else:
            reach = [False] + [reach[j] and one(item, seq[j]) for j in range(len(seq))]
        if not any(reach):
            return False
    return reach[-1]


def name_matches(pattern: str, name: str) -> bool:
    """One name against one glob part (no ``/``)."""
    return _reach(_tokens(pattern), name, _STAR, _one)


def glob_matches(glob: str, path: str) -> bool:
    """Whether ``path`` (relative, ``/``-separated) matches ``glob``."""
    glob = glob.strip().lstrip("/")
    if not glob or problem(glob) is not None or len(path) > MAX_PATH:
        return False
    parts = glob.split("/")
    if len(parts) == 1:
        parts = ["**", *parts]  # a bare name: in any folder
    return _reach(parts, path.split("/"), "**", name_matches)


def matches(glob: str, paths: list[str]) -> bool:
    """Whether any of ``paths`` matches ``glob``."""
    return any(glob_matches(glob, p) for p in paths)
