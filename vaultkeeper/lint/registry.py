"""VK4xx: registry blocks whose counters the scanner can trust, one block per name."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from vaultkeeper.index.headings import heading_key
from vaultkeeper.lint.codes import Finding
from vaultkeeper.registry.blocks import RegistryBlock, name_key


def check_registry(
    blocks: Iterable[RegistryBlock], enabled: Callable[[str], bool]
) -> Iterator[Finding]:
    first: dict[str, RegistryBlock] = {}
    targets: dict[tuple[str, str], RegistryBlock] = {}  # (file, link target) -> first block
    for block in blocks:
        if enabled("VK401"):
            for problem in block.problems():
                yield Finding(block.rel, problem.line or block.line, 1, "VK401", problem.reason)
        key = name_key(block.name)
        target = targets.setdefault((block.rel, heading_key(block.name)), block)
        if target is not block and name_key(target.name) != key and enabled("VK402"):
            why = f"### {block.name}: links to it and to ### {target.name} (line {target.line}) "
            why += f"are one link target ({block.rel[:-3]}#{heading_key(block.name)}); rename one"
            yield Finding(block.rel, block.line, 1, "VK402", why)
        if key not in first:
            first[key] = block
        elif enabled("VK402"):
            at = f"{first[key].rel}:{first[key].line}"
            why = f"### {block.name}: a second block with this name (first at {at}); merge them"
            yield Finding(block.rel, block.line, 1, "VK402", why)
