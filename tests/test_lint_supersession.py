"""lint VK601-VK603: supersession chains that loop, links to nothing, live links to the old."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import MakeVault
from tests.test_lint import vault_with
from vaultkeeper.lint import lint_vault

M = "projects/p/memory"


def entry(name: str, *, status: str = "active", keys: str = "", body: str = "Body.\n") -> str:
    return (
        f"---\nname: {name}\ndescription: about {name}\ntype: memory\nstatus: {status}\n"
        f"label: fact\n{keys}---\n\n{body}"
    )


def by(target: str) -> str:
    return f'superseded_by: "[[{target}]]"\n'


def found(vault: Path) -> list[tuple[str, int, str, str]]:
    result = lint_vault(vault, select=["VK6", "VK204"])
    return [(f.path, f.line, f.code, f.message) for f in result.findings]


def test_a_clean_supersession_pair_has_no_findings(make_vault: MakeVault) -> None:
    vault = vault_with(
        make_vault,
        {
            f"{M}/old.md": entry("old", status="archived", keys=by(f"{M}/new")),
            f"{M}/new.md": entry("new", keys=f'supersedes: ["[[{M}/old]]"]\n'),
        },
    )
    assert found(vault) == []


def test_a_loop_is_an_error_at_each_entry_in_it(make_vault: MakeVault) -> None:
    vault = vault_with(
        make_vault,
        {
            f"{M}/a.md": entry("a", status="archived", keys=by("b")),
            f"{M}/b.md": entry("b", status="archived", keys=by("a")),
            f"{M}/c.md": entry("c", status="archived", keys=by("a")),  # into the loop, not in it
        },
    )
    assert found(vault) == [
        (f"{M}/a.md", 7, "VK601", f"supersession chain loops: {M}/a.md -> {M}/b.md -> {M}/a.md"),
        (f"{M}/b.md", 7, "VK601", f"supersession chain loops: {M}/b.md -> {M}/a.md -> {M}/b.md"),
    ]


def test_superseded_by_pointing_at_nothing_is_an_error(make_vault: MakeVault) -> None:
    vault = vault_with(make_vault, {f"{M}/a.md": entry("a", status="archived", keys=by("gone"))})
    assert [(p, line, code) for p, line, code, _ in found(vault)] == [(f"{M}/a.md", 7, "VK602")]


def test_a_live_link_to_a_superseded_entry_names_the_newest(make_vault: MakeVault) -> None:
    vault = vault_with(
        make_vault,
        {
            f"{M}/v1.md": entry("v1", status="archived", keys=by("v2")),
            f"{M}/v2.md": entry("v2", status="archived", keys=by("v3")),
            f"{M}/v3.md": entry("v3", keys='supersedes: ["[[v2]]"]\n', body="See [[v1]].\n"),
            f"{M}/reader.md": entry("reader", body="Intro.\n\nAs [[v2]] says.\n"),
            f"{M}/history.md": entry("history", status="archived", body="Was [[v1]].\n"),
        },
    )
    assert found(vault) == [
        (
            f"{M}/reader.md",
            11,
            "VK603",
            f"links to {M}/v2.md, superseded by {M}/v3: link the newer entry",
        ),
        (
            f"{M}/v3.md",
            10,
            "VK603",
            f"links to {M}/v1.md, superseded by {M}/v3: link the newer entry",
        ),
    ]
    assert all(f.severity == "warning" for f in lint_vault(vault, select=["VK603"]).findings)
