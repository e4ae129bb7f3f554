"""The site teaches (issue 36, item 3): a getting-started page whose outputs are what the
commands print, a page per task a person comes with, a home page that links the install
and every page, and code blocks that wrap instead of scrolling sideways.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import REPO, SAMPLE_VAULT

DOCS = REPO / "docs"
TASKS = ("my-agent-forgets.md", "two-machines.md", "obsidian-vault.md", "session-cost.md")


def _console(page: str) -> dict[str, list[str]]:
    """Each ``$ command`` of the page's console blocks and the lines it printed."""
    text = (DOCS / page).read_text(encoding="utf-8")
    shown: dict[str, list[str]] = {}
    for block in re.findall(r"^```console\n(.*?)^```$", text, re.S | re.M):
        command = None
        for line in block.splitlines():
            if line.startswith("$ "):
                command = line[2:].split("  #")[0].strip()
                shown[command] = []
            elif command is not None:
                shown[command].append(line)
    return shown


def test_the_home_page_links_the_install_and_every_page() -> None:
    home = (DOCS / "index.md").read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\(([\w-]+\.md)\)", home))
    pages = {p.name for p in DOCS.glob("*.md")} - {"index.md"}
    assert pages <= linked, sorted(pages - linked)
    assert "[Getting started](getting-started.md)" in home.split("Reference:")[0]
    nav = yaml.safe_load((REPO / "mkdocs.yml").read_text())["nav"]
    in_nav = set(re.findall(r"[\w-]+\.md", str(nav)))
    assert pages | {"index.md"} == in_nav


def test_getting_started_walks_through_install_hosts_and_the_first_hour() -> None:
    shown = _console("getting-started.md")
    wanted = [
        "pipx install .", "vaultkeeper init ~/memory",
        "vaultkeeper --vault ~/memory hooks install claude-code",
        "vaultkeeper --vault ~/memory hooks install codex",
        "vaultkeeper --vault ~/demo report --brief --cwd ~/src/api",
        "vaultkeeper --vault ~/demo scan", "vaultkeeper --vault ~/demo review",
    ]  # fmt: skip
    for command in wanted:
        assert command in shown, command
    assert any(c.startswith("vaultkeeper --vault ~/demo ingest ") for c in shown)
    assert any(c.startswith("vaultkeeper --vault ~/demo apply promote ") for c in shown)
    assert any(c.startswith("vaultkeeper --vault ~/demo restore ") for c in shown)
    for page in TASKS:
        assert (DOCS / page).is_file(), page


def test_the_first_hours_output_is_what_the_commands_print(tmp_path: Path) -> None:
    """The page's scan and promote, run again on a copy of the sample vault on the page's
    date: the same lines (so the page shows real output, and stays true)."""
    shown = _console("getting-started.md")
    demo = tmp_path / "demo"
    shutil.copytree(SAMPLE_VAULT, demo)
    env = {**os.environ, "VAULTKEEPER_TODAY": "2026-12-01", "HOME": str(tmp_path)}

    def run(command: str) -> list[str]:
        args = command.split()[1:]  # without "vaultkeeper"
        args = [str(demo) if a == "~/demo" else a for a in args]
        done = subprocess.run(
            [sys.executable, "-m", "vaultkeeper", *args], capture_output=True, text=True,
            env=env, cwd=tmp_path, timeout=300,
        )  # fmt: skip
        return (done.stderr + done.stdout).splitlines()

    scan = "vaultkeeper --vault ~/demo scan"
    assert run(scan) == shown[scan]
    promote = next(c for c in shown if c.startswith("vaultkeeper --vault ~/demo apply promote "))
    assert run(promote) == shown[promote]


def test_code_blocks_wrap_instead_of_scrolling_sideways() -> None:
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text())
    (sheet,) = config["extra_css"]
    css = (DOCS / sheet).read_text(encoding="utf-8")
    rule = re.search(r"\.md-typeset pre > code \{([^}]*)\}", css)
    assert rule and "white-space: pre-wrap" in rule.group(1)
    assert "overflow-wrap: anywhere" in rule.group(1)  # a long path breaks too
