"""``new memory ... --anchor PATH[::NAME]``: the anchors a new entry records.

Each anchor is resolved in the repository (``--repo DIR``, else the folder ``new`` runs
in) before anything is written: its digest and the commit checked out, or a one-line
refusal naming the anchor. The lines go at the end of the entry's frontmatter; the
project folder is tied to the repository once the entry exists (without --anchor or
--repo, to the repository ``new`` runs in, when the project is tied to no other).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.anchors import check, repo
from vaultkeeper.anchors.format import AnchorError, item_yaml, parse_at
from vaultkeeper.errors import UsageError


def resolve(kind: str, specs: Sequence[str], repo_dir: str | None) -> tuple[str | None, list[str]]:
    """(the repository's top level, the anchors: lines); without specs, ``repo_dir``'s
    top level (the project is tied to it) or None."""
    if not specs:
        if repo_dir is None:
            return None, []
        top = repo.toplevel(repo_dir)
        if top is None:
            raise UsageError(f"--repo: {repo_dir} is in no git repository")
        return top, []
    if kind not in ("memory", "decision"):
        raise UsageError(f"--anchor is for a memory or decision entry, not a {kind}")
    where = repo_dir or os.getcwd()
    top = repo.toplevel(where)
    if top is None:
        raise UsageError(
            f"--anchor: {where} is in no git repository (run inside one or --repo DIR)"
        )
    lines = [f"{config.ANCHORS_KEY}:"]
    for spec in specs:
        try:
            anchor = parse_at(spec)
            digest, commit = check.record(top, anchor)
        except (AnchorError, ValueError) as exc:
            raise UsageError(f"--anchor: {exc}") from None
        lines.append(item_yaml(spec.strip(), digest, commit))
    return top, lines


def with_anchors(content: str, lines: Sequence[str]) -> str:
    """``content`` with ``lines`` just before its frontmatter's closing ``---``."""
    if not lines:
        return content
    head, sep, rest = content.partition("\n---\n")
    if not sep or not content.startswith("---\n"):
        raise UsageError("--anchor: the template has no frontmatter to add anchors to")
    return head + "\n" + "\n".join(lines) + sep + rest


def tie_project(vault: Path, target: Path, top: str | None) -> None:
    """The entry's project tied to ``top`` (--repo, --anchor); with neither, to the
    repository ``new`` runs in, if the project is tied to no other (repo.tie if_free)."""
    project = repo.project_of(target.relative_to(vault).as_posix())
    if project is None:
        return
    if top is not None:
        repo.tie(vault, project, top)
    else:
        repo.tie(vault, project, os.getcwd(), if_free=True)
