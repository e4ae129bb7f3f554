"""Finding the vault, walking it, and refusing paths that lead out of it."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import MakeVault, snapshot
from vaultkeeper import config
from vaultkeeper.cli import cli
from vaultkeeper.errors import EXIT_USAGE, NoVaultError, UnsafePathError
from vaultkeeper.store.vault import (
    find_vault,
    iter_files,
    iter_markdown,
    locate,
    rel,
    resolve_inside,
)

REGISTRY = "# R\n\n### alpha\n**success count:** 1\n**last used:** 2026-01-01\n"


@pytest.fixture(autouse=True)
def _no_vault_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(config.ENV_VAULT, raising=False)


def test_explicit_beats_env_beats_discovery(make_vault: MakeVault, tmp_path: Path) -> None:
    a, b, c = make_vault(), make_vault(), make_vault()
    sub = c / "projects"
    assert find_vault(a, {config.ENV_VAULT: str(b)}, sub) == a.resolve()
    assert find_vault(None, {config.ENV_VAULT: str(b)}, sub) == b.resolve()
    assert find_vault(None, {}, sub) == c.resolve()
    assert find_vault(None, {config.ENV_VAULT: ""}, sub) == c.resolve()  # empty: unset
    # relative --vault is taken from the working directory
    assert find_vault(Path(a.name), {}, tmp_path) == a.resolve()


def test_nearest_ancestor_wins(make_vault: MakeVault) -> None:
    outer = make_vault()
    inner = outer / "projects" / "nested"
    inner.mkdir(parents=True)
    (inner / config.INDEX_FILE).write_text("# nested\n")
    deep = inner / "a" / "b"
    deep.mkdir(parents=True)
    assert find_vault(None, {}, deep) == inner.resolve()
    assert find_vault(None, {}, outer / "projects") == outer.resolve()


def test_missing_explicit_path_is_no_vault(tmp_path: Path) -> None:
    with pytest.raises(NoVaultError, match=r"not a directory \(from --vault\)"):
        find_vault(tmp_path / "nope", {}, tmp_path)
    with pytest.raises(NoVaultError, match=rf"from {config.ENV_VAULT}"):
        find_vault(None, {config.ENV_VAULT: str(tmp_path / "nope")}, tmp_path)


def test_locate_finds_what_find_vault_finds(
    make_vault: MakeVault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The throttled scan finds its vault with strings (no pathlib); the same answers."""
    vault = make_vault()
    (vault / "projects" / "deep" / "er").mkdir(parents=True)
    (tmp_path / "link").symlink_to(vault)
    (tmp_path / "index-dir" / config.INDEX_FILE).mkdir(parents=True)  # a folder: no vault
    (tmp_path / "index-dir" / "in").mkdir()
    home = tmp_path / "home"
    (home / "mine").mkdir(parents=True)
    (home / "mine" / config.INDEX_FILE).write_text("# mine\n")
    monkeypatch.setenv("HOME", str(home))
    rel_vault = str(vault.relative_to(tmp_path))
    given_cases = [
        str(vault), rel_vault, rel_vault + "/", "./" + rel_vault, rel_vault + "//projects/..",
        "link", "link/projects/deep/..", "~/mine", "~", "missing", str(tmp_path / "missing"),
    ]  # fmt: skip
    for given in given_cases:
        for explicit, env in ((given, {}), (None, {config.ENV_VAULT: given})):
            try:
                found: str | None = str(find_vault(explicit, env, tmp_path))
            except NoVaultError:
                found = None
            assert locate(explicit, env, str(tmp_path)) == found, (explicit, env)
    for cwd in (
        vault, vault / "projects" / "deep" / "er", tmp_path / "link" / "projects",
        home / "mine", tmp_path / "index-dir" / "in", _outside_any_vault(tmp_path),
    ):  # fmt: skip
        try:
            expected: str | None = str(find_vault(None, {}, cwd))
        except NoVaultError:
            expected = None
        assert locate(None, {}, str(cwd)) == expected, cwd
        assert locate(None, {config.ENV_VAULT: ""}, str(cwd)) == expected  # empty: unset
    assert locate(None, {}, str(vault / "projects" / "deep")) == str(vault.resolve())


def _outside_any_vault(tmp_path: Path) -> Path:
    here = tmp_path / "plain" / "sub"
    here.mkdir(parents=True)
    if any((p / config.INDEX_FILE).exists() for p in (here, *here.parents)):
        pytest.skip("an ancestor of the temp folder holds _index.md")
    return here


def test_no_vault_found_raises_with_how_to_fix(tmp_path: Path) -> None:
    here = _outside_any_vault(tmp_path)
    with pytest.raises(NoVaultError) as info:
        find_vault(None, {}, here)
    message = str(info.value)
    assert "--vault PATH" in message and config.ENV_VAULT in message
    assert "vaultkeeper init" in message
    assert info.value.exit_code == EXIT_USAGE


def test_cli_without_a_vault_exits_2_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(_outside_any_vault(tmp_path))
    for args in (["use", "alpha"], ["new", "pattern", "x", "-d", "y"]):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 2, result.output
        assert result.stdout == ""
        lines = result.stderr.splitlines()
        assert len(lines) == 1
        assert lines[0].startswith("vaultkeeper: error: no vault found from ")
        assert "Traceback" not in result.output
    assert list(tmp_path.rglob("*.md")) == []


def test_cli_finds_the_vault_from_a_subfolder_env_and_option(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = make_vault({"patterns/registry.md": REGISTRY})
    runner = CliRunner()
    monkeypatch.chdir(vault / "projects")
    result = runner.invoke(cli, ["use", "alpha"])
    assert result.exit_code == 0, result.output
    assert "success count 1 -> 2" in result.stdout
    other = make_vault({"patterns/registry.md": REGISTRY})
    result = runner.invoke(cli, ["use", "alpha"], env={config.ENV_VAULT: str(other)})
    assert "success count 1 -> 2" in result.stdout  # env beats the working directory
    result = runner.invoke(cli, ["--vault", str(other), "use", "alpha"])
    assert "success count 2 -> 3" in result.stdout
    result = runner.invoke(cli, ["--vault", str(other / "missing"), "use", "alpha"])
    assert result.exit_code == 2
    assert result.stderr.startswith("vaultkeeper: error: ")
    assert "not a directory (from --vault)" in result.stderr


def test_resolve_inside_accepts_paths_in_the_vault(make_vault: MakeVault) -> None:
    vault = make_vault()
    root = vault.resolve()
    assert resolve_inside(vault, "projects/a/memory/x.md") == root / "projects/a/memory/x.md"
    assert (
        resolve_inside(vault, "projects/../patterns/registry.md") == root / "patterns/registry.md"
    )
    assert resolve_inside(vault, root / "references") == root / "references"
    assert resolve_inside(vault, ".") == root


@pytest.mark.parametrize("target", ["..", "../x.md", "projects/../../x.md", "/etc/passwd", "/"])
def test_resolve_inside_refuses_paths_out(make_vault: MakeVault, target: str) -> None:
    vault = make_vault()
    with pytest.raises(UnsafePathError, match="resolves outside the vault"):
        resolve_inside(vault, target)


def test_resolve_inside_refuses_symlinks_leading_out(make_vault: MakeVault, tmp_path: Path) -> None:
    vault = make_vault()
    outside = tmp_path / "outside"
    outside.mkdir()
    (vault / "projects" / "escape").symlink_to(outside)
    (vault / "projects" / "file-link.md").symlink_to(outside / "target.md")
    (vault / "projects" / "inner-link").symlink_to(vault / "patterns")
    with pytest.raises(UnsafePathError):
        resolve_inside(vault, "projects/escape/memory/x.md")
    with pytest.raises(UnsafePathError):
        resolve_inside(vault, "projects/file-link.md")
    assert resolve_inside(vault, "projects/inner-link/registry.md") == (
        vault.resolve() / "patterns" / "registry.md"
    )
    assert list(outside.iterdir()) == []


def test_walk_is_sorted_and_skips_state_hidden_and_symlinked_folders(
    make_vault: MakeVault, tmp_path: Path
) -> None:
    vault = make_vault(
        {
            "projects/b/memory/z.md": "x",
            "projects/a/memory/y.md": "x",
            "projects/a/memory/pic.png": b"\x89PNG",
            "state/x.md": "x",
            ".obsidian/x.md": "x",
        }
    )
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "o.md").write_text("x")
    (vault / "projects" / "linked").symlink_to(outside)
    md = [rel(vault, p) for p in iter_markdown(vault)]
    assert md == [
        "_index.md",
        "patterns/registry.md",
        "projects/a/memory/y.md",
        "projects/b/memory/z.md",
        "references/vault-spec.md",
    ]
    assert ".gitignore" not in [rel(vault, p) for p in iter_files(vault)]  # hidden file
    assert "projects/a/memory/pic.png" in [rel(vault, p) for p in iter_files(vault)]


BETA = "### beta\nBeta body.\n\n**success count:** 0\n**last used:** 2025-01-01\n"


LINKED_REGISTRY = "# Pattern registry\n\n" + BETA


COMMANDS = [
    ["scan", "--force"],
    ["use", "beta"],
    ["apply", "prune", "beta"],
    ["apply", "skip", "beta", "--reason", "kept for now"],
    ["new", "memory", "lesson", "-p", "p", "-d", "a lesson"],
    ["index"],
]


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    return folder


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_a_state_symlink_out_of_the_vault_is_refused(
    make_vault: MakeVault, outside: Path, args: list[str]
) -> None:
    vault = make_vault({"patterns/registry.md": LINKED_REGISTRY})
    (vault / "state").rmdir()
    (vault / "state").symlink_to(outside)
    before = snapshot(vault)
    result = CliRunner().invoke(cli, ["--vault", str(vault), *args])
    assert result.exit_code == 1, result.output
    [line] = result.stderr.splitlines()
    assert line.startswith(f"vaultkeeper: error: state/: a symlink to {outside.resolve()}")
    assert "outside the vault" in line and "refused" in line
    assert list(outside.iterdir()) == []
    assert snapshot(vault) == before


def test_a_state_symlink_inside_the_vault_is_followed(make_vault: MakeVault) -> None:
    vault = make_vault({"patterns/registry.md": LINKED_REGISTRY})
    (vault / "state").rmdir()
    (vault / ".state-real").mkdir()
    (vault / "state").symlink_to(vault / ".state-real")
    result = CliRunner().invoke(cli, ["--vault", str(vault), "scan", "--force"])
    assert result.exit_code == 0, result.output
    assert (vault / ".state-real/vaultkeeper.db").is_file()
    assert (vault / ".state-real/self-maintain.json").is_file()
