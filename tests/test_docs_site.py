"""The docs: README.md fits a screen or few, the site builds with `mkdocs build --strict`
(a broken link or anchor fails), and docs/vault-spec.md is the spec `init` writes.

`python tests/test_docs_site.py --write` regenerates docs/vault-spec.md.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
SPEC_PAGE = REPO / "docs" / "vault-spec.md"
README_MAX_LINES = 250

SPEC_HEADER = """\
# The vault spec

"The spec" is the self-maintenance spec vaultkeeper implements: the vault's layout, the
frontmatter schema, the labels, the registry's counters, the scanner's three lists
(promote, prune, held-out), the lifecycle and the pure-ASCII format rules. `vaultkeeper
init` writes it into every vault as `references/vault-spec.md`, filled from vaultkeeper's
configuration ([Configuration](configuration.md)), so it always agrees with what the tool
does. `vaultkeeper verify` runs its setup checks. Below, the spec as this version writes
it (its frontmatter left out).

"""


def spec_page() -> str:
    from vaultkeeper.store.templates import render

    text = render("vault-spec.md", {})
    body = text.split("\n---\n", 1)[1].lstrip("\n")
    body = body.replace("# Vault spec\n", "## The spec, as written into a vault\n", 1)
    lines = []
    for line in body.split("\n"):  # one level down, under the page's own title
        lines.append("#" + line if line.startswith("## ") and lines else line)
    return SPEC_HEADER + "\n".join(lines)


def test_the_readme_is_under_250_lines() -> None:
    count = README.read_text(encoding="utf-8").count("\n")
    assert count < README_MAX_LINES, f"README.md has {count} lines; move detail to docs/"


def test_the_vault_spec_page_is_what_init_writes() -> None:
    assert SPEC_PAGE.read_text(encoding="utf-8") == spec_page(), (
        "docs/vault-spec.md is stale: python tests/test_docs_site.py --write"
    )


def test_the_site_builds_with_no_broken_link(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=REPO, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},  # Material's banner, not a finding
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "commands" / "index.html").is_file()


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    SPEC_PAGE.write_text(spec_page(), encoding="utf-8")


def _fences(text: str, after: str) -> list[str]:
    """The fenced blocks of ``text`` after the first line starting with ``after``."""
    import re

    start = next(i for i, line in enumerate(text.split("\n")) if line.startswith(after))
    rest = "\n".join(text.split("\n")[start:])
    return re.findall(r"^```\w*\n(.*?)^```$", rest, re.S | re.M)


def test_the_quick_start_output_is_what_the_scan_prints_on_its_date(tmp_path: Path) -> None:
    import re
    import shutil

    from click.testing import CliRunner

    from vaultkeeper.cli import cli

    readme = README.read_text(encoding="utf-8")
    (date,) = re.findall(r"this is the output on (\d{4}-\d\d-\d\d)", readme)
    command, output = _fences(readme, "## Quick start")[:2]
    assert command.strip().endswith("vaultkeeper --vault sample_vault scan")
    shutil.copytree(REPO / "sample_vault", tmp_path / "sample_vault")
    done = CliRunner().invoke(
        cli, ["--vault", str(tmp_path / "sample_vault"), "scan"], env={"VAULTKEEPER_TODAY": date}
    )
    assert done.exit_code == 0, done.output
    assert done.stdout == output
    # the scanning section's sample is the same run, on the same date (day counts agree)
    commands = (REPO / "docs" / "commands.md").read_text(encoding="utf-8")
    assert f"(on {date}, the quick start's date)" in commands
    assert output in commands


def test_every_relative_link_of_the_readme_leads_to_a_file() -> None:
    import re

    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    assert "docs/index.md" in targets
    missing = [t for t in targets if "://" not in t and not (REPO / t).is_file()]
    assert missing == []
