"""Vaults vaultkeeper did not create: templates folder, soft link findings, relative paths."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import MakeVault, run_bounded
from vaultkeeper.index.build import build_index
from vaultkeeper.lint import lint_vault
from vaultkeeper.store.vault import is_ours, templates_folder

TEMPLATE = '---\ncreated: {{date}}\ncategories:\n  - "[[People]]"\n---\nMet [[{{title}} notes]]\n'
NOTE = '---\ngenre: "[[Nonfiction]]"\n---\nSee [[Later]] and [[Other]].\n'


def test_templates_folder_comes_from_obsidian_settings(make_vault: MakeVault) -> None:
    core = make_vault({".obsidian/templates.json": '{"folder": "Meta/Tpl/"}'}, init=False)
    assert templates_folder(core) == "Meta/Tpl"
    templater = make_vault(
        {".obsidian/plugins/templater-obsidian/data.json": '{"templates_folder": "T"}'},
        init=False,
    )
    assert templates_folder(templater) == "T"
    fallback = make_vault(
        {".obsidian/templates.json": "not json", "templates/a.md": "x"}, init=False
    )
    assert templates_folder(fallback) == "templates"  # any case, at the top
    assert templates_folder(make_vault({"Templates/a.md": "x"})) is None  # ours: no guessing
    assert templates_folder(make_vault({"notes/a.md": "x"}, init=False)) is None


def test_ours_is_the_spec_or_the_registry(make_vault: MakeVault) -> None:
    assert is_ours(make_vault())
    assert not is_ours(make_vault({"_index.md": "# Index\n", "a.md": "x"}, init=False))
    assert is_ours(make_vault({"patterns/p.md": "### p\n"}, init=False))


def _foreign(make_vault: MakeVault, **extra: str) -> Path:
    return make_vault(
        {
            ".obsidian/app.json": "{}",
            "Templates/Person.md": TEMPLATE,
            "Notes/Book.md": NOTE,
            "Notes/Other.md": "```\nno language\n```\n```mermaid\ngraph TD\n```\n",
            **extra,
        },
        init=False,
    )


def test_foreign_vault_link_findings_are_warnings_and_templates_are_skipped(
    make_vault: MakeVault,
) -> None:
    vault = _foreign(make_vault)
    result = lint_vault(vault)
    assert [(f.path, f.line, f.code, f.severity) for f in result.findings] == [
        ("Notes/Book.md", 2, "VK301", "warning"),  # a property link, not written yet
        ("Notes/Book.md", 4, "VK301", "warning"),
    ]
    assert result.errors == 0
    # the spec's format rules run only when selected there
    picked = lint_vault(vault, select=["VK102", "VK104"]).findings
    assert [(f.path, f.line, f.code) for f in picked] == [
        ("Notes/Other.md", 1, "VK102"),
        ("Notes/Other.md", 5, "VK104"),
    ]


def test_our_vault_keeps_errors_but_skips_a_declared_templates_folder(
    make_vault: MakeVault,
) -> None:
    vault = make_vault(
        {
            ".obsidian/templates.json": '{"folder": "Templates"}',
            "Templates/Person.md": TEMPLATE,
            "_index.md": "# Index\n\n- [[references/vault-spec]]\n- [[Notes/Book]]\n",
            "Notes/Book.md": NOTE,
            "Notes/Other.md": "# other\n",
        }
    )
    found = [
        (f.path, f.line, f.code, f.severity) for f in lint_vault(vault, select=["VK3"]).findings
    ]
    assert found == [
        ("Notes/Book.md", 2, "VK301", "error"),
        ("Notes/Book.md", 4, "VK301", "error"),
    ]  # the template is neither checked nor an orphan entry


def test_index_lists_no_template(make_vault: MakeVault) -> None:
    vault = _foreign(make_vault, **{"_index.md": "# Index\n"})
    build_index(vault)
    text = (vault / "_index.md").read_text(encoding="utf-8")
    assert "- [[Notes/Book]]\n" in text and "Templates" not in text
    assert build_index(vault, check=True).changed == ()


# -- relative --vault and PATH together, from the folder the user stands in ------------


def _cli(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k != "VAULTKEEPER_VAULT"}
    home = cwd / "_home"
    clean.update(HOME=str(home), XDG_STATE_HOME=str(home / "state"), **env)
    return subprocess.run(
        [sys.executable, "-m", "vaultkeeper", *args],
        cwd=cwd,
        env=clean,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def stand(make_vault: MakeVault, tmp_path: Path) -> Path:
    """A folder holding vault ``v`` (ours, one broken link in notes/a.md); returns the folder."""
    vault = make_vault({"notes/a.md": "[[b]] [[gone]]\n", "b.md": "# b\n"})
    here = tmp_path / "stand"
    here.mkdir()
    vault.rename(here / "v")
    return here


BROKEN = "notes/a.md:1:7: VK301 broken link [[gone]]: no file named 'gone' in the vault"


@pytest.mark.parametrize(
    ("where", "args", "env"),
    [
        (".", ("--vault", "v", "lint", "--select", "VK301", "v/notes"), {}),
        (".", ("--vault", "v", "lint", "--select", "VK301", "v/notes/a.md"), {}),
        ("v", ("--vault", ".", "lint", "--select", "VK301", "notes/a.md"), {}),
        ("v/notes", ("--vault", "..", "lint", "--select", "VK301", "a.md"), {}),
        (".", ("lint", "--select", "VK301", "v/notes/a.md"), {"VAULTKEEPER_VAULT": "v"}),
        (".", ("lint", "--select", "VK301", "v/notes"), {}),  # found upwards from the PATH
    ],
)
def test_relative_vault_and_paths_are_taken_from_the_current_folder(
    stand: Path, where: str, args: tuple[str, ...], env: dict[str, str]
) -> None:
    done = _cli(stand / where, *args, **env)
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[0] == BROKEN  # [[b]] resolved: the vault is v/
    assert done.stderr == ""


def test_a_path_outside_the_relative_vault_is_refused(stand: Path) -> None:
    (stand / "elsewhere.md").write_text("x\n")
    done = _cli(stand, "--vault", "v", "lint", "elsewhere.md")
    assert done.returncode == 2
    assert done.stderr.strip().endswith(f"elsewhere.md: not inside the vault {stand / 'v'}")
    assert done.stdout == ""


@pytest.mark.parametrize("args", [["status"], ["index", "--check"], ["verify"]])
def test_the_read_only_commands_find_an_obsidian_vault_as_lint_does(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    from click.testing import CliRunner

    from vaultkeeper.cli import cli

    vault = make_vault({".obsidian/app.json": "{}", "notes/a.md": "# A\n"}, init=False)
    monkeypatch.chdir(vault / "notes")
    monkeypatch.delenv("VAULTKEEPER_VAULT", raising=False)
    result = CliRunner().invoke(cli, args)
    assert "no vault found" not in result.stderr and "init" not in result.output
    assert result.exit_code in (0, 1), result.output  # its own verdict, not exit 2
    if args == ["status"]:
        assert f"vault {vault.resolve()} at " in result.stdout


def test_a_memory_vault_command_in_an_obsidian_vault_never_says_init(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from vaultkeeper.cli import cli

    vault = make_vault({".obsidian/app.json": "{}", "notes/a.md": "# A\n"}, init=False)
    monkeypatch.chdir(vault / "notes")
    monkeypatch.delenv("VAULTKEEPER_VAULT", raising=False)
    for given in ([], ["--vault", str(vault)]):
        result = CliRunner().invoke(cli, [*given, "scan"])
        assert result.exit_code == 2
        assert result.stderr == (
            f"vaultkeeper: error: {vault.resolve()}: an Obsidian vault without a memory "
            "vault's layout (no _index.md, projects/ or patterns/); lint, index, status and "
            "verify take it as it is\n"
        )


def test_a_templates_setting_nested_past_jsons_depth_is_as_if_unset(tmp_path: Path) -> None:
    # .obsidian/ syncs with the vault; json.loads raises RecursionError (not ValueError)
    # past its nesting depth, and lint and index on such a vault said "internal error".
    from vaultkeeper import config

    settings = tmp_path / config.OBSIDIAN_DIR
    settings.mkdir()
    deep = '{"folder": ' + "[" * 100_000 + "]" * 100_000 + "}"
    for name, _ in config.OBSIDIAN_TEMPLATE_SETTINGS:
        (settings / name).parent.mkdir(parents=True, exist_ok=True)
        (settings / name).write_text(deep)
    assert templates_folder(tmp_path, ours=True) is None


def test_a_templates_setting_that_is_a_fifo_or_a_device_is_as_if_unset(tmp_path: Path) -> None:
    """.obsidian/ syncs with the vault (a link goes with it): a templates setting that is
    a link to /dev/zero or a FIFO is no setting; lint read the one for ever (memory
    filling to an internal error) and waited on the other."""
    from vaultkeeper import config

    vault = tmp_path / "notes"
    (vault / config.OBSIDIAN_DIR).mkdir(parents=True)
    (vault / "a.md").write_text("# a\n\nSee [[b]].\n")
    (first, _), (second, _) = config.OBSIDIAN_TEMPLATE_SETTINGS
    (vault / config.OBSIDIAN_DIR / first).symlink_to("/dev/zero")
    (vault / config.OBSIDIAN_DIR / second).parent.mkdir(parents=True)
    os.mkfifo(vault / config.OBSIDIAN_DIR / second)

    done = run_bounded(["lint", str(vault)], "lint waited on a FIFO in .obsidian/")
    assert "internal error" not in done.stderr
    assert "a.md:3:5: VK301 broken link [[b]]" in done.stdout
