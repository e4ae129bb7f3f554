"""The code's shape: no import circle among vaultkeeper's modules, the CLI one group a module."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
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


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """import-linter's contracts (pyproject.toml) run over the package found under ``root``."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    script = "import sys; from importlinter.cli import lint_imports_command; lint_imports_command()"
    return subprocess.run(
        [sys.executable, "-c", script, "--no-cache"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_layering_contracts_hold() -> None:
    done = _lint_imports(PACKAGE.parent)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_an_upward_import_breaks_the_layering(tmp_path: Path) -> None:
    """The contract is not vacuous: store importing the command line is caught by name."""
    shutil.copytree(PACKAGE, tmp_path / "vaultkeeper", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(PACKAGE.parent / "pyproject.toml", tmp_path / "pyproject.toml")
    vault_py = tmp_path / "vaultkeeper" / "store" / "vault.py"
    vault_py.write_text(
        vault_py.read_text(encoding="utf-8") + "\nfrom vaultkeeper.commands import base  # up\n",
        encoding="utf-8",
    )
    done = _lint_imports(tmp_path)
    assert done.returncode != 0
    assert "Layers only look down BROKEN" in done.stdout
    assert "vaultkeeper.store.vault -> vaultkeeper.commands.base" in done.stdout


def test_no_package_reaches_into_another_packages_private_names() -> None:
    """``from vaultkeeper.a.b import _x`` (or a module ``_b``) only from inside package a."""
    reached = []
    for path in PACKAGE.rglob("*.py"):
        me = _module(path).split(".")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ImportFrom) and node.module and node.level == 0):
                continue
            parts = node.module.split(".")
            if parts[0] != "vaultkeeper" or parts[:2] == me[:2]:
                continue
            names = [a.name for a in node.names]
            if any(p.startswith("_") for p in parts[1:]) or any(
                n.startswith("_") and not n.startswith("__") for n in names
            ):
                reached.append(f"{_module(path)}: from {node.module} import {', '.join(names)}")
    assert not reached, reached


def test_the_architecture_page_matches_the_code() -> None:
    """docs/architecture.md names only files that exist, and every package."""
    page = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    named = set(re.findall(r"vaultkeeper/[\w/]+\.py", page))
    assert named, "the page names no file"
    missing = sorted(p for p in named if not (PACKAGE.parent / p).is_file())
    assert not missing, missing
    packages = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())
    diagram = page.split("```mermaid", 1)[1].split("```", 1)[0]
    assert [p for p in packages if f" {p} " not in diagram and f"> {p}\n" not in diagram] == []
    assert [p for p in packages if f"`{p}/`" not in page] == []


# Test files that exercise no one module, each for its reason. A file named after a
# repository folder (test_bench*.py for bench/, test_docs_site.py for docs/,
# test_sample_vault.py for sample_vault/) needs no entry here.
CROSS_CUTTING = {
    "test_layout.py": "the code's shape: every package at once",
    "test_dependencies.py": "pyproject's declared dependencies against every import",
    "test_install_wheel.py": "the built wheel, installed in a fresh venv",
    "test_corpus.py": "lint and index on a third-party vault, end to end",
    "test_git_sync.py": "two clones synced through git, end to end",
    "test_two_machines.py": "two clones of one vault: each conflict git stopped on (issue 33)",
    "test_two_machines_days.py": "two clones, 60 simulated days of work on both, synced by git",
    "test_served.py": "the promise that what is served is masked, on every serving path",
    "test_served_agent.py": "the same promise for what an agent is served (MCP, brief, index)",
    "test_private_names.py": "no module uses a private name of CPython or a dependency",
    "test_module_mentions.py": "every module the docs, docstrings and comments name exists",
    "test_standins.py": "stand-ins only on the throttled no-op and the recall hook",
}


def _stray(files: list[str]) -> list[str]:
    """The test file names among ``files`` that name no package, root module or folder."""
    root = PACKAGE.parent
    names = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    names |= {p.stem for p in PACKAGE.glob("*.py") if not p.stem.startswith("__")}
    names |= {p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")}
    names -= {"tests"}
    return [
        name
        for name in files
        if name not in CROSS_CUTTING
        and not any(name[5:-3] == n or name[5:-3].startswith(f"{n}_") for n in names)
    ]


def test_every_test_file_is_named_after_what_it_exercises() -> None:
    """tests/test_<package or root module>[_<module>].py, a repository folder's, or listed."""
    tests = PACKAGE.parent / "tests"
    assert _stray(sorted(p.name for p in tests.glob("test_*.py"))) == []
    missing = sorted(n for n in CROSS_CUTTING if not (tests / n).is_file())
    assert not missing, missing
    # a name after the history of the work is caught; one after its module is not
    history = ["test_hard_scan.py", "test_review_findings2.py", "test_ingest_fixes.py"]
    assert _stray([*history, "test_scan_cache.py", "test_cli_edges.py"]) == history
