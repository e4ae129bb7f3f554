"""store.walk: nothing outside the vault is read, through any symlink, by any command.

The attacker's vault (``_attacked``) is the sample vault with, committed inside it: a
memory note symlinked out, a registry file symlinked out, a project folder symlinked
out, a chain of two links ending out, and a link to a passwd-like file holding a token.
Every text vaultkeeper writes or serves is checked for the outside files' marks.
"""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner

from tests.mcp_harness import call, connect
from vaultkeeper.cli import cli
from vaultkeeper.mcp.tools import VaultTools
from vaultkeeper.store.vault import walk_files
from vaultkeeper.store.walk import memory_files

TODAY = "2026-12-01"
TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
MARKS = ("LEAKNOTE", "LEAKREG", "LEAKFOLDER", "LEAKPASSWD", TOKEN, "outside-secret", "leaked-block")
LINKS = (
    "patterns/extra.md",
    "projects/api/memory/chain1.md",
    "projects/api/memory/chain2.md",
    "projects/api/memory/linked-out.md",
    "projects/api/memory/passwd.md",
    "projects/evil",
)
NOTE = """---
name: outside-secret
description: flaky ci retries LEAKNOTE {token}
type: memory
label: discovery
status: held_out
holdout_until: "2026-01-01"
falsification_condition: never
---
Retry flaky ci once LEAKNOTE {token}
"""
REGISTRY = """# extra

### leaked-block
Retry flaky ci LEAKREG {token}

**success count:** 9
**last used:** 2026-11-12
"""


def _attacked(sample: Path, tmp_path: Path) -> Path:
    out = tmp_path / "outside"
    (out / "proj/memory").mkdir(parents=True)
    (out / "etc").mkdir()
    (out / "secret-note.md").write_text(NOTE.format(token=TOKEN))
    (out / "registry-extra.md").write_text(REGISTRY.format(token=TOKEN))
    (out / "proj/memory/folder-note.md").write_text(
        NOTE.format(token=TOKEN).replace("LEAKNOTE", "LEAKFOLDER")
    )
    (out / "etc/passwd").write_text(f"root:x:0:0:LEAKPASSWD token={TOKEN}:/root:/bin/sh\n")
    memory = sample / "projects/api/memory"
    (memory / "linked-out.md").symlink_to(os.path.relpath(out / "secret-note.md", memory))
    (memory / "passwd.md").symlink_to(out / "etc/passwd")
    (memory / "chain2.md").symlink_to(out / "secret-note.md")
    (memory / "chain1.md").symlink_to("chain2.md")  # inside, then out
    (sample / "patterns/extra.md").symlink_to(out / "registry-extra.md")
    (sample / "projects/evil").symlink_to(out / "proj")
    (memory / "inside-link.md").symlink_to("flaky-ci-retries.md")  # stays inside: kept
    return sample


def _vk(vault: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(
        cli, ["--vault", str(vault), *args], env={"VAULTKEEPER_TODAY": TODAY}
    )
    assert "Traceback" not in result.output
    return result.exit_code, result.stdout, result.stderr


def _clean(text: str) -> None:
    for mark in MARKS:
        assert mark not in text, mark


def test_the_walk_leaves_out_every_symlink_out_and_collects_each_once(
    sample: Path, tmp_path: Path
) -> None:
    vault = _attacked(sample, tmp_path)
    outside: list[str] = []
    got = [p[len(str(vault)) + 1 :] for p in walk_files(vault, outside=outside)]
    assert not set(LINKS) & set(got)
    assert "projects/api/memory/inside-link.md" in got
    assert sorted(p[len(str(vault)) + 1 :] for p in outside) == sorted(LINKS)
    memory: list[str] = []
    listed = list(memory_files(vault, memory))
    assert str(vault / "projects/api/memory/inside-link.md") in listed
    assert sorted(p[len(str(vault)) + 1 :] for p in memory) == sorted(
        x for x in LINKS if x.startswith("projects/")
    )
    # a walk started under a folder that leads out reads nothing there
    assert list(walk_files(vault, vault / "projects/evil/memory", outside := [])) == []
    assert outside == [str(vault / "projects/evil/memory")]


def test_index_lists_none_of_them_and_warns_once_each(sample: Path, tmp_path: Path) -> None:
    vault = _attacked(sample, tmp_path)
    code, out, err = _vk(vault, "index")
    assert code == 0
    index = (vault / "_index.md").read_text()
    _clean(index + out)
    for link in LINKS:
        assert f"[[{link.removesuffix('.md')}" not in index
        assert err.count(f"warning: {link}: a symlink to outside the vault; not read") == 1
    assert "[[projects/api/memory/inside-link]]" in index
    code, _, _ = _vk(vault, "index", "--check")
    assert code == 0


def test_scan_report_and_brief_read_none_of_them(sample: Path, tmp_path: Path) -> None:
    vault = _attacked(sample, tmp_path)
    code, out, err = _vk(vault, "scan", "--force")
    assert code == 0, err
    _clean(out + err)
    for link in LINKS:  # the candidates name none of them; the problems name each once
        assert link not in out
        assert err.count(f"{link}: a symlink to outside the vault; not read") == 1
    code, report, report_err = _vk(vault, "report")
    assert code == 0
    _clean(report + report_err)
    code, brief, _ = _vk(vault, "report", "--brief", "--cwd", str(vault / "projects/api"))
    assert code == 0
    _clean(brief)
    for link in LINKS:
        assert link not in brief
    assert "flaky-ci-retries" in brief  # the real lessons are still there
    for name in os.listdir(vault / "state"):
        path = vault / "state" / name
        if path.is_file():
            _clean(path.read_text(errors="replace"))  # the recall hook's table too


def test_lint_says_so_and_reads_none_of_them(sample: Path, tmp_path: Path) -> None:
    vault = _attacked(sample, tmp_path)
    code, out, _ = _vk(vault, "lint")
    assert code == 1
    for link in LINKS:
        assert f"{link}:1:1: VK001 a symlink to outside the vault; not read" in out
    assert "VK502" not in out  # the token outside is never looked at
    assert "outside-secret" not in out


def test_mcp_tools_serve_none_of_them(sample: Path, tmp_path: Path) -> None:
    import datetime as dt

    vault = _attacked(sample, tmp_path)
    assert _vk(vault, "scan", "--force")[0] == 0
    now = dt.datetime(2026, 12, 1, 9, tzinfo=dt.timezone.utc)
    tools = VaultTools(vault, lambda: now, "walk-test")
    for query in ("LEAKNOTE", "LEAKREG", "LEAKFOLDER", "LEAKPASSWD"):
        assert tools.search(query, include_archived=True)["hits"] == [], query
    found = tools.search("flaky retry", include_archived=True)["hits"]
    assert found and all(h["path"] not in LINKS for h in found)
    _clean(repr(found))
    _clean(tools.recall(project="api")["brief"])
    _clean(repr(tools.report()))


@pytest.mark.skipif(os.environ.get("VAULTKEEPER_NO_MCP") == "1", reason="no MCP SDK")
def test_the_mcp_server_serves_none_of_them(sample: Path, tmp_path: Path) -> None:
    vault = _attacked(sample, tmp_path)
    assert _vk(vault, "scan", "--force")[0] == 0

    async def main() -> None:
        async with connect(vault, tmp_path / "home") as s:
            recall = await call(s, "recall", project="api")
            assert "flaky-ci-retries" in recall["brief"]
            _clean(recall["brief"])
            for query in ("LEAKNOTE", "LEAKREG", "LEAKFOLDER", "LEAKPASSWD"):
                assert (await call(s, "search", query=query))["hits"] == [], query
            _clean(repr(await call(s, "report")))
            index = await s.read_resource("vault://index")
            _clean(repr(index))

    anyio.run(main)


def test_nested_vaults_venvs_and_packages_are_not_this_vaults_files(
    sample: Path, tmp_path: Path
) -> None:
    vault = sample
    nested = {
        "projects/api/research/vendor/inner/.obsidian/app.json": "{}",
        "projects/api/research/vendor/inner/Diary.md": "# LEAKNOTE diary\n",
        "projects/api/memory/copy/_index.md": "# another vault\n",
        "projects/api/memory/copy/patterns/registry.md": REGISTRY.format(token=TOKEN),
        "projects/api/memory/copy/projects/x/memory/m.md": NOTE.format(token=TOKEN),
        "projects/web/memory/.venv-like/pyvenv.cfg": "home = /usr\n",
        "projects/web/memory/env/pyvenv.cfg": "home = /usr\n",
        "projects/web/memory/env/lib/site-packages/t/LEAKFOLDER.md": "# LEAKFOLDER\n",
        "references/node_modules/pkg/README.md": "# LEAKREG\n",
        "references/__pycache__/x.md": "# LEAKPASSWD\n",
    }
    for rel, text in nested.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text)
    (vault / "projects/api/research/sub").mkdir()  # a plain subfolder: walked as before
    (vault / "projects/api/research/sub/_index.md").write_text("# a folder's own map\n")
    got = [p[len(str(vault)) + 1 :] for p in walk_files(vault)]
    assert "projects/api/research/sub/_index.md" in got
    for rel in nested:
        assert rel not in got, rel
    assert not any("copy/" in p for p in memory_files(vault))
    assert _vk(vault, "index")[0] == 0
    _clean((vault / "_index.md").read_text())
    code, out, err = _vk(vault, "scan", "--force")
    assert code == 0
    _clean(out + err)
    _clean(_vk(vault, "lint")[1])


def test_an_obsidian_vaults_own_subfolders_are_walked(tmp_path: Path) -> None:
    vault = tmp_path / "notes"
    for rel in (".obsidian/app.json", "Daily/2026-01-01.md", "Projects/A/plan.md", "top.md"):
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text("x\n")
    got = [p[len(str(vault)) + 1 :] for p in walk_files(vault)]
    assert got == ["top.md", "Daily/2026-01-01.md", "Projects/A/plan.md"]
