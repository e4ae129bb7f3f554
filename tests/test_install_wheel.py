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
