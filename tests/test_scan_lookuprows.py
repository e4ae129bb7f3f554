"""The recall table between scans: ``new`` and ``apply`` write rows over it
(vaultkeeper/scan/lookuprows.py, scan/lookupover.py), so the hook serves what the
vault is now, not what the last scan saw."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from click.testing import CliRunner

from tests.conftest import MakeVault
from tests.test_recall_moment import CLAUDE, context, paths_in, recorded, run
from vaultkeeper import config
from vaultkeeper.apply.batch import apply_decision
from vaultkeeper.apply.decision import Decision
from vaultkeeper.cli import cli
from vaultkeeper.index.build import build_index
from vaultkeeper.scan.lookup import build
from vaultkeeper.scan.lookupover import over_path

NOW = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.timezone.utc)
OLD = "projects/web/memory/webpack-build.md"
NEW = "projects/web/memory/vite-build.md"


def note(name: str, description: str) -> str:
    return (
        f"---\nname: {name}\ndescription: {description}\ntype: memory\nstatus: active\n"
        f"label: rule\nprovenance: []\n---\n\n# {name}\n\nBody text.\n"
    )


def served(vault: Path, prompt: str, session: str) -> list[str]:
    payload = recorded(CLAUDE, "02-UserPromptSubmit.json", prompt=prompt, session_id=session)
    code, out, _ = run(vault, payload)
    assert code == 0
    return paths_in(context(out, "UserPromptSubmit")) if out else []


def test_a_superseded_lesson_is_never_served_after_the_apply(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            OLD: note("webpack-build", "bundle the frontend with webpack loaders"),
            NEW: note("vite-build", "bundle the frontend with vite plugins"),
        }
    )
    build_index(vault)
    assert build(vault)
    prompt = "bundle the frontend webpack loaders"
    assert served(vault, prompt, "before") == [OLD, NEW]
    done = apply_decision(
        vault,
        Decision("supersede", OLD, by=NEW, evidence=f"{NEW}:1"),
        NOW,  # type: ignore[arg-type]
    )
    assert done.outcome == "act", done.reason
    assert served(vault, prompt, "after") == [NEW]  # no scan in between
    assert over_path(vault).is_file()
    build(vault)  # the next scan's build holds it: the rows it read are dropped
    assert not over_path(vault).exists()
    assert served(vault, prompt, "after-scan") == [NEW]


def test_a_lesson_written_by_new_is_served_before_any_scan(make_vault: MakeVault) -> None:
    vault = make_vault({OLD: note("webpack-build", "bundle the frontend with webpack")})
    assert build(vault)
    prompt = "the flaky integration job retries"
    assert served(vault, prompt, "s1") == []
    result = CliRunner().invoke(
        cli,
        ["--vault", str(vault), "new", "memory", "flaky-integration-retries", "-p", "web",
         "-d", "Retry the flaky integration job once before digging in"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert served(vault, prompt, "s2") == ["projects/web/memory/flaky-integration-retries.md"]


def test_a_row_older_than_the_table_is_not_used(make_vault: MakeVault) -> None:
    """A lesson edited by hand after an apply: the next build's table wins over the row."""
    vault = make_vault({OLD: note("webpack-build", "bundle the frontend with webpack")})
    build_index(vault)
    assert build(vault)
    done = apply_decision(vault, Decision("supersede", OLD, by=OLD), NOW)  # refused: by itself
    assert done.outcome != "act"
    (vault / OLD).write_text(note("webpack-build", "bundle the frontend with rollup"))
    from vaultkeeper.scan.lookuprows import refresh

    refresh(vault, [OLD])  # a row as an apply would write it
    (vault / OLD).write_text(note("webpack-build", "bundle the frontend with webpack now"))
    state = vault / config.STATE_DIR
    build(vault)
    assert not over_path(vault).exists() and (state / config.RECALL_LOOKUP_FILE).is_file()
    assert served(vault, "bundle frontend webpack", "s") == [OLD]
