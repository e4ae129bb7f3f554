"""One command parses each registry file once, yet never serves a file's old text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import CliRunner

from vaultkeeper.cli import cli
from vaultkeeper.registry import memo
from vaultkeeper.registry.blocks import load_heads
from vaultkeeper.registry.find import find_block

ONE = "### alpha\nAlpha.\n\n**success count:** 1\n**last used:** 2026-01-01\n"


def test_a_file_edited_between_two_reads_is_read_again(make_vault: Any) -> None:
    vault: Path = make_vault({"patterns/registry.md": ONE})
    with memo.reading():
        first, _ = load_heads(vault)
        again, _ = load_heads(vault)
        assert again[0] is first[0]  # the same text: parsed once
        (vault / "patterns/registry.md").write_text(ONE.replace("** 1", "** 7"))
        edited, _ = load_heads(vault)
        assert [h.count for h in edited] == [7]
    outside, _ = load_heads(vault)  # nothing kept after the command
    assert outside[0] is not edited[0]


def test_a_name_only_mentioned_elsewhere_is_no_block(make_vault: Any) -> None:
    vault: Path = make_vault(
        {
            "patterns/registry.md": ONE,
            "patterns/other.md": "# Other\n\nSee [[alpha]]; `### alpha` in prose.\n\n"
            "```\n### alpha\n```\n",
        }
    )
    assert find_block(vault, "alpha").rel == "patterns/registry.md"


def test_use_counts_and_refuses_as_before(make_vault: Any, runner: CliRunner) -> None:
    vault: Path = make_vault(
        {"patterns/registry.md": ONE, "patterns/two.md": ONE.replace("alpha", "Alpha")}
    )
    done = runner.invoke(cli, ["--vault", str(vault), "use", "alpha"])
    assert done.exit_code == 0, done.output
    assert "**success count:** 2\n" in (vault / "patterns/registry.md").read_text()
    missing = runner.invoke(cli, ["--vault", str(vault), "use", "ALPHA"])
    assert missing.exit_code != 0
    assert "did you mean 'alpha' at patterns/registry.md:1?" in missing.output
