"""Where a touched file sits for the recall: its path as anchors and ``paths:`` globs
name it (relative to its git top level and to the session's folder), the session's
project, and Claude Code's rule globs (``.claude/rules/*.md``). Imports only os; ``re``
when a glob is matched.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from re import Pattern


def project_for(cwd: str | None, projects: set[str]) -> str | None:
    """The project named as the git repository ``cwd`` is in, or as ``cwd`` itself."""
    if not cwd or not os.path.isabs(cwd):
        return None
    folded = {p.casefold(): p for p in projects}
    here = os.path.normpath(cwd)
    names = []
    probe = here
    for _ in range(40):
        if os.path.exists(os.path.join(probe, ".git")):
            names.append(os.path.basename(probe))
            break
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    names.append(os.path.basename(here))
    return next((folded[n.casefold()] for n in names if n and n.casefold() in folded), None)


def _root_of(path: str) -> str | None:
    probe = os.path.dirname(path)
    for _ in range(40):
        if os.path.exists(os.path.join(probe, ".git")):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return None
        probe = parent
    return None


def relative_forms(path: str, cwd: str | None) -> list[str]:
    """The touched file as anchors and globs name it: relative to its repository's top
    level, and to the session's folder."""
    if not os.path.isabs(path):
        if not cwd or not os.path.isabs(cwd):
            rel = path[2:] if path.startswith("./") else path
            return [rel] if rel and ".." not in rel.split("/") else []
        path = os.path.join(cwd, path)
    path = os.path.normpath(path)
    out = []
    for base in (_root_of(path), cwd):
        if base and path.startswith(base.rstrip("/") + "/"):
            rel = path[len(base.rstrip("/")) + 1 :]
            if rel not in out:
                out.append(rel)
    return out


_GLOB_PART = r"\*\*/|\*\*|\*|\?|\[[^\]/]*\]|[^*?\[]+|\["


def glob_regex(glob: str) -> Pattern[str]:
    """Claude Code's rule globs: ``**`` any folders, ``*`` and ``?`` within one name,
    ``[...]`` a class; a glob with no ``/`` matches the name in any folder."""
    import re

    out = []
    for part in re.findall(_GLOB_PART, glob.lstrip("/")):
        if part == "**/":
            out.append("(?:[^/]+/)*")
        elif part == "**":
            out.append(".*")
        elif part == "*":
            out.append("[^/]*")
        elif part == "?":
            out.append("[^/]")
        elif part.startswith("[") and len(part) > 2:
            body = part[1:-1]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
        else:
            out.append(re.escape(part))
    prefix = "" if "/" in glob.strip("/") else "(?:[^/]+/)*"
    return re.compile(prefix + "".join(out) + r"\Z")


def _tail(glob: str) -> str:
    """The literal text a match must end with (after the last wildcard)."""
    cut = max(glob.rfind("*"), glob.rfind("?"), glob.rfind("]"))
    return glob[cut + 1 :]


def matches(glob: str, rels: list[str]) -> bool:
    tail = _tail(glob)
    return any(rel.endswith(tail) and glob_regex(glob).match(rel) for rel in rels)
