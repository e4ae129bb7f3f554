"""VK302 follows Obsidian's rule for a name several files share (issue 36, item 8).

The help vault's shape: ``Obsidian Sync/Security and privacy.md`` and ``Obsidian
Publish/Security and privacy.md``, each linked as ``[[Security and privacy]]`` from notes
of its own folder. Obsidian resolves each link to its own folder's page; lint gave five
VK302 errors there. A note elsewhere linking the bare name is still ambiguous.
"""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from vaultkeeper.cli import cli
from vaultkeeper.lint import lint_vault
from vaultkeeper.store.links import Resolver


def _help_like(root: Path) -> Path:
    (root / ".obsidian").mkdir(parents=True)
    files = {
        "Obsidian Sync/Security and privacy.md": "# Sync security\n",
        "Obsidian Publish/Security and privacy.md": "# Publish security\n",
        "Obsidian Sync/Introduction to Obsidian Sync.md": "- [[Security and privacy]]\n",
        "Obsidian Sync/Headless Sync.md": "Uses the [[Security and privacy|same encryption]].\n",
        "Obsidian Publish/Introduction to Obsidian Publish.md": "- [[Security and privacy]]\n",
        "Elsewhere/Overview.md": "See [[Security and privacy]].\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def test_the_match_in_the_linking_notes_folder_is_the_one_meant(tmp_path: Path) -> None:
    vault = _help_like(tmp_path / "help")
    findings = [f for f in lint_vault(vault, select=["VK3"]).findings if f.code == "VK302"]
    assert [(f.path, f.line) for f in findings] == [("Elsewhere/Overview.md", 1)]
    assert "2 files match" in findings[0].message
    resolver = Resolver.for_vault(vault)
    sync = resolver.resolve("Security and privacy", "Obsidian Sync/Headless Sync.md")
    assert sync.targets == ("Obsidian Sync/Security and privacy.md",)
    publish = resolver.resolve(
        "security and PRIVACY", "Obsidian Publish/Introduction to Obsidian Publish.md"
    )
    assert publish.targets == ("Obsidian Publish/Security and privacy.md",)
    # a path still decides, from anywhere
    assert resolver.resolve(
        "Obsidian Publish/Security and privacy", "Elsewhere/Overview.md"
    ).resolved


def test_lint_reports_one_ambiguous_link_not_four(tmp_path: Path) -> None:
    vault = _help_like(tmp_path / "help")
    result = CliRunner().invoke(cli, ["--vault", str(vault), "lint", "--select", "VK302"])
    lines = [line for line in result.stdout.splitlines() if "VK302" in line]
    assert len(lines) == 1, result.stdout
    assert lines[0].startswith("Elsewhere/Overview.md:1:5: VK302 ambiguous link"), lines
    assert result.exit_code == 1
