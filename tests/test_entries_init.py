"""``init`` in a folder that already holds files: refused unless --here says so, and
never an index of another vault, a virtual environment or installed packages."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import SAMPLE_VAULT, run_bounded, snapshot
from vaultkeeper import config
from vaultkeeper.cli import cli


def _clone_like(root: Path) -> Path:
    """A folder as one holding a clone: a README, a sample vault, someone's Obsidian
    vault, a venv with templates in site-packages, node_modules, .git."""
    files = {
        "README.md": "# A project\n\nread me\n",
        "docs/guide.md": "# Guide\n",
        "notes-vault/.obsidian/app.json": "{}",
        "notes-vault/Diary.md": "# private diary\n",
        "venv/pyvenv.cfg": "home = /usr/bin\n",
        "venv/lib/python3.11/site-packages/pkg/templates/page.md": "# template\n",
        "node_modules/left-pad/README.md": "# left-pad\n",
        "src/node_modules/x/readme.md": "# x\n",
        ".git/HEAD": "ref: refs/heads/main\n",
        "tools/__pycache__/m.md": "x\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    shutil.copytree(SAMPLE_VAULT, root / "sample_vault", ignore=shutil.ignore_patterns("state"))
    return root


def _tree(root: Path) -> list[str]:
    return sorted(
        os.path.relpath(os.path.join(d, n), root) for d, ds, fs in os.walk(root) for n in ds + fs
    )


@pytest.mark.parametrize("how", ["here", "path", "vault-option"])
def test_init_refuses_a_folder_holding_files_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    root = _clone_like(tmp_path / "work")
    monkeypatch.chdir(root)
    args = {"here": ["init"], "path": ["init", str(root)], "vault-option": ["--vault", ".", "init"]}
    before, tree = snapshot(root, skip_state=False), _tree(root)
    result = CliRunner().invoke(cli, args[how])
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output
    assert lines[0].startswith(f"vaultkeeper: error: {root if how == 'path' else '.'}")
    assert "holds files and is not a vault; nothing was created" in lines[0]
    assert "init --here" in lines[0]
    assert snapshot(root, skip_state=False) == before and _tree(root) == tree


def test_init_here_indexes_only_this_folders_own_notes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _clone_like(tmp_path / "work")
    monkeypatch.chdir(root)
    result = CliRunner().invoke(cli, ["init", "--here"])
    assert result.exit_code == 0, result.output
    index = (root / config.INDEX_FILE).read_text()
    assert "[[README]]" in index and "[[docs/guide]]" in index
    for other in ("sample_vault", "notes-vault", "Diary", "site-packages", "templates/page",
                  "node_modules", "left-pad", "__pycache__", ".git"):  # fmt: skip
        assert other not in index, other
    check = CliRunner().invoke(cli, ["index", "--check"])
    assert check.exit_code == 0, check.output


def test_init_takes_an_empty_a_hidden_only_or_a_partial_vault_folder(tmp_path: Path) -> None:
    empty, hidden, partial = tmp_path / "empty", tmp_path / "hidden", tmp_path / "partial"
    empty.mkdir()
    (hidden / ".git").mkdir(parents=True)  # `git init` first, then `vaultkeeper init`
    (hidden / ".DS_Store").write_text("x")
    (partial / "patterns").mkdir(parents=True)
    (partial / "notes.md").write_text("# notes\n")
    for folder in (empty, hidden, partial, tmp_path / "new"):
        result = CliRunner().invoke(cli, ["init", str(folder)])
        assert result.exit_code == 0, result.output
        assert (folder / config.INDEX_FILE).is_file()


def test_an_obsidian_vault_is_a_folder_holding_files(tmp_path: Path) -> None:
    vault = tmp_path / "personal"
    (vault / ".obsidian").mkdir(parents=True)
    result = CliRunner().invoke(cli, ["init", str(vault)])
    assert result.exit_code == 2
    assert list(vault.iterdir()) == [vault / ".obsidian"]


def test_init_help_documents_here() -> None:
    result = CliRunner().invoke(cli, ["init", "--help"])
    assert result.exit_code == 0
    assert "--here" in result.stdout and "holds files" in result.stdout


def test_init_here_says_exactly_what_it_will_write_before_it_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An Obsidian vault big enough for sub-indexes: `--dry-run` writes nothing and names
    every file and folder `init --here` then creates, and `init --here` says the same
    list ("will create ...") before its first write (issue 36, item 9)."""
    root = tmp_path / "notes"
    (root / ".obsidian").mkdir(parents=True)
    for t in range(12):
        for i in range(20):
            (root / f"topic{t}").mkdir(exist_ok=True)
            (root / f"topic{t}" / f"note{i}.md").write_text(f"# note {i}\n")
    monkeypatch.chdir(root)
    before = snapshot(root, skip_state=False)
    dry = CliRunner().invoke(cli, ["init", "--here", "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert snapshot(root, skip_state=False) == before  # nothing written
    planned = [line.removeprefix("would create ") for line in dry.stdout.splitlines()[:-1]]
    assert dry.stdout.splitlines()[-1] == f"nothing written; {len(planned)} to create in {root}"
    sub = f"{config.SUBINDEX_DIR}/{config.SUBINDEX_PREFIX}"
    assert sum(p.startswith(sub) for p in planned) == 14  # over budget: topics, patterns, refs
    assert f"{config.SUBINDEX_DIR}/" in planned
    done = CliRunner().invoke(cli, ["init", "--here"])
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    said = [line.removeprefix("will create ") for line in lines if line.startswith("will ")]
    created = [line.removeprefix("created ") for line in lines if line.startswith("created ")]
    assert said == planned and sorted(created) == sorted(planned)
    assert lines.index(f"will create {planned[-1]}") < lines.index(f"created {created[0]}")
    # the root gains the spec's layout and the sub-indexes' one folder, no more
    spec = {"_index.md", "projects", "patterns", "references", "state", ".gitignore"}
    gained = {p.name for p in root.iterdir()} - {".obsidian", *(f"topic{t}" for t in range(12))}
    assert gained == spec | {config.SUBINDEX_DIR}
    assert {p.partition("/")[0] for p in planned} == gained


def test_init_over_a_gitignore_that_is_a_link_to_a_device_never_reads_it(tmp_path: Path) -> None:
    """A cloned repository's .gitignore may be a link to /dev/zero: init keeps it and says
    it does not ignore state/, without reading it for ever (memory filled to an internal
    error)."""
    folder = tmp_path / "clone"
    folder.mkdir()
    (folder / ".gitignore").symlink_to("/dev/zero")

    done = run_bounded(["init", str(folder)], "init read a .gitignore linked to /dev/zero for ever")
    assert done.returncode == 0, done.stderr
    assert "does not ignore state/" in done.stderr
    assert (folder / ".gitignore").is_symlink()
