"""The code's shape: no import circle among vaultkeeper's modules, the CLI one group a module."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "vaultkeeper"


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, known: set[str]) -> set[str]:
    """Every vaultkeeper module ``path`` imports, at the top or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        found.update(name for name in names if name in known)
    return found


def test_no_import_circle() -> None:
    files = {_module(p): p for p in PACKAGE.rglob("*.py")}
    known = set(files)
    graph = {name: _imports(path, known) - {name} for name, path in files.items()}
    # a package's __init__ importing its own submodules is not a circle that matters
    for name in graph:
        graph[name] = {m for m in graph[name] if not name.startswith(f"{m}.")}
    done: set[str] = set()

    def visit(name: str, trail: list[str]) -> None:
        if name in trail:
            raise AssertionError(" -> ".join([*trail[trail.index(name) :], name]))
        if name in done:
            return
        for target in sorted(graph[name]):
            visit(target, [*trail, name])
        done.add(name)

    for name in sorted(graph):
        visit(name, [])


def test_the_command_line_is_small_modules() -> None:
    sizes = {p.name: len(p.read_text().splitlines()) for p in (PACKAGE / "commands").glob("*.py")}
    sizes["cli.py"] = len((PACKAGE / "cli.py").read_text().splitlines())
    assert max(sizes.values()) <= 300, sizes


# Still over the limit, each being changed by someone else as this was written; take a
# name off once its module is split. Anything not listed stays at or under the limit.
OVERSIZED: set[str] = set()


def test_no_module_is_over_the_limit() -> None:
    sizes = {
        p.relative_to(PACKAGE).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
        for p in PACKAGE.rglob("*.py")
    }
    over = {name: n for name, n in sizes.items() if n > 300 and name not in OVERSIZED}
    assert not over, over
