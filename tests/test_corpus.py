"""lint and index on a real third-party vault: kepano-obsidian (see shared/corpora/README.md).

What Obsidian itself shows there is the reference: links in properties count,
``[[Board games]]`` is ``Categories/Board games.md``, and a link to a note that does not
exist yet is unresolved -- and only those.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import CORPORA, snapshot
from vaultkeeper.cli import cli
from vaultkeeper.index.build import build_index
from vaultkeeper.lint import lint_vault
from vaultkeeper.store.links import Resolver, extract_links
from vaultkeeper.store.model import read_note

KEPANO = CORPORA / "kepano-obsidian"

# Every link target in the vault that names no file, checked by hand against the tree
# (`find . -iname 'NAME.*'` finds nothing for each).
EXPECTED_BROKEN = {
    "2022-04", "2023-06", "2023-08", "A company is a superorganism", "Active", "Actors",
    "All input is error", "American", "Apps", "Authors", "Calmness is a superpower", "Cities",
    "Coffee", "Composability", "Conference sessions", "Conferences",
    "Creativity is combinatory uniqueness",
    "Cross the chasm", "Dessert", "Directors", "E. M. Forster", "Emails", "Emergence",
    "Everything is a remix", "Food", "Futurism", "Game studios", "Harrison Ford", "Hosting",
    "Humanism", "Japan", "Job Interviews", "Me", "Meditations", "Musicians", "Nectarine",
    "Nintendo", "Nintendo Switch", "Nonfiction", "Open world", "Published", "Quotes",
    "Restaurants", "Ridley Scott", "Show episodes", "Shrines", "UI",
    "Writing is telepathy", "You have no obligation to your former self",
}  # fmt: skip

pytestmark = pytest.mark.corpora  # skipped without it, as conftest.CORPORA_SKIP says


@pytest.fixture
def kepano(tmp_path: Path) -> Path:
    dest = tmp_path / "kepano-obsidian"
    shutil.copytree(KEPANO, dest)
    return dest


def _raw_targets(vault: Path, skip: str = ".obsidian") -> set[str]:
    """Every [[target]] in every .md file outside the top folder ``skip``, by a plain regex
    (the corpus has no code blocks)."""
    out: set[str] = set()
    for path in vault.rglob("*.md"):
        if path.relative_to(vault).parts[0] in (".obsidian", skip):
            continue
        for m in re.finditer(r"\[\[([^\]|#]+)[^\]]*\]\]", path.read_text(encoding="utf-8")):
            out.add(m.group(1).strip())
    return out


def _names_on_disk(vault: Path) -> set[str]:
    names: set[str] = set()
    for _, _, files in os.walk(vault):
        for name in files:
            names.add(name.casefold())
            if name.endswith(".md"):
                names.add(name[:-3].casefold())
    return names


def test_the_expected_set_is_what_the_disk_says(kepano: Path) -> None:
    names = _names_on_disk(kepano)
    targets = _raw_targets(kepano)
    assert targets >= EXPECTED_BROKEN
    assert {t for t in targets if t.casefold() not in names} == EXPECTED_BROKEN


def test_lint_reports_exactly_the_missing_notes_as_warnings(kepano: Path) -> None:
    result = lint_vault(kepano)
    assert not result.ours
    assert {(f.code, f.severity) for f in result.findings} == {("VK301", "warning")}
    broken = {re.search(r"\[\[([^\]|#]+)", f.message).group(1) for f in result.findings}  # type: ignore[union-attr]
    # the templates' placeholders ([[Me]], [[Quotes]], ...) are not checked
    outside_templates = EXPECTED_BROKEN & _raw_targets(kepano, skip="Templates")
    assert broken == outside_templates and "Me" not in broken and "Nonfiction" in broken
    assert not any(f.path.startswith("Templates/") for f in result.findings)
    assert result.files == len([p for p in kepano.rglob("*.md") if ".obsidian" not in p.parts])


def test_lint_exits_0_with_warnings_only(kepano: Path, runner: CliRunner) -> None:
    result = runner.invoke(cli, ["lint", str(kepano)])
    assert result.exit_code == 0, result.output
    last = result.stdout.splitlines()[-1]
    assert re.fullmatch(r"\d+ finding\(s\): 0 error\(s\), \d+ warning\(s\) in \d+ file\(s\)", last)


def test_links_in_properties_resolve(kepano: Path) -> None:
    resolver = Resolver.for_vault(kepano)
    catan = read_note(kepano, kepano / "References" / "Catan.md")
    links = extract_links(catan)
    assert [(lk.target, lk.in_frontmatter) for lk in links] == [("Board games", True)]
    assert resolver.resolve("Board games", catan.rel).resolved == "Categories/Board games.md"
    assert (
        resolver.resolve("Board games.base", catan.rel).resolved
        == "Templates/Bases/Board games.base"
    )
    assert (
        resolver.resolve("out-of-control.jpg", catan.rel).resolved
        == "Attachments/out-of-control.jpg"
    )
    assert resolver.resolve("evergreen", catan.rel).resolved == "Categories/Evergreen.md"


def test_every_rule_runs_without_crashing(kepano: Path, runner: CliRunner) -> None:
    result = runner.invoke(cli, ["lint", "--select", "ALL", "--json", str(kepano)])
    assert result.exit_code == 1
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "VK101" in result.stdout  # emoji and other non-ASCII text, as named


def test_index_then_lint_finds_no_orphans(kepano: Path, runner: CliRunner) -> None:
    before = snapshot(kepano)
    first = runner.invoke(cli, ["--vault", str(kepano), "index"])
    assert first.exit_code == 0, first.output
    after = snapshot(kepano)
    assert {k for k in after if after.get(k) != before.get(k)} == {"_index.md"}
    text = (kepano / "_index.md").read_text(encoding="utf-8")
    assert "## Categories\n- [[Categories/Albums]]\n" in text
    assert "Template" not in text  # 53 templates, none of them an entry
    assert lint_vault(kepano, select=["VK303", "VK304"]).findings == ()
    assert build_index(kepano, check=True).changed == ()
