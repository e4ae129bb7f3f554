"""The report's "anchors" section, and a held-out lesson decided by the anchor check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests import anchors_fixture as fx
from tests.git_helper import git, isolate_git
from vaultkeeper.cli import cli


@pytest.fixture
def shop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, list[str]]:
    isolate_git(monkeypatch, tmp_path)
    monkeypatch.setenv("VAULTKEEPER_TODAY", "2026-02-01")
    monkeypatch.setenv("SELF_MAINTAIN_FORCE", "1")
    top = tmp_path / "repo"
    commits = fx.build_repo(top)
    git(top, "checkout", "-q", commits[0])
    vault = tmp_path / "vault"
    fx.build_vault(vault, top)
    git(top, "checkout", "-q", commits[1])  # old_helper renamed away
    return top, vault, commits


def scan(vault: Path, *extra: str) -> str:
    result = CliRunner().invoke(cli, ["--vault", str(vault), "scan", *extra])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_scan_lists_anchors_and_what_follows(shop: tuple[Path, Path, list[str]]) -> None:
    top, vault, commits = shop
    out = scan(vault).splitlines()
    assert out[0].startswith("SELF-MAINTAIN: prune candidates 0 | promote eligible 0 |")
    lines = [line for line in out if line.startswith("anchors ")]
    since = commits[0][:12]
    assert lines == [
        "anchors   held -- src/cart.py::old_helper is gone -- condition met: vaultkeeper "
        "apply revalidate projects/shop/memory/held.md --fail --evidence "
        "anchor:src/cart.py::old_helper@HEAD -- projects/shop/memory/held.md",
        f"anchors   lesson-01 -- src/cart.py::old_helper is gone since {since} -- re-validate: "
        "vaultkeeper apply revalidate projects/shop/memory/lesson-01.md --reopen --evidence "
        "RECEIPT -- projects/shop/memory/lesson-01.md",
        f"anchors   lesson-03 -- src/cart.py is changed since {since} -- review the lesson "
        "against the code -- projects/shop/memory/lesson-03.md",
    ]
    data = json.loads(scan(vault, "--json"))
    assert [a["name"] for a in data["anchors"]] == ["held", "lesson-01", "lesson-03"]
    saved = CliRunner().invoke(cli, ["--vault", str(vault), "report"])
    assert [x for x in saved.stdout.splitlines() if x.startswith("anchors ")] == lines
    assert not (vault / "projects/shop/memory/held.md").read_text().count("archived")


def test_revalidate_with_the_anchor_check_archives_and_reactivate_undoes(
    shop: tuple[Path, Path, list[str]],
) -> None:
    top, vault, commits = shop
    held = vault / "projects/shop/memory/held.md"
    before = held.read_text()
    base = ["--vault", str(vault), "apply", "revalidate", "held"]
    wrong = CliRunner().invoke(
        cli, [*base, "--pass", "--evidence", "anchor:src/cart.py::old_helper@HEAD"]
    )
    assert wrong.exit_code != 0
    assert "the condition 'gone' is met; the re-check says otherwise" in wrong.output
    other = CliRunner().invoke(
        cli, [*base, "--fail", "--evidence", "anchor:src/cart.py::round_cart@HEAD"]
    )
    assert other.exit_code != 0 and "is not the anchor check" in other.output
    assert held.read_text() == before  # nothing written when refused
    done = CliRunner().invoke(
        cli, [*base, "--fail", "--evidence", "anchor:src/cart.py::old_helper@HEAD"]
    )
    assert done.exit_code == 0, done.output
    assert "status: archived" in held.read_text()
    back = CliRunner().invoke(
        cli,
        [
            "--vault",
            str(vault),
            "apply",
            "reactivate",
            "held",
            "--evidence",
            "https://example.invalid/pr/1",
        ],
    )
    assert back.exit_code == 0, back.output
    assert "status: active" in held.read_text()


def test_a_condition_not_met_refuses_the_fail(shop: tuple[Path, Path, list[str]]) -> None:
    top, vault, commits = shop
    git(top, "checkout", "-q", commits[0])  # the helper is back
    base = ["--vault", str(vault), "apply", "revalidate", "held"]
    refused = CliRunner().invoke(
        cli, [*base, "--fail", "--evidence", "anchor:src/cart.py::old_helper@HEAD"]
    )
    assert refused.exit_code != 0 and "finds src/cart.py::old_helper ok" in refused.output


def test_brief_and_search_mark_a_lesson_whose_anchor_is_gone(
    shop: tuple[Path, Path, list[str]], tmp_path: Path
) -> None:
    top, vault, commits = shop
    scan(vault)
    (tmp_path / "shop").mkdir()
    brief = CliRunner().invoke(
        cli, ["--vault", str(vault), "report", "--brief", "--cwd", str(tmp_path / "shop")]
    )
    assert brief.exit_code == 0, brief.output
    since = commits[0][:12]
    lines = {line.split(":")[0]: line for line in brief.stdout.splitlines() if "lesson-0" in line}
    assert lines["- lesson-01 (may be stale"].startswith(
        f"- lesson-01 (may be stale: src/cart.py::old_helper is gone since {since}): about src/"
    )
    assert "- lesson-02: about src/cart.py" in brief.stdout  # round_cart is still there
    from vaultkeeper.mcp.tools import VaultTools

    tools = VaultTools(vault, lambda: __import__("datetime").datetime.now(), "s")
    hits = {h["name"]: h for h in tools.search("about src/cart.py", limit=50)["hits"]}
    assert hits["lesson-01"]["may_be_stale"] == (
        f"may be stale: src/cart.py::old_helper is gone since {since}"
    )
    assert "may_be_stale" not in hits["lesson-02"]


def test_search_marks_follow_a_hand_edit_since_the_scan(
    shop: tuple[Path, Path, list[str]],
) -> None:
    """The mark comes from the report as the files say now, not from the scan's row: a
    lesson whose gone anchor was taken out by hand since the scan is not marked."""
    top, vault, commits = shop
    scan(vault)
    lesson = vault / "projects/shop/memory/lesson-01.md"
    lesson.write_text(
        "---\nname: lesson-01\ndescription: about src/cart.py\ntype: memory\n"
        "status: active\nlabel: fact\n---\n\nA lesson.\n"
    )
    found = CliRunner().invoke(
        cli, ["--vault", str(vault), "search", "--json", "--limit", "50", "about src/cart.py"]
    )
    assert found.exit_code == 0, found.output
    hits = {h["name"]: h for h in json.loads(found.stdout)["hits"]}
    assert "may_be_stale" not in hits["lesson-01"]
    assert "may_be_stale" not in hits["lesson-02"]
