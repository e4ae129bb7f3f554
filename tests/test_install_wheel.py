"""The distribution installs by its own name: a wheel built from this checkout, installed
into a fresh virtual environment, is `vaultkeeper-memory` and runs as `vaultkeeper`.

No network: the wheel is built without build isolation (hatchling is in the test extra)
and installed with --no-deps; the new environment finds click, pyyaml and the rest in the
test environment's site-packages through a .pth line, *after* its own site-packages, so
the vaultkeeper it imports is the wheel's.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.conftest import REPO
from vaultkeeper import __version__, config


def _run(argv: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        argv, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600, **kw
    )


def build_and_install(where: Path) -> Path:
    """Build the wheel into ``where`` and install it into a new venv there: its bin/."""
    wheels = where / "wheels"
    built = _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "-q", "-w", str(wheels), str(REPO)],
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    (wheel,) = wheels.glob("*.whl")
    assert wheel.name.startswith("vaultkeeper_memory-"), wheel.name
    venv = where / "venv"
    made = _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    site = Path(
        _run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]
        ).stdout.strip()
    )
    # the test environment's packages (click, pyyaml, ...), after the venv's own
    (site / "zz_test_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    put = _run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
         "--no-index", "-q", str(wheel)],
    )  # fmt: skip
    assert put.returncode == 0, put.stderr
    return venv / "bin"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_and_install(tmp_path_factory.mktemp("wheel"))


def test_the_wheel_is_vaultkeeper_memory_and_runs_as_vaultkeeper(
    installed: Path, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    version = _run([str(installed / "vaultkeeper"), "--version"], env=env)
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == f"vaultkeeper, version {__version__}"
    probe = (
        "import importlib.metadata as m, vaultkeeper\n"
        f"print(m.metadata({config.DIST_NAME!r})['Name'])\n"
        "print(vaultkeeper.__file__)\n"
        "print(sorted(m.distribution('vaultkeeper-memory').entry_points.names))\n"
    )
    shown = _run([str(installed / "python"), "-c", probe], env=env, cwd=tmp_path)  # not the clone
    assert shown.returncode == 0, shown.stderr
    name, where, scripts = shown.stdout.splitlines()
    assert name == config.DIST_NAME == "vaultkeeper-memory"
    assert Path(where).is_relative_to(installed.parent), where  # the wheel's, not the clone's
    assert scripts == "['vaultkeeper']"
    # the wheel carries its templates and hook scripts: init and hooks work from it
    made = _run([str(installed / "vaultkeeper"), "init", str(tmp_path / "v")], env=env)
    assert made.returncode == 0, made.stderr
    assert (tmp_path / "v" / "references" / "vault-spec.md").is_file()


def _installer(name: str) -> str:
    """pipx or uv from the test environment (the test extra installs both)."""
    import shutil

    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        pytest.skip(f"{name}: not installed (pip install -e '.[test]' brings it)")
    return found


def _walk_through() -> list[str]:
    import re

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"^<!-- walk-through[^>]*-->\n```sh\n(.*?)^```$", readme, re.S | re.M)
    return [line for line in block.splitlines() if line.strip()]


@pytest.mark.parametrize("tool", ["pipx", "uv"])
def test_the_readme_walk_through_brings_the_brief_to_the_next_session(
    tool: str, tmp_path: Path
) -> None:
    """A newcomer follows the README's walk-through block in a fresh home, from the clone:
    install for daily use with pipx (or the README's `uv tool install .`), make a vault,
    wire Claude Code; then the SessionStart hook the settings name, run as the host runs
    it, prints the brief. The installers fetch the dependencies from the package index."""
    import json

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    commands = _walk_through()
    assert commands[0] == "pipx install ."  # from the clone: not on the index yet
    assert "uv tool install ." in readme and "pipx install '.[mcp]'" in readme
    program = _installer(tool)
    home = tmp_path / "home"
    home.mkdir()
    base = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV") and not k.startswith(("VAULTKEEPER_", "XDG_"))
    }
    bin_dir = home / ".local" / "bin"
    env = {
        **base,
        "HOME": str(home),
        "PATH": f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin",  # not the test's venv
        "PIPX_HOME": str(home / ".local" / "share" / "pipx"),
        "PIPX_BIN_DIR": str(bin_dir),
        "UV_TOOL_DIR": str(home / ".local" / "share" / "uv" / "tools"),
        "UV_TOOL_BIN_DIR": str(bin_dir),
        "UV_CACHE_DIR": str(home / ".cache" / "uv"),
    }
    install = [program, "install", "."] if tool == "pipx" else [program, "tool", "install", "."]
    put = _run(install, cwd=REPO, env=env)  # in the clone, as the README says
    assert put.returncode == 0, (put.stdout, put.stderr)
    assert (bin_dir / "vaultkeeper").is_file()
    for command in commands[1:]:
        done = _run(["sh", "-c", command], cwd=home, env=env)
        assert done.returncode == 0, (command, done.stdout, done.stderr)
        assert "will do nothing" not in done.stdout, done.stdout  # hooks status: all well
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    (start,) = [h["command"] for g in settings["hooks"]["SessionStart"] for h in g["hooks"]]
    # the tool's own program, by its path inside the new home (pipx's or uv's venv)
    assert f"{home}/.local/share/{tool}" in start and sys.prefix not in start, start
    project = home / "src" / "api"
    project.mkdir(parents=True)
    payload = {
        "session_id": "0b6c1f3e-5d2a-4c1e-9f7a-2d8e6b1c4a90",
        "transcript_path": str(home / ".claude" / "projects" / "x" / "s.jsonl"),
        "cwd": str(project),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    host_env = {**base, "HOME": str(home), "PATH": "/usr/bin:/bin"}  # as a host runs it
    brief = subprocess.run(
        ["sh", "-c", start], input=json.dumps(payload), capture_output=True, text=True,
        cwd=project, env=host_env, timeout=600,
    )  # fmt: skip
    assert brief.returncode == 0, brief.stderr
    vault = Path(os.path.realpath(home / "memory"))
    first = (
        f"Memory vault: {vault}. Start at its _index.md and follow the [[links]] to what "
        "the task needs."
    )
    assert brief.stdout.splitlines()[0] == first, brief.stdout + brief.stderr
    # the README shows the same first line, for a home of /home/you
    assert first.replace(str(vault), "/home/you/memory") in readme
    if tool == "uv":  # the MCP extra, the README's other line: the server can be wired
        mcp = _run([program, "tool", "install", "--force", ".[mcp]"], cwd=REPO, env=env)
        assert mcp.returncode == 0, (mcp.stdout, mcp.stderr)
        wired = _run(
            ["sh", "-c", "vaultkeeper --vault ~/memory hooks install claude-code --mcp"],
            cwd=home, env=env,
        )  # fmt: skip
        assert wired.returncode == 0, (wired.stdout, wired.stderr)
