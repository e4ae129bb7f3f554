"""Nested YAML aliases ("billion laughs") are a problem, never a hang.

Each command runs in a subprocess with a timeout: the document below would expand to
about 9**10 strings (gigabytes), so a regression hangs or runs out of memory there
instead of passing slowly.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import MakeVault, run_vaultkeeper
from vaultkeeper.store.model import ParseError, load_yaml

BOMB_PATH = "projects/p/memory/bomb.md"
REASON = "bad YAML frontmatter: an alias (*name) repeats a list or mapping"


def bomb() -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    keys = "name: *a9\ndescription: *a9\ntype: feedback\nstatus: *a9\nholdout_until: *a9\n"
    return "---\n" + "\n".join(lines) + "\n" + keys + "---\nbody\n"


run = run_vaultkeeper


@pytest.fixture
def vault(make_vault: MakeVault) -> Path:
    return make_vault({BOMB_PATH: bomb()})


def test_the_document_is_small_but_aliased() -> None:
    assert len(bomb()) < 700
    with pytest.raises(ParseError) as err:
        load_yaml(bomb().split("---\n")[1])
    assert err.value.reason.startswith(REASON)
    assert err.value.line == 3  # the first line that uses an alias


def test_recursive_alias_is_refused_and_plain_scalars_are_not() -> None:
    with pytest.raises(ParseError):
        load_yaml("a: &x [1, *x]\n")
    assert load_yaml("a: &x hello\nb: *x\nc: 2 * 3\n") == {"a": "hello", "b": "hello", "c": "2 * 3"}
    assert load_yaml("a: [1, 2]\nb: [1, 2]\n") == {"a": [1, 2], "b": [1, 2]}


def test_lint_reports_the_file(vault: Path) -> None:
    result = run(vault, "lint")
    assert result.returncode == 1, result.stderr
    assert f"{BOMB_PATH}:3:1: VK001 {REASON}" in result.stdout


def test_scan_and_report_carry_the_problem(vault: Path) -> None:
    result = run(vault, "scan", "--force")
    assert result.returncode == 0, result.stderr
    assert f"{BOMB_PATH}:3: {REASON}" in result.stdout + result.stderr


def test_status_fails_on_the_lint_error(vault: Path) -> None:
    result = run(vault, "status")
    assert result.returncode == 1, result.stderr
    row = next(line for line in result.stdout.splitlines() if "lint errors" in line)
    assert row.split()[:4] == ["fail", "lint", "errors", "1"]


def test_index_lists_the_file_and_warns(vault: Path) -> None:
    result = run(vault, "index")
    assert result.returncode == 0, result.stderr
    assert f"warning: {BOMB_PATH}:3: {REASON}" in result.stderr
    assert "[[projects/p/memory/bomb]]" in (vault / "_index.md").read_text()


def test_new_creates_the_entry_and_warns(vault: Path) -> None:
    result = run(vault, "new", "memory", "other", "-p", "p", "-d", "another lesson")
    assert result.returncode == 0, result.stderr
    assert (vault / "projects/p/memory/other.md").is_file()
    assert f"warning: {BOMB_PATH}:3: {REASON}" in result.stderr


def test_revalidate_defers_with_the_reason(vault: Path) -> None:
    before = (vault / BOMB_PATH).read_bytes()
    result = run(
        vault, "apply", "revalidate", BOMB_PATH, "--pass", "--evidence", "https://example.org/x"
    )
    assert result.returncode == 1
    assert f"{BOMB_PATH}:3: {REASON}" in result.stderr
    assert "Traceback" not in result.stderr
    assert (vault / BOMB_PATH).read_bytes() == before
