"""revalidate / reactivate / skip take the name the scan lists, as prune does; never a guess."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from conftest import snapshot

from vaultkeeper.apply.batch import apply_decision
from vaultkeeper.apply.decision import Decision
from vaultkeeper.cli import cli

NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.timezone.utc)
RECEIPT = "projects/p/research/notes.md:2"


def lesson(name: str | None, status: str = "held_out") -> str:
    own = f"name: {name}\n" if name is not None else ""
    return (
        f"---\n{own}description: d\ntype: memory\nstatus: {status}\nlabel: inferred\n"
        'falsification_condition: "it stops holding"\nholdout_until: "2026-11-01"\n'
        "provenance: []\n---\nBody.\n"
    )


def vault_with(make_vault: Any, files: dict[str, str]) -> Path:
    root: Path = make_vault({**files, "projects/p/research/notes.md": "a\nb\nc\n"})
    return root


def test_revalidate_by_its_frontmatter_name(make_vault: Any) -> None:
    vault = vault_with(make_vault, {"projects/p/memory/retry-once.md": lesson("flaky-ci")})
    done = apply_decision(vault, Decision("revalidate", "flaky-ci", RECEIPT, "pass"), NOW)
    assert (done.outcome, done.target) == ("act", "projects/p/memory/retry-once.md")
    assert "status: active\n" in (vault / "projects/p/memory/retry-once.md").read_text()
    record = json.loads((vault / "state/journal.jsonl").read_text().splitlines()[-1])
    assert record["target"] == "projects/p/memory/retry-once.md"  # the journal names the file


def test_reactivate_by_file_name_when_there_is_no_name_key(
    make_vault: Any, runner: CliRunner
) -> None:
    vault = vault_with(make_vault, {"projects/q/memory/old.md": lesson(None, "archived")})
    args = ["--vault", str(vault), "apply", "reactivate", "old", "--evidence", RECEIPT]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        "act: reactivate projects/q/memory/old.md: status archived -> active, "
        "receipt added to provenance\n"
    )


def test_an_ambiguous_name_is_refused_naming_the_paths(make_vault: Any, runner: CliRunner) -> None:
    vault = vault_with(
        make_vault,
        {"projects/a/memory/x.md": lesson("dup"), "projects/b/memory/y.md": lesson("dup")},
    )
    before = snapshot(vault)
    args = ["--vault", str(vault), "apply", "revalidate", "dup", "--pass", "--evidence", RECEIPT]
    result = runner.invoke(cli, args)
    assert result.exit_code == 1
    assert result.stderr == (
        "vaultkeeper: error: revalidate dup: dup: 2 entries have this name "
        "(projects/a/memory/x.md, projects/b/memory/y.md); give a path "
        "(deferred; nothing changed)\n"
    )
    assert snapshot(vault) == before


def test_an_unknown_name_says_so(make_vault: Any) -> None:
    vault = vault_with(make_vault, {"projects/p/memory/m.md": lesson("m")})
    done = apply_decision(vault, Decision("revalidate", "nobody", RECEIPT, "pass"), NOW)
    assert (done.outcome, done.reason) == (
        "defer", "nobody: no entry has this name, and no such file",
    )  # fmt: skip


def test_a_plain_note_or_a_registry_block_is_not_an_entry_name(make_vault: Any) -> None:
    vault = vault_with(
        make_vault,
        {
            "projects/p/memory/m.md": lesson("m"),
            "projects/p/m.md": "no frontmatter, same file name\n",
        },
    )
    done = apply_decision(vault, Decision("revalidate", "m", RECEIPT, "pass"), NOW)
    assert (done.outcome, done.target) == ("act", "projects/p/memory/m.md")


def test_skip_takes_a_held_out_entry_by_name(make_vault: Any) -> None:
    vault = vault_with(make_vault, {"projects/p/memory/m.md": lesson("lesson-m")})
    done = apply_decision(vault, Decision("skip", "lesson-m", reason="waiting on CI"), NOW)
    assert (done.outcome, done.target) == ("silence", "projects/p/memory/m.md")
