"""`new memory --anchor`: digest and commit from the repository, refused before a write."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests import anchors_fixture as fx
from tests.git_helper import isolate_git
from vaultkeeper.anchors import vault as anchors_vault
from vaultkeeper.anchors.format import parse_items
from vaultkeeper.cli import cli
from vaultkeeper.store.model import parse_note


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, list[str]]:
    isolate_git(monkeypatch, tmp_path)
    top = tmp_path / "repo"
    commits = fx.build_repo(top)
    vault = tmp_path / "vault"
    assert CliRunner().invoke(cli, ["init", str(vault)]).exit_code == 0
    return top, vault, commits


def new(vault: Path, *args: str) -> object:
    return CliRunner().invoke(
        cli, ["--vault", str(vault), "new", "memory", "rounding", "-p", "shop", "-d", "d", *args]
    )


def test_new_records_anchors_and_ties_the_project(setup: tuple[Path, Path, list[str]]) -> None:
    top, vault, commits = setup
    done = new(vault, "--repo", str(top), "--anchor", "src/cart.py::round_cart",
               "--anchor", 'src/config.py: CURRENCY = "EUR"')  # fmt: skip
    assert done.exit_code == 0, done.output  # type: ignore[attr-defined]
    path = vault / "projects/shop/memory/rounding.md"
    note = parse_note(path, "x", path.read_text())
    items, problems = parse_items(note.meta["anchors"])
    assert problems == []
    assert [(i.at, i.commit) for i in items] == [
        ("src/cart.py::round_cart", commits[-1]),
        ('src/config.py: CURRENCY = "EUR"', commits[-1]),
    ]
    record = json.loads((vault / "projects/shop/repository.json").read_text())
    assert record["root_commit"] == commits[0]
    machine = json.loads((vault / "state/machine.json").read_text())
    assert machine["repositories"] == {commits[0]: str(top)}
    assert anchors_vault.check_vault(vault, {"version": 2}) == []  # all ok


@pytest.mark.parametrize(
    ("anchor", "says"),
    [
        ("src/cart.py::no_such", "no_such is not defined there"),
        ("src/nope.py", "no readable file src/nope.py"),
        ("../x.py", "relative to the repository"),
    ],
)
def test_a_bad_anchor_is_refused_and_nothing_written(
    setup: tuple[Path, Path, list[str]], anchor: str, says: str
) -> None:
    top, vault, _ = setup
    done = new(vault, "--repo", str(top), "--anchor", anchor)
    assert done.exit_code != 0  # type: ignore[attr-defined]
    assert says in done.output  # type: ignore[attr-defined]
    assert not (vault / "projects/shop").exists()


def test_apply_anchor_adds_only_its_lines_and_is_journaled(
    setup: tuple[Path, Path, list[str]],
) -> None:
    top, vault, commits = setup
    assert new(vault, "--repo", str(top), "--anchor", "src/cart.py").exit_code == 0  # type: ignore[attr-defined]
    path = vault / "projects/shop/memory/rounding.md"
    before = path.read_text().split("\n")
    args = [
        "--vault",
        str(vault),
        "apply",
        "anchor",
        "rounding",
        "--add",
        "src/cart.py::round_cart",
    ]
    done = CliRunner().invoke(cli, args)
    assert done.exit_code == 0, done.output
    after = path.read_text().split("\n")
    added = [line for line in after if line not in before]
    assert added == [
        f'  - {{at: "src/cart.py::round_cart", digest: "{_digest(top)}", commit: "{commits[-1]}"}}'
    ]
    assert len(after) == len(before) + 1
    assert after.index(added[0]) == before.index("anchors:") + 2  # after the existing item
    journal = (vault / "state/journal.jsonl").read_text().splitlines()
    assert json.loads(journal[-1])["action"] == "anchor"
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 0 and path.read_text().split("\n") == after  # already anchored
    bad = CliRunner().invoke(cli, [*args[:-1], "src/cart.py::nope"])
    assert bad.exit_code != 0 and "nope is not defined there" in bad.output
    assert path.read_text().split("\n") == after


def _digest(top: Path) -> str:
    from vaultkeeper.anchors import check
    from vaultkeeper.anchors.format import parse_at

    return str(check.record(str(top), parse_at("src/cart.py::round_cart"))[0])
