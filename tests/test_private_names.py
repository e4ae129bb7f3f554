"""No module of vaultkeeper uses a private name of CPython or of a dependency.

A leading underscore is a module's way of saying "not mine to promise": CPython's
``_json`` or ``_thread``, the ``mcp`` SDK's ``_lowlevel_server``, ``yaml``'s or
``sqlite3``'s underscored names may change or vanish in any release, and a program that
leans on them breaks on an upgrade nobody reviewed. This reads every module's syntax
tree (not its text, so a docstring that names one does not count) and lists each
import of such a name and each attribute access ``x._name`` where ``x`` was bound by an
import of something outside vaultkeeper.
"""

from __future__ import annotations

import ast
from pathlib import Path

import vaultkeeper

PACKAGE = Path(vaultkeeper.__file__).resolve().parent

# Underscored names CPython documents as public API (the underscore has another reason).
DOCUMENTED = {
    "os._exit",  # https://docs.python.org/3/library/os.html#os._exit: exit without cleanup
}


def _private(dotted: str) -> bool:
    return any(p.startswith("_") and not p.startswith("__") for p in dotted.split("."))


def private_uses(source: str) -> list[str]:
    """Each use of a private name of another package in ``source``, as "line: name"."""
    tree = ast.parse(source)
    bound: dict[str, str] = {}  # local name -> what it was imported as (outside vaultkeeper)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "vaultkeeper":
                    continue
                if _private(alias.name):
                    found.append((node.lineno, alias.name))
                local = alias.asname or alias.name.split(".")[0]
                bound[local] = alias.name if alias.asname else local
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if node.module.split(".")[0] in ("vaultkeeper", "__future__"):
                continue
            for alias in node.names:
                dotted = f"{node.module}.{alias.name}"
                if _private(dotted):
                    found.append((node.lineno, dotted))
                bound[alias.asname or alias.name] = dotted
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            chain = [node.attr]
            value = node.value
            while isinstance(value, ast.Attribute):
                chain.append(value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id in bound:
                dotted = ".".join([bound[value.id], *reversed(chain)])
                if dotted not in DOCUMENTED:
                    found.append((node.lineno, dotted))
        elif (  # getattr(module, "_name")
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and len(node.args) >= 2
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id in bound
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and _private(node.args[1].value)
        ):
            found.append((node.lineno, f"{bound[node.args[0].id]}.{node.args[1].value}"))
    return [f"{line}: {name}" for line, name in sorted(found)]


def test_no_module_uses_a_private_name_of_another_package() -> None:
    offenders = {
        str(path.relative_to(PACKAGE.parent)): uses
        for path in sorted(PACKAGE.rglob("*.py"))
        if (uses := private_uses(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}


def test_the_check_finds_each_form() -> None:
    """What issue 35 found and the forms around it are caught; public names are not."""
    source = (
        "import _json\n"
        "import _thread as t\n"
        "from mcp.server import _lowlevel_server\n"
        "from json import scanner\n"
        "import yaml, sqlite3, os\n"
        "from mcp.server.lowlevel import Server\n"
        "s = scanner._make_scanner\n"
        "yaml._impl\n"
        "sqlite3.dbapi2._x\n"
        "Server._handlers\n"
        "getattr(os, '_wrap_close')\n"
        "os._exit(0)\n"  # documented: allowed
        "os.path.join, yaml.safe_load, self._own, obj.__dict__\n"
        "from vaultkeeper.store import _mine\n"  # vaultkeeper's own: allowed
    )
    assert private_uses(source) == [
        "1: _json",
        "2: _thread",
        "3: mcp.server._lowlevel_server",
        "7: json.scanner._make_scanner",
        "8: yaml._impl",
        "9: sqlite3.dbapi2._x",
        "10: mcp.server.lowlevel.Server._handlers",
        "11: os._wrap_close",
    ]
