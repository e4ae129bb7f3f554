"""Where a touched file sits for the recall: its path as anchors and ``paths:`` globs
name it (relative to its git top level and to the session's folder), the session's
project. The ``paths:`` globs are matched by store.globs (bounded time).
"""

from __future__ import annotations

import os


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
