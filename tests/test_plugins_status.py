"""`hooks status` names a plugin install; `hooks install` never adds a second copy beside it.

The hosts' records are the ones the real hosts wrote in the recording
(tests/fixtures/hosts/plugins/*/plugin/: Claude Code's installed_plugins.json and
settings.json, Codex's config.toml with the hashes its /hooks review wrote), laid into a
temporary HOME with the repository's plugins as the installed copies.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import MakeVault, run_bounded
from vaultkeeper.cli import cli
from vaultkeeper.hosts import codex_trust

REPO = Path(__file__).resolve().parent.parent
RECORDED = REPO / "tests" / "fixtures" / "hosts" / "plugins"
CLAUDE = next(RECORDED.glob("claude-code-*")) / "plugin"
CODEX = next(RECORDED.glob("codex-*")) / "plugin"
NAMES = ("vaultkeeper", "vaultkeeper-recall")


def placed(src: Path, dest: Path, home: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    text = src.read_text(encoding="utf-8").replace("/HOME", str(home)).replace("/REPO", str(REPO))
    dest.write_text(text, encoding="utf-8")


def claude_home(home: Path, names: tuple[str, ...] = NAMES, enabled: bool = True) -> Path:
    """Claude Code's records of the recorded install, the plugins copied where it put them."""
    placed(CLAUDE / "claude" / "installed_plugins.json",
           home / ".claude" / "plugins" / "installed_plugins.json", home)  # fmt: skip
    placed(CLAUDE / "claude" / "settings.json", home / ".claude" / "settings.json", home)
    record = json.loads((home / ".claude/plugins/installed_plugins.json").read_text())
    record["plugins"] = {k: v for k, v in record["plugins"].items() if k.split("@")[0] in names}
    (home / ".claude/plugins/installed_plugins.json").write_text(json.dumps(record))
    settings = json.loads((home / ".claude/settings.json").read_text())
    settings["enabledPlugins"] = {k: enabled for k in record["plugins"]}
    (home / ".claude/settings.json").write_text(json.dumps(settings))
    for name in names:
        dest = home / ".claude/plugins/cache/vaultkeeper" / name / "0.1.0"
        shutil.copytree(REPO / "plugins" / name, dest)
    return home / "vault"


def codex_home(home: Path, config_name: str = "config.toml") -> None:
    placed(CODEX / "codex" / config_name, home / ".codex" / "config.toml", home)
    for name in NAMES:
        dest = home / ".codex/plugins/cache/vaultkeeper" / name / "0.1.0"
        shutil.copytree(REPO / "plugins" / name, dest)


def invoke(home: Path, *args: str | Path) -> Any:
    env = {"HOME": str(home), "VAULTKEEPER_VAULT": None, "PATH": "/usr/bin:/bin"}
    return CliRunner().invoke(cli, [str(a) for a in args], env=env)


def test_status_names_the_claude_plugin_install(tmp_path: Path) -> None:
    claude_home(tmp_path)
    r = invoke(tmp_path, "hooks", "status", "claude-code")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    cache = tmp_path / ".claude/plugins/cache/vaultkeeper"
    assert (
        f"claude-code  plugin vaultkeeper@vaultkeeper (enabled, user scope, version 0.1.0) in "
        f"{cache}/vaultkeeper/0.1.0: SessionStart, SessionEnd, MCP server, skill; "
        f"vault {tmp_path}/vault"
    ) in lines
    assert any(
        "plugin vaultkeeper-recall@vaultkeeper (enabled" in x
        and "UserPromptSubmit, PreToolUse;" in x
        for x in lines
    )
    assert not any("not installed in" in x for x in lines)  # the plugin is the install
    data = json.loads(invoke(tmp_path, "hooks", "status", "claude-code", "--json").output)
    got = {p["plugin_id"]: (p["enabled"], p["events"], p["vault"]) for p in data["plugins"]}
    assert got["vaultkeeper@vaultkeeper"] == (
        True, ["SessionStart", "SessionEnd"], f"{tmp_path}/vault",
    )  # fmt: skip


def test_status_says_codex_trusted_the_plugin_hooks_as_it_recorded(tmp_path: Path) -> None:
    codex_home(tmp_path)
    r = invoke(tmp_path, "hooks", "status", "codex")
    assert r.exit_code == 0, r.output
    line = next(x for x in r.output.splitlines() if "plugin vaultkeeper@vaultkeeper" in x)
    assert line.endswith(f"vault $VAULTKEEPER_VAULT [{codex_trust.TRUSTED}]")
    assert "SessionStart, SessionEnd, MCP server, skill" in line


def test_status_says_codex_has_not_trusted_them_yet(tmp_path: Path) -> None:
    codex_home(tmp_path, "config.before-session.toml")  # as `codex plugin add` left it
    r = invoke(tmp_path, "hooks", "status", "codex")
    line = next(x for x in r.output.splitlines() if "plugin vaultkeeper@vaultkeeper" in x)
    assert "hooks not yet trusted in Codex (it skips them until you do: /hooks, then t)" in line


def test_status_says_codex_will_ask_again_after_a_change(tmp_path: Path) -> None:
    codex_home(tmp_path)
    hooks = tmp_path / ".codex/plugins/cache/vaultkeeper/vaultkeeper/0.1.0/hooks/codex.json"
    hooks.write_text(hooks.read_text().replace('"timeout": 10', '"timeout": 11'))
    r = invoke(tmp_path, "hooks", "status", "codex")
    line = next(x for x in r.output.splitlines() if "plugin vaultkeeper@vaultkeeper" in x)
    assert line.endswith(f"[{codex_trust.CHANGED}]")


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_install_refuses_a_second_copy_and_writes_nothing(
    tmp_path: Path, make_vault: MakeVault, host: str
) -> None:
    vault = make_vault()
    if host == "claude-code":
        claude_home(tmp_path)
        target = tmp_path / ".claude" / "settings.json"
    else:
        codex_home(tmp_path)
        target = tmp_path / ".codex" / "hooks.json"
    before = target.read_bytes() if target.exists() else None
    r = invoke(tmp_path, "--vault", vault, "hooks", "install", host, "--mcp")
    assert r.exit_code == 1
    assert r.output.count("\n") == 1 and "Traceback" not in r.output
    assert r.output.startswith(f"vaultkeeper: error: {host}: the plugin vaultkeeper@vaultkeeper (")
    assert "a second copy would run each twice; nothing written" in r.output
    assert (target.read_bytes() if target.exists() else None) == before
    assert not (tmp_path / ".claude.json").exists()  # --mcp's file neither


def test_only_the_recall_plugin_leaves_the_session_hooks_to_install(
    tmp_path: Path, make_vault: MakeVault
) -> None:
    vault = make_vault()
    claude_home(tmp_path, names=("vaultkeeper-recall",))
    settings = tmp_path / ".claude" / "settings.json"
    r = invoke(tmp_path, "--vault", vault, "hooks", "install", "claude-code", "--recall")
    assert r.exit_code == 1 and "plugin vaultkeeper-recall@vaultkeeper" in r.output
    r = invoke(tmp_path, "--vault", vault, "hooks", "install", "claude-code")
    assert r.exit_code == 0, r.output
    assert set(json.loads(settings.read_text())["hooks"]) == {"SessionStart", "SessionEnd"}


def test_a_disabled_plugin_does_not_stop_an_install(tmp_path: Path, make_vault: MakeVault) -> None:
    vault = make_vault()
    claude_home(tmp_path, enabled=False)
    r = invoke(tmp_path, "--vault", vault, "hooks", "install", "claude-code")
    assert r.exit_code == 0, r.output
    status = invoke(tmp_path, "hooks", "status", "claude-code").output
    assert "plugin vaultkeeper@vaultkeeper (disabled" in status


def test_another_tool_s_plugin_of_the_same_name_is_not_ours(
    tmp_path: Path, make_vault: MakeVault
) -> None:
    vault = make_vault()
    claude_home(tmp_path)
    for name in NAMES:  # the installed copies without our launcher
        (tmp_path / ".claude/plugins/cache/vaultkeeper" / name / "0.1.0/scripts/vaultkeeper-hook"
         ).write_text("#!/bin/sh\necho another tool\n")  # fmt: skip
    status = invoke(tmp_path, "hooks", "status", "claude-code").output
    assert "plugin vaultkeeper" not in status
    assert invoke(tmp_path, "--vault", vault, "hooks", "install", "claude-code").exit_code == 0


def test_status_says_when_a_hook_runs_twice(tmp_path: Path, make_vault: MakeVault) -> None:
    vault = make_vault()
    r = invoke(tmp_path, "--vault", vault, "hooks", "install", "claude-code")
    assert r.exit_code == 0, r.output  # first by hand, then the plugin beside it
    settings = json.loads((tmp_path / ".claude/settings.json").read_text())
    claude_home(tmp_path)
    merged = json.loads((tmp_path / ".claude/settings.json").read_text())
    (tmp_path / ".claude/settings.json").write_text(json.dumps({**merged, **settings}))
    out = invoke(tmp_path, "hooks", "status", "claude-code").output
    twice = [x for x in out.splitlines() if "runs twice" in x]
    assert [x.split()[1] for x in twice] == ["SessionEnd", "SessionStart"]
    assert all("vaultkeeper hooks uninstall claude-code" in x for x in twice)


def test_a_missing_installed_copy_is_said(tmp_path: Path) -> None:
    claude_home(tmp_path)
    shutil.rmtree(tmp_path / ".claude/plugins/cache/vaultkeeper/vaultkeeper")
    out = invoke(tmp_path, "hooks", "status", "claude-code").output
    line = next(x for x in out.splitlines() if "plugin vaultkeeper@vaultkeeper" in x)
    assert line.endswith("its installed copy is missing: reinstall the plugin")


def test_unreadable_records_are_no_install(tmp_path: Path) -> None:
    (tmp_path / ".claude/plugins").mkdir(parents=True)
    (tmp_path / ".claude/plugins/installed_plugins.json").write_text("{not json")
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex/config.toml").write_text('[plugins."vaultkeeper@x"\n')
    r = invoke(tmp_path, "hooks", "status")
    assert r.exit_code == 0 and "plugin vaultkeeper" not in r.output


def test_a_broken_installed_copy_is_one_line_in_status(tmp_path: Path) -> None:
    claude_home(tmp_path)
    hooks = tmp_path / ".claude/plugins/cache/vaultkeeper/vaultkeeper/0.1.0/hooks/claude-code.json"
    hooks.write_text('{"hooks": ')
    r = invoke(tmp_path, "hooks", "status", "claude-code")
    assert r.exit_code == 0 and "Traceback" not in r.output
    line = next(x for x in r.output.splitlines() if "plugin vaultkeeper@vaultkeeper" in x)
    assert line.endswith(f"; {hooks}: cannot be read (not valid JSON)")


def test_codex_records_are_read_without_tomllib(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python 3.10 has no TOML reader: the plugin tables are found by their headers."""
    from vaultkeeper.hosts import plugins
    from vaultkeeper.store import tomledit

    codex_home(tmp_path)
    conf = tmp_path / ".codex" / "config.toml"
    conf.write_text(conf.read_text().replace(
        '[plugins."vaultkeeper-recall@vaultkeeper"]\nenabled = true',
        '[plugins."vaultkeeper-recall@vaultkeeper"]\nenabled = false',
    ))  # fmt: skip
    with_tomllib = plugins.installed(["codex"], {"HOME": str(tmp_path)})
    monkeypatch.setattr(tomledit, "load", lambda text, path: None)
    without = plugins.installed(["codex"], {"HOME": str(tmp_path)})
    assert without == with_tomllib
    assert [(p.name, p.enabled) for p in without] == [
        ("vaultkeeper-recall", False), ("vaultkeeper", True),
    ]  # fmt: skip


# Review: Claude Code layers enabledPlugins (user, then the project's settings.json, then
# its settings.local.json): a plugin a project turns on runs there, one it turns off does
# not. Status says what holds in the folder it runs in; install refuses the second copy.
@pytest.mark.parametrize("where", ["settings.json", "settings.local.json"])
def test_a_plugin_enabled_in_project_settings_is_enabled_there(
    tmp_path: Path, make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    vault = make_vault()
    home = tmp_path / "home"
    claude_home(home, enabled=False)
    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    on = {"enabledPlugins": {f"{n}@vaultkeeper": True for n in NAMES}}
    (project / ".claude" / where).write_text(json.dumps(on))
    monkeypatch.chdir(project)
    status = invoke(home, "hooks", "status", "claude-code").output
    assert "plugin vaultkeeper@vaultkeeper (enabled" in status, status
    before = (home / ".claude" / "settings.json").read_bytes()
    r = invoke(home, "--vault", vault, "hooks", "install", "claude-code")
    assert r.exit_code == 1 and "a second copy would run each twice" in r.output
    assert (home / ".claude" / "settings.json").read_bytes() == before
    off = {"enabledPlugins": {f"{n}@vaultkeeper": False for n in NAMES}}
    (project / ".claude" / where).write_text(json.dumps(off))
    claude_home(tmp_path / "home2")
    status = invoke(tmp_path / "home2", "hooks", "status", "claude-code").output
    assert "plugin vaultkeeper@vaultkeeper (disabled" in status, status


def _status_bounded(home: Path, cwd: Path, hangs: str) -> subprocess.CompletedProcess[str]:
    """`hooks status claude-code` as a host's shell runs it (this HOME, no vault named),
    in a bounded child: a FIFO or /dev/zero read fails the test, naming ``hangs``."""
    env = {**os.environ, "HOME": str(home), "PATH": "/usr/bin:/bin"}
    env.pop("VAULTKEEPER_VAULT", None)
    return run_bounded(["hooks", "status", "claude-code"], hangs, cwd=cwd, env=env)


def test_a_project_settings_file_that_is_a_fifo_or_a_device_is_never_waited_on(
    tmp_path: Path,
) -> None:
    """With the plugin installed, status reads the current folder's .claude/ settings (a
    cloned repository's): one that is a FIFO or a link to /dev/zero is no settings file,
    neither waited on (status hung) nor read for ever."""
    import os

    home = tmp_path / "home"
    claude_home(home)
    repo = tmp_path / "repo"
    (repo / ".claude").mkdir(parents=True)
    os.mkfifo(repo / ".claude" / "settings.local.json")
    (repo / ".claude" / "settings.json").symlink_to("/dev/zero")

    done = _status_bounded(home, repo, "hooks status waited on a FIFO in the project's .claude/")
    assert done.returncode == 0, done.stderr
    assert "plugin vaultkeeper@vaultkeeper (enabled, user scope" in done.stdout


def test_an_installed_copy_whose_launcher_is_a_fifo_is_never_waited_on(tmp_path: Path) -> None:
    """Whether an installed copy is ours is read from its launcher's first bytes: a launcher
    that is a FIFO (or a link to /dev/zero) is no launcher of ours, never waited on."""
    import os

    home = tmp_path / "home"
    claude_home(home)
    cache = home / ".claude/plugins/cache/vaultkeeper"
    (cache / NAMES[0] / "0.1.0/scripts/vaultkeeper-hook").unlink()
    os.mkfifo(cache / NAMES[0] / "0.1.0/scripts/vaultkeeper-hook")
    (cache / NAMES[1] / "0.1.0/scripts/vaultkeeper-hook").unlink()
    (cache / NAMES[1] / "0.1.0/scripts/vaultkeeper-hook").symlink_to("/dev/zero")
    done = _status_bounded(
        home, tmp_path, "hooks status waited on a plugin launcher that is a FIFO"
    )
    assert done.returncode == 0, done.stderr
    assert "plugin vaultkeeper" not in done.stdout
