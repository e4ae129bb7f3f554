"""Runtime dependencies earn their place: each one declared is imported by runtime code,
and runtime code imports nothing undeclared (python-frontmatter is the bench extra's)."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# distribution name -> the module it is imported as
RUNTIME = {"click": "click", "pyyaml": "yaml", "filelock": "filelock", "mistune": "mistune"}
# The mcp extra and its dependencies: imported by the server modules only, never by the
# scanner, the hooks or any other command
MCP_ONLY = {"mcp", "pydantic", "anyio", "typing_extensions"}
MCP_MODULES = {f"vaultkeeper/mcp/{name}.py" for name in ("server", "shapes", "prune")}


def _declared() -> set[str]:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    block = re.search(r"^dependencies = \[(.*?)^\]", text, re.S | re.M)
    assert block is not None
    return {re.split(r"[<>=!~ ]", d)[0].lower() for d in re.findall(r'"([^"]+)"', block.group(1))}


def _imported() -> dict[str, set[str]]:
    """Top-level third-party module -> the runtime files importing it."""
    found: dict[str, set[str]] = {}
    for path in (ROOT / "vaultkeeper").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top != "vaultkeeper" and top not in sys.stdlib_module_names:
                    found.setdefault(top, set()).add(path.relative_to(ROOT).as_posix())
    return found


def test_declared_runtime_dependencies_are_exactly_the_used_ones() -> None:
    assert _declared() == set(RUNTIME)
    imported = _imported()
    assert set(imported) - MCP_ONLY == set(RUNTIME.values())
    for name in MCP_ONLY:
        assert imported.get(name, set()) <= MCP_MODULES, name
    assert "frontmatter" not in imported
    assert imported["mistune"] == {"vaultkeeper/index/headings.py"}


def test_python_frontmatter_is_the_bench_extra() -> None:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^bench = \[.*"python-frontmatter', text, re.M)
    assert "import frontmatter" in (ROOT / "bench" / "measure.py").read_text(encoding="utf-8")
