"""The README and docs/development.md say how many tests need ../shared/corpora, and the
reason they are skipped without it: both are measured here (issue 36, item 13).

The count is the tests marked ``corpora`` (conftest skips exactly those, with one reason);
a test that reads the corpora unconditionally without the mark is found by reading the
test files, so the figure cannot fall behind a new test.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import CORPORA_SKIP, REPO

_WORDS = {"ten": 10, "twenty": 20}


def _said(text: str) -> int:
    found = re.search(r"(\w+) tests (?:read|run) .{0,160}?shared/corpora", text, re.S)
    assert found, "no count of the tests that need ../shared/corpora"
    word = found.group(1).lower()
    return _WORDS[word] if word in _WORDS else int(word)


def _skipped_without_corpora(tmp_path: Path) -> tuple[int, set[str]]:
    env = {**os.environ, "VAULTKEEPER_TEST_CORPORA": str(tmp_path / "none")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-m", "corpora", "-q", "-rs", "-p", "no:randomly"],
        capture_output=True, text=True, cwd=REPO, env=env, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    skips = re.findall(r"^SKIPPED \[(\d+)\] [^:]+(?::\d+)?: (.*)$", done.stdout, re.M)
    assert skips, done.stdout[-3000:]
    assert " failed" not in done.stdout and " passed" not in done.stdout, done.stdout[-3000:]
    return sum(int(n) for n, _ in skips), {reason for _, reason in skips}


def test_the_documented_count_and_reason_are_what_pytest_skips(tmp_path: Path) -> None:
    skipped, reasons = _skipped_without_corpora(tmp_path)
    assert reasons == {CORPORA_SKIP}
    for page in ("README.md", "docs/development.md"):
        text = (REPO / page).read_text(encoding="utf-8")
        assert _said(text) == skipped, page
        assert CORPORA_SKIP in " ".join(text.split()), page


def _reads_corpora(node: ast.AST, helpers: set[str]) -> bool:
    """Calls corpus() (or a helper that does) or names KEPANO: a test that cannot run
    without the corpora (one that looks only ``if`` they are there does neither)."""
    for n in ast.walk(node):
        called = n.func.id if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) else ""
        if called == "corpus" or called in helpers:
            return True
        if isinstance(n, ast.Name) and n.id == "KEPANO":
            return True
    return False


def test_every_test_that_needs_the_corpora_carries_the_mark() -> None:
    """A test calling corpus() or reading KEPANO, itself or through a helper or fixture of
    its module, is marked."""
    unmarked = []
    for path in sorted((REPO / "tests").glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module_marked = any(
            isinstance(s, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in s.targets)
            and "corpora" in ast.unparse(s.value)
            for s in tree.body
        )
        functions = [f for f in tree.body if isinstance(f, ast.FunctionDef)]
        helpers: set[str] = set()
        for f in functions:  # helpers and fixtures, in the order they are written
            if not f.name.startswith("test_") and _reads_corpora(f, helpers):
                helpers.add(f.name)
        for f in functions:
            if not f.name.startswith("test_"):
                continue
            marked = any("corpora" in ast.unparse(d) for d in f.decorator_list)
            needs = _reads_corpora(f, helpers) or any(a.arg in helpers for a in f.args.args)
            if needs and not (marked or module_marked):
                unmarked.append(f"{path.name}::{f.name}")
    assert unmarked == []
