"""``vaultkeeper search WORDS`` at the terminal: text and --json, --project, --limit, the
same hits as the MCP ``search`` tool, one-line errors."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from click.testing import CliRunner

from tests.conftest import MakeVault
from vaultkeeper.cli import cli
from vaultkeeper.mcp.tools import VaultTools

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def note(name: str, description: str, body: str = "") -> str:
    return (
        f"---\nname: {name}\ndescription: {description}\ntype: memory\nstatus: active\n"
        f"---\n\n# {name}\n\n{body}\n"
    )


def vault_of(make_vault: MakeVault) -> Path:
    return make_vault(
        {
            "projects/api/memory/retries.md": note(
                "flaky-ci-retries", "Retry a flaky CI job once", f"The flaky CI token is {TOKEN}."
            ),
            "projects/web/memory/build.md": note("vite-build", "Bundle with vite", "retry"),
            "projects/api/memory/old.md": note("old-retry", "Retrying forever").replace(
                "status: active", "status: archived"
            ),
        }
    )


def search(vault: Path, *args: str) -> tuple[int, str, str]:
    done = CliRunner().invoke(cli, ["--vault", str(vault), "search", *args])
    return done.exit_code, done.stdout, done.stderr


def test_text_shows_score_path_line_name_and_a_masked_snippet(make_vault: MakeVault) -> None:
    vault = vault_of(make_vault)
    code, out, _ = search(vault, "flaky", "token", "--project", "api")
    assert code == 0
    first, snippet = out.splitlines()[:2]
    assert "projects/api/memory/retries.md:" in first and first.endswith("flaky-ci-retries")
    assert TOKEN not in out and "[redacted: github token]" in snippet


def test_json_project_and_limit_match_the_mcp_tool(make_vault: MakeVault) -> None:
    vault = vault_of(make_vault)
    code, out, _ = search(vault, "--json", "retry")
    assert code == 0
    data = json.loads(out)
    paths = [h["path"] for h in data["hits"]]
    assert data["count"] == len(paths) == 2 and "projects/api/memory/old.md" not in paths
    assert paths[0] == "projects/api/memory/retries.md"  # name and description over body
    assert all(isinstance(h["score"], float) for h in data["hits"])
    tools = VaultTools(vault, lambda: dt.datetime.now(dt.timezone.utc), "s")
    assert tools.search("retry")["hits"] == data["hits"]  # one ranking for both
    code, out, _ = search(vault, "--json", "--project", "web", "retry")
    assert [h["path"] for h in json.loads(out)["hits"]] == ["projects/web/memory/build.md"]
    code, out, _ = search(vault, "--json", "--limit", "1", "retry")
    assert len(json.loads(out)["hits"]) == 1
    code, out, _ = search(vault, "--json", "--archived", "retrying")
    assert "projects/api/memory/old.md" in [h["path"] for h in json.loads(out)["hits"]]


def test_no_hit_exits_1_and_bad_input_is_one_line(make_vault: MakeVault) -> None:
    vault = vault_of(make_vault)
    before = sorted(p.name for p in (vault / "state").iterdir())
    code, out, err = search(vault, "zzqx")
    assert (code, out) == (1, "") and "no entry matches" in err
    code, out, err = search(vault, "--limit", "0", "retry")
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) <= 2
    code, _, err = search(vault)
    assert code == 2 and "WORDS" in err
    code, out, err = search(vault, "***", "NEAR(")  # syntax, not words: nothing matches
    assert (code, out) == (1, "") and "no entry matches" in err
    after = {p.name for p in (vault / "state").iterdir()} - set(before)
    assert after <= {"vaultkeeper.db", "vaultkeeper.db-wal", "vaultkeeper.db-shm"}


def test_help_has_an_example(make_vault: MakeVault) -> None:
    done = CliRunner().invoke(cli, ["search", "--help"])
    assert done.exit_code == 0 and "vaultkeeper search retry flaky ci" in done.stdout
