"""Every module the docs and the code's own comments name exists.

Issue 35 counted 29 docstrings naming 17 modules that no longer existed (flat names from
before the packages, ``reportbrief.py``, ``registrydelta.py``, ``mcp_server.py``, ...): a
reader sent to one finds nothing. This reads README.md, docs/*.md and every module of
vaultkeeper/ (docstrings and comments alike: the whole text) and checks each mention
of a module -- ``vaultkeeper/x/y.py``, ``x/y.py`` for a package x of vaultkeeper,
``vaultkeeper.x.y`` (a module, or a name defined in one), and a bare ``name.py`` (some
file of the repository) -- against the tree.

History keeps its names: a mention stands in a paragraph that says the module is gone
(one containing "removed", "gone" or "merged into"), as docs/benchmarks.md's earlier
measurements do.

Mentions inside vaultkeeper/scan/ are checked too; the ones listed in SCAN_OWNED are
another branch's to fix (firstscan works there) and are listed so the lead sees them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "vaultkeeper"
SUBPACKAGES = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())

FULL_PATH = re.compile(r"(?<![\w/.-])vaultkeeper/[\w/]+\.py\b")
IN_PACKAGE = re.compile(rf"(?<![\w/.-])(?:{'|'.join(SUBPACKAGES)})/\w+\.py\b")
DOTTED = re.compile(r"(?<![\w/.-])vaultkeeper(?:\.\w+)+")
BARE = re.compile(r"(?<![\w/.-])\w+\.py\b")
HISTORY = re.compile(r"\b(?:removed|gone|merged into)\b")

NOT_MODULES = {"vaultkeeper.db"}  # the derived store's file name (config.DB_FILE)
# Mentions in vaultkeeper/scan/ (not this branch's to edit): "state.py" is now
# scan/statefile.py and scan/state.py's successors.
SCAN_OWNED = {
    ("vaultkeeper/scan/classify.py", "state.py"),
    ("vaultkeeper/scan/statefile.py", "state.py"),
}


def _py_names() -> set[str]:
    skip = {".venv", ".git", "node_modules", "site"}
    return {p.name for p in ROOT.rglob("*.py") if not skip & set(p.relative_to(ROOT).parts)}


def _dotted_exists(name: str) -> bool:
    """A module or package, or a name written in the module the longest prefix names."""
    parts = name.split(".")
    at = ROOT
    for i, part in enumerate(parts):
        if (at / part / "__init__.py").is_file():
            at = at / part
            continue
        if (at / f"{part}.py").is_file():
            module = at / f"{part}.py"
            rest = parts[i + 1 :]
            return not rest or rest[0] in module.read_text(encoding="utf-8")
        if i == 0:
            return False
        return part in (at / "__init__.py").read_text(encoding="utf-8")
    return True


def stale_mentions(text: str, py_names: set[str]) -> list[str]:
    """The mentions in ``text`` of modules that do not exist, outside history paragraphs."""
    stale = []
    for paragraph in re.split(r"\n\s*\n", text):
        if HISTORY.search(paragraph):
            continue
        for match in FULL_PATH.finditer(paragraph):
            if not (ROOT / match.group()).is_file():
                stale.append(match.group())
        for match in IN_PACKAGE.finditer(paragraph):
            if not (PACKAGE / match.group()).is_file():
                stale.append(match.group())
        for match in DOTTED.finditer(paragraph):
            if match.group() not in NOT_MODULES and not _dotted_exists(match.group()):
                stale.append(match.group())
        for match in BARE.finditer(paragraph):
            if match.group() not in py_names:
                stale.append(match.group())
    return stale


def _texts() -> list[Path]:
    return [
        ROOT / "README.md",
        *sorted((ROOT / "docs").glob("*.md")),
        *sorted(PACKAGE.rglob("*.py")),
    ]


def test_every_module_named_exists() -> None:
    names = _py_names()
    found = {}
    for path in _texts():
        rel = path.relative_to(ROOT).as_posix()
        stale = [
            m
            for m in stale_mentions(path.read_text(encoding="utf-8"), names)
            if (rel, m) not in SCAN_OWNED
        ]
        if stale:
            found[rel] = stale
    assert found == {}


@pytest.mark.parametrize(
    ("text", "stale"),
    [
        ("the wording is reportbrief.py's", ["reportbrief.py"]),
        ("see vaultkeeper/store/digests.py", ["vaultkeeper/store/digests.py"]),
        ("the table (scan/records.py)", ["scan/records.py"]),
        ("vaultkeeper.recall.fastjson.loads", ["vaultkeeper.recall.fastjson.loads"]),
        ("vaultkeeper.store.fsio.no_such_name", ["vaultkeeper.store.fsio.no_such_name"]),
        ("store/fsio.py, vaultkeeper/store/fsio.py, vaultkeeper.store.fsio.atomic_write", []),
        ("vaultkeeper.__version__ and conftest.py and state/vaultkeeper.db", []),
        ("recall/fastjson.py (removed: it used `_json`)", []),
        ("one paragraph: recall/fastjson.py\n\nanother: removed", ["recall/fastjson.py"]),
    ],
)
def test_the_check_reads_each_form(text: str, stale: list[str]) -> None:
    assert stale_mentions(text, _py_names()) == stale
