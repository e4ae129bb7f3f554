"""VK4xx: registry blocks whose counters the scanner can trust, one block per name."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from vaultkeeper.lint.codes import Finding
from vaultkeeper.registry.blocks import RegistryBlock, name_key


def check_registry(
    blocks: Iterable[RegistryBlock], enabled: Callable[[str], bool]
) -> Iterator[Finding]:
    first: dict[str, RegistryBlock] = {}
    for block in blocks:
        if enabled("VK401"):
            for problem in block.problems():
                yield Finding(block.rel, problem.line or block.line, 1, "VK401", problem.reason)
        key = name_key(block.name)
        if key not in first:
            first[key] = block
        elif enabled("VK402"):
            other = first[key]
            yield Finding(
                block.rel,
                block.line,
                1,
                "VK402",
                f"### {block.name}: a second block with this name"
                f" (first at {other.rel}:{other.line}); merge them",
            )
