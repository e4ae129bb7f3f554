"""The ``anchors:`` frontmatter list: what an anchor names, and its one-line problems.

An item is a mapping ``{at: AT, digest: "sha256:...", commit: SHA}``; ``at`` is one of
a file (``src/billing/cart.py``), a definition (``src/billing/cart.py::round_cart``,
``Class.method`` for a method) or a text (``src/billing/config.py: ROUNDING_MODE = 1``).
A falsification condition written as an anchor check reads ``"gone: AT"`` (or
``changed:``/``moved:``), so the check itself can decide it. The check's plain records
live here too: the report reads them back without loading git or the parsers.
"""

from __future__ import annotations

import json
import re
from collections import namedtuple
from typing import Any

from vaultkeeper import config

FILE, DEFINITION, TEXT = "file", "definition", "text"
_NAME = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*\Z")
_DIGEST = re.compile(r"sha256:[0-9a-f]{8,64}\Z")
_COMMIT = re.compile(r"[0-9a-f]{7,40}\Z")
_CONDITION = re.compile(r"\s*(gone|changed|moved):\s*(\S.*?)\s*\Z")

OK, CHANGED, MOVED, GONE, UNCHECKED = "ok", "changed", "moved", "gone", "unchecked"
REOPEN, DECIDED, HOLDS, REVIEW = "reopen", "condition-met", "condition-not-met", "review"

Anchor = namedtuple("Anchor", ("kind", "path", "name", "text"))
Item = namedtuple("Item", ("at", "anchor", "digest", "commit"))
Result = namedtuple("Result", ("at", "state", "moved_to", "commit"))
Finding = namedtuple("Finding", ("path", "name", "status", "condition", "results", "follows"))
Suggestion = namedtuple("Suggestion", ("path", "name", "anchors"))


class AnchorError(ValueError):
    """An anchor that can't be used, in one line (what is wrong, for which text)."""


def parse_at(at: str) -> Anchor:
    """``PATH``, ``PATH::NAME`` or ``PATH: TEXT``; raises AnchorError saying why not."""
    if not isinstance(at, str) or not at.strip():
        raise AnchorError("an anchor needs a path: PATH, PATH::NAME or 'PATH: TEXT'")
    at = at.strip()
    if "::" in at:
        path, name = at.split("::", 1)
        name = name.strip()
        if not _NAME.match(name):
            raise AnchorError(f"anchor {at!r}: {name!r} is not a name (name or Class.method)")
        return Anchor(DEFINITION, _path(path.strip(), at), name, None)
    head, sep, text = at.partition(": ")
    if sep and text.strip():
        return Anchor(TEXT, _path(head.strip(), at), None, " ".join(text.split()))
    return Anchor(FILE, _path(at, at), None, None)


def _path(path: str, at: str) -> str:
    if not path:
        raise AnchorError(f"anchor {at!r}: no path before the name")
    if len(path) > config.ANCHOR_MAX_PATH_CHARS:
        raise AnchorError(f"anchor {at[:60]!r}...: path over {config.ANCHOR_MAX_PATH_CHARS} chars")
    bad = next((c for c in path if ord(c) < 32 or c in "\\\x7f"), None)
    if bad is not None:
        raise AnchorError(f"anchor {at!r}: the path holds {bad!r}")
    parts = path.split("/")
    if path.startswith("/") or any(p in ("", ".", "..") for p in parts) or ":" in parts[0]:
        raise AnchorError(
            f"anchor {at!r}: give a path relative to the repository's top level, "
            "without '..', '.' or empty parts"
        )
    return path


def text_of(anchor: Anchor) -> str:
    """The ``at`` text of an anchor, as it is written back."""
    if anchor.kind == DEFINITION:
        return f"{anchor.path}::{anchor.name}"
    if anchor.kind == TEXT:
        return f"{anchor.path}: {anchor.text}"
    return str(anchor.path)


def parse_items(value: Any) -> tuple[list[Item], list[str]]:
    """The usable items of an ``anchors:`` value, and one problem line per unusable one."""
    items: list[Item] = []
    problems: list[str] = []
    if value is None:
        return items, problems
    if not isinstance(value, list):
        return items, [f"{config.ANCHORS_KEY}: is not a list of {{at, digest, commit}} items"]
    for n, raw in enumerate(value, 1):
        where = f"{config.ANCHORS_KEY}[{n}]"
        if not isinstance(raw, dict) or not isinstance(raw.get("at"), str):
            problems.append(f"{where}: not a mapping with at: PATH[::NAME]")
            continue
        extra = sorted(str(k) for k in raw if k not in ("at", "digest", "commit"))
        if extra:
            problems.append(f"{where}: unknown key {extra[0]!r} (at, digest, commit only)")
            continue
        try:
            anchor = parse_at(raw["at"])
        except AnchorError as exc:
            problems.append(f"{where}: {exc}")
            continue
        digest, commit = raw.get("digest"), raw.get("commit")
        if digest is not None and not (isinstance(digest, str) and _DIGEST.match(digest)):
            problems.append(f"{where}: digest {digest!r} is not sha256:HEX")
            continue
        if commit is not None and not (isinstance(commit, str) and _COMMIT.match(commit)):
            problems.append(f"{where}: commit {commit!r} is not a hex commit id")
            continue
        items.append(Item(raw["at"].strip(), anchor, digest, commit))
    return items, problems


def parse_condition(condition: Any) -> tuple[str, Anchor] | None:
    """``("gone", anchor)`` for ``falsification_condition: "gone: AT"``; else None."""
    if not isinstance(condition, str):
        return None
    m = _CONDITION.match(condition)
    if m is None:
        return None
    try:
        return m.group(1), parse_at(m.group(2))
    except AnchorError:
        return None


def item_yaml(at: str, digest: str | None, commit: str | None) -> str:
    """One flow-mapping list line, ``  - {at: "...", digest: "...", commit: "..."}``."""

    parts = [f"at: {json.dumps(at, ensure_ascii=True)}"]
    if digest:
        parts.append(f'digest: "{digest}"')
    if commit:
        parts.append(f'commit: "{commit}"')
    return "  - {" + ", ".join(parts) + "}"
