"""hooks install|uninstall|status git (core): our lines in, exactly our lines out."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from conftest import snapshot
from git_helper import git, isolate_git

from vaultkeeper import config
from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.hosts import git as git_install

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
PROGRAM = "/opt/vault keeper/bin/vaultkeeper"  # a blank in the path: the driver quotes it


@pytest.fixture
def repo(make_vault, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    isolate_git(monkeypatch, tmp_path)
    vault = make_vault()
    git(vault, "init", "-q")
    return vault


def config_get(vault: Path, key: str) -> str | None:
    done = git(vault, "config", "--local", "--get", key, check=False)
    return done.stdout.strip() if done.returncode == 0 else None


def test_outside_a_git_work_tree_it_refuses_and_writes_nothing(
    make_vault, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    isolate_git(monkeypatch, tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    vault = make_vault()
    before = snapshot(vault, skip_state=False)
    with pytest.raises(VaultkeeperError, match="not a git work tree") as err:
        git_install.install(vault, PROGRAM)
    assert "\n" not in str(err.value)
    assert snapshot(vault, skip_state=False) == before


def test_uninstall_outside_a_work_tree_is_nothing_to_do_as_for_the_hosts(
    make_vault, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from vaultkeeper.cli import cli

    isolate_git(monkeypatch, tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    vault = make_vault()
    before = snapshot(vault, skip_state=False)
    runner = CliRunner()
    done = runner.invoke(cli, ["--vault", str(vault), "hooks", "uninstall", "git"])
    host = runner.invoke(
        cli, ["hooks", "uninstall", "claude-code", "--settings", str(tmp_path / "none.json")]
    )
    assert (done.exit_code, host.exit_code) == (0, 0), done.output
    assert done.stdout == f"git: {vault} (unchanged)\n  nothing installed (not a git work tree)\n"
    assert snapshot(vault, skip_state=False) == before


@pytest.mark.parametrize("name", [".gitattributes", ".gitignore"])
def test_a_file_linked_out_of_the_vault_is_never_read_or_copied_in(
    repo: Path, tmp_path: Path, name: str
) -> None:
    """A vault's repository may carry its .gitattributes or .gitignore as a link (to a key
    out of the vault, to /dev/zero): install, status and uninstall refuse it in one line,
    read nothing through it and write nothing (install copied what it leads to into the
    vault's file, for the person to commit)."""
    secret = tmp_path / "id_key"
    secret.write_text("PRIVATE KEY\n")
    (repo / name).unlink(missing_ok=True)
    (repo / name).symlink_to(secret)

    def files() -> dict[str, object]:
        return {
            n: os.readlink(p) if p.is_symlink() else p.read_bytes() if p.exists() else None
            for n, p in ((n, repo / n) for n in (".gitattributes", ".gitignore"))
        }

    before = files()
    steps = (
        lambda: git_install.install(repo, PROGRAM),
        lambda: git_install.status(repo),
        lambda: git_install.uninstall(repo),
    )
    for step in steps:
        with pytest.raises(VaultkeeperError, match=f"{name}: ") as err:
            step()
        assert "\n" not in str(err.value) and "PRIVATE" not in str(err.value)
    assert files() == before
    assert secret.read_text() == "PRIVATE KEY\n"
    assert config_get(repo, f"merge.{git_install.DRIVER}.driver") is None


def test_install_adds_the_lines_and_the_driver(repo: Path) -> None:
    change = git_install.install(repo, PROGRAM)
    assert change.changed
    attributes = (repo / ".gitattributes").read_text(encoding="utf-8")
    assert attributes == (
        f"{git_install.BEGIN_CREATED}\n"
        "patterns/**/*.md merge=vaultkeeper\n"
        "/_index.md merge=vaultkeeper\n"
        "/_index/_index-*.md merge=vaultkeeper\n"
        "/_index-*.md merge=vaultkeeper\n"
        "/skills/*/SKILL.md merge=vaultkeeper\n"
        "/projects/**/*.md merge=vaultkeeper\n"
        "state/journal.jsonl merge=union\n"
        "state/queue.jsonl merge=union\n"
        "state/uses.jsonl merge=union\n"
        f"{git_install.END}\n"
    )
    ignore = (repo / ".gitignore").read_text(encoding="utf-8")
    assert ignore.endswith(
        f"/state/\n{git_install.BEGIN}\n!/state/\n/state/*\n!/state/journal.jsonl\n"
        f"!/state/queue.jsonl\n!/state/uses.jsonl\n.*.vk-tmp\n{git_install.END}\n"
    )
    driver = "'/opt/vault keeper/bin/vaultkeeper' merge-driver %O %A %B %P"
    assert config_get(repo, "merge.vaultkeeper.driver") == driver
    # git itself reads the attribute and ignores exactly the per-machine files
    check = git(repo, "check-attr", "merge", "--", "patterns/registry.md", "patterns/a/b.md")
    assert check.stdout.splitlines() == [
        "patterns/registry.md: merge: vaultkeeper",
        "patterns/a/b.md: merge: vaultkeeper",
    ]
    # the index files at the vault's root, not a note of that name in a folder
    names = ("_index.md", "_index/_index-projects.md", "_index-projects.md")
    names += ("projects/_index.md", "_index.txt", "_index/notes.md")
    names += ("skills/pin-clock/SKILL.md", "skills/pin-clock/notes.md")
    check = git(repo, "check-attr", "merge", "--", *names)
    assert check.stdout.splitlines() == [
        "_index.md: merge: vaultkeeper",
        "_index/_index-projects.md: merge: vaultkeeper",
        "_index-projects.md: merge: vaultkeeper",  # where older versions wrote it
        "projects/_index.md: merge: vaultkeeper",  # a note under projects/
        "_index.txt: merge: unspecified",
        "_index/notes.md: merge: unspecified",
        "skills/pin-clock/SKILL.md: merge: vaultkeeper",
        "skills/pin-clock/notes.md: merge: unspecified",
    ]
    # init's `/state/` line stays; the per-machine files stay ignored, the logs travel
    state = repo / "state"
    names = (
        config.STATE_FILE,
        config.JOURNAL_FILE,
        config.USES_LOG_FILE,
        config.QUEUE_FILE,
        config.WRITER_LOCK_FILE,
        config.HOOK_LOG_FILE,
        f"{config.LOCK_DIR}/{config.LOCK_PID_FILE}",
    )
    for name in names:
        (state / name).parent.mkdir(parents=True, exist_ok=True)
        (state / name).write_text("x\n", encoding="utf-8")
    git(repo, "add", "-A")
    added = git(repo, "diff", "--cached", "--name-only", "--", "state").stdout.splitlines()
    assert added == ["state/journal.jsonl", "state/queue.jsonl", "state/uses.jsonl"]


def test_a_second_install_changes_nothing(repo: Path) -> None:
    git_install.install(repo, PROGRAM)
    before = {n: (repo / n).read_bytes() for n in (".gitattributes", ".gitignore", ".git/config")}
    change = git_install.install(repo, PROGRAM)
    assert not change.changed
    assert change.actions == (
        "kept .gitattributes",
        "kept .gitignore",
        "kept hooks/post-merge",
        f"kept merge.vaultkeeper.driver = {git_install.driver_command(PROGRAM)}",
    )
    assert {n: (repo / n).read_bytes() for n in before} == before


def test_a_moved_program_updates_the_driver_only(repo: Path) -> None:
    git_install.install(repo, PROGRAM)
    change = git_install.install(repo, "/usr/bin/vaultkeeper")
    assert change.changed
    assert change.actions[-1] == "set merge.vaultkeeper.driver in the repository's git config"
    assert (
        config_get(repo, "merge.vaultkeeper.driver")
        == "/usr/bin/vaultkeeper merge-driver %O %A %B %P"
    )


@pytest.mark.parametrize(
    "existing",
    [
        b"*.png binary\r\ndocs/*.md   text eol=lf\n",
        b"# no final line break\n*.pdf -diff",
        b"",
    ],
)
def test_uninstall_gives_back_every_other_byte(repo: Path, existing: bytes) -> None:
    for name in (".gitattributes", ".gitignore"):
        (repo / name).write_bytes(existing)
    git(repo, "config", "--local", "core.autocrlf", "false")
    config_before = (repo / ".git" / "config").read_bytes()
    git_install.install(repo, PROGRAM)
    assert (repo / ".gitattributes").read_bytes().startswith(existing)
    git_install.uninstall(repo)
    for name in (".gitattributes", ".gitignore"):
        assert (repo / name).read_bytes() == existing
    assert config_get(repo, "merge.vaultkeeper.driver") is None
    assert (repo / ".git" / "config").read_bytes() == config_before


def test_uninstall_removes_files_install_created(repo: Path) -> None:
    (repo / ".gitignore").unlink()  # init made one
    git_install.install(repo, PROGRAM)
    git_install.uninstall(repo)
    assert not (repo / ".gitattributes").exists() and not (repo / ".gitignore").exists()
    again = git_install.uninstall(repo)
    assert not again.changed and again.actions == ("nothing installed",)


def test_lines_added_after_ours_survive_uninstall(repo: Path) -> None:
    before = (repo / ".gitignore").read_bytes()
    git_install.install(repo, PROGRAM)
    with (repo / ".gitignore").open("a", encoding="utf-8") as fh:
        fh.write("/drafts/\n")
    git_install.uninstall(repo)
    assert (repo / ".gitignore").read_bytes() == before + b"/drafts/\n"


def test_status_says_what_is_installed_and_what_is_tracked_anyway(repo: Path) -> None:
    (repo / "state").mkdir(exist_ok=True)
    (repo / "state" / config.STATE_FILE).write_text("{}\n", encoding="utf-8")
    (repo / "state" / config.JOURNAL_FILE).write_text("", encoding="utf-8")
    git(repo, "add", "-f", "state")
    before = git_install.status(repo)
    assert before.files == ((".gitattributes", "absent"), (".gitignore", "absent"))
    assert before.driver is None
    git_install.install(repo, PROGRAM)
    after = git_install.status(repo)
    assert after.files == ((".gitattributes", "installed"), (".gitignore", "installed"))
    assert after.driver is not None and after.driver.endswith("merge-driver %O %A %B %P")
    assert after.tracked == (f"state/{config.STATE_FILE}",)
    text = (repo / ".gitignore").read_text(encoding="utf-8")
    (repo / ".gitignore").write_text(text.replace(".*.vk-tmp\n", ""), encoding="utf-8")
    assert git_install.status(repo).files[1] == (".gitignore", "outdated")
    assert git_install.install(repo, PROGRAM).actions[1] == "updated .gitignore"


def test_an_install_from_before_index_merging_is_outdated_and_updated(repo: Path) -> None:
    # what install wrote before the index files merged with the driver
    old = (
        f"*.png binary\n{git_install.BEGIN}\npatterns/**/*.md merge=vaultkeeper\n"
        "state/journal.jsonl merge=union\nstate/queue.jsonl merge=union\n"
        f"state/uses.jsonl merge=union\n{git_install.END}\n"
    )
    (repo / ".gitattributes").write_text(old, encoding="utf-8")
    assert git_install.status(repo).files[0] == (".gitattributes", "outdated")
    assert git_install.install(repo, PROGRAM).actions[0] == "updated .gitattributes"
    assert git_install.status(repo).files[0] == (".gitattributes", "installed")
    check = git(repo, "check-attr", "merge", "--", "_index.md").stdout
    assert check == "_index.md: merge: vaultkeeper\n"
    git_install.uninstall(repo)
    assert (repo / ".gitattributes").read_text(encoding="utf-8") == "*.png binary\n"


def test_the_cli_installs_reports_and_uninstalls(repo: Path) -> None:
    from click.testing import CliRunner

    from vaultkeeper.cli import cli

    runner = CliRunner()
    before = {n: (repo / n).read_bytes() for n in (".gitignore", ".git/config")}
    done = runner.invoke(cli, ["--vault", str(repo), "hooks", "install", "git"])
    assert done.exit_code == 0, done.output
    assert done.stdout.splitlines()[:3] == [
        f"git: {repo}",
        "  made .gitattributes with 9 lines",
        "  added 6 lines to .gitignore",
    ]
    shown = runner.invoke(cli, ["--vault", str(repo), "hooks", "status", "git"])
    assert shown.exit_code == 0, shown.output
    assert f"git          {repo / '.gitattributes'}: installed" in shown.stdout
    assert "merge-driver %O %A %B %P" in shown.stdout
    refused = runner.invoke(
        cli, ["--vault", str(repo), "hooks", "install", "git", "--schedule", "1 2 * * *"]
    )
    assert refused.exit_code == 2 and "--schedule and --print are for cron" in refused.stderr
    done = runner.invoke(cli, ["--vault", str(repo), "hooks", "uninstall", "git"])
    assert done.exit_code == 0, done.output
    assert not (repo / ".gitattributes").exists()
    assert {n: (repo / n).read_bytes() for n in before} == before


def test_status_of_every_target_names_a_vault_outside_git(
    make_vault, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from vaultkeeper.cli import cli

    isolate_git(monkeypatch, tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    fake_bin = tmp_path / "bin"  # an empty crontab: the real one is never read
    fake_bin.mkdir()
    (fake_bin / "crontab").write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    (fake_bin / "crontab").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake_bin}{os.pathsep}{os.environ['PATH']}")
    vault = make_vault()
    runner = CliRunner()
    args = ["--vault", str(vault), "hooks", "status"]
    shown = runner.invoke(cli, [*args, "--settings", str(tmp_path / "s.json")])
    assert shown.exit_code == 0, shown.output
    assert f"git          {vault}: not a git work tree" in shown.stdout
    strict = runner.invoke(cli, [*args, "git"])
    assert strict.exit_code == 1
    assert strict.stderr.startswith("vaultkeeper: error: ") and strict.stderr.count("\n") == 1
