"""VK3xx: the link graph -- broken and ambiguous links, orphans, the index's load budget."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping

from vaultkeeper import config
from vaultkeeper.index.headings import AnchorTable
from vaultkeeper.lint.codes import Finding
from vaultkeeper.store.links import Link, Resolver


def check_links(
    rel: str,
    links: Iterable[Link],
    resolver: Resolver,
    enabled: Callable[[str], bool],
    edges: set[str],
    anchors: AnchorTable | None = None,
) -> Iterator[Finding]:
    """VK301 / VK302 / VK305 for ``rel``'s links; resolved targets are added to ``edges``.

    ``anchors`` (when VK305 runs) checks ``#Heading`` and ``#^block`` in the target note.
    """
    for link in links:
        targets = resolver.resolve(link.target, rel).targets
        if len(targets) == 1:
            edges.add(targets[0])
            why = anchors.missing(targets[0], link.subpath) if anchors is not None else None
            if why is not None:
                yield Finding(
                    rel,
                    link.line,
                    link.col,
                    "VK305",
                    f"broken link {link.raw}: {targets[0]} has {why}",
                )
        elif not targets:
            if enabled("VK301"):
                yield Finding(
                    rel,
                    link.line,
                    link.col,
                    "VK301",
                    f"broken link {link.raw}: no file named {link.target!r} in the vault",
                )
        elif enabled("VK302"):
            shown = ", ".join(targets[:3]) + (", ..." if len(targets) > 3 else "")
            yield Finding(
                rel,
                link.line,
                link.col,
                "VK302",
                f"ambiguous link {link.raw}: {len(targets)} files match ({shown});"
                " write more of the path",
            )


def reachable(start: str, edges: Mapping[str, set[str]]) -> set[str]:
    seen = {start}
    queue = deque([start])
    while queue:
        for target in edges.get(queue.popleft(), ()):
            if target not in seen:
                seen.add(target)
                queue.append(target)
    return seen


def check_orphans(entries: Iterable[str], edges: Mapping[str, set[str]]) -> Iterator[Finding]:
    """VK303: entries the index does not reach, directly or through other notes."""
    seen = reachable(config.INDEX_FILE, edges)
    for rel in entries:
        if rel not in seen:
            yield Finding(
                rel,
                1,
                1,
                "VK303",
                f"orphan: not reachable from {config.INDEX_FILE} by links"
                " (run `vaultkeeper index`)",
            )


def check_budget(text: str) -> Iterator[Finding]:
    """VK304: the file an agent loads first must fit the agent's load budget."""
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    size = len(text.encode("utf-8"))
    if lines > config.INDEX_MAX_LINES:
        yield Finding(
            config.INDEX_FILE,
            config.INDEX_MAX_LINES + 1,
            1,
            "VK304",
            f"{lines} lines, over the load budget of {config.INDEX_MAX_LINES}: agents stop reading"
            " here (`vaultkeeper index` splits it into sub-indexes)",
        )
    if size > config.INDEX_MAX_BYTES:
        yield Finding(
            config.INDEX_FILE,
            1,
            1,
            "VK304",
            f"{size} bytes, over the load budget of {config.INDEX_MAX_BYTES}"
            " (`vaultkeeper index` splits it into sub-indexes)",
        )
