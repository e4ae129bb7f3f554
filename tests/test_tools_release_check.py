"""Publishing is one step: the release workflow builds, checks and publishes on a tag with
trusted publishing, and its build-and-check step (tools/release_check.py) runs in CI
(.ci/run) on every submission, without publishing (issue 36, item 1).
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
from pathlib import Path

import yaml

from tests.conftest import REPO
from vaultkeeper import __version__


def _check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(REPO / "tools" / "release_check.py"), *args],
        capture_output=True, text=True, cwd=REPO, timeout=900,
    )  # fmt: skip


def test_the_built_files_pass_the_release_check(tmp_path: Path) -> None:
    done = _check("--out", str(tmp_path), "--tag", f"v{__version__}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("release-check: ok: ")
    (sdist,) = tmp_path.glob("*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = tar.getnames()
    assert not [n for n in names if "/tests/" in n or "/bench/" in n]  # no 4 MB of fixtures
    assert any(n.endswith("/LICENSE") for n in names)
    assert sdist.stat().st_size < 1_000_000
    # the sdist builds the wheel on its own (no network: no build isolation)
    wheel = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path / "from-sdist"), str(sdist)],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert wheel.returncode == 0, wheel.stderr
    assert list((tmp_path / "from-sdist").glob("vaultkeeper_memory-*.whl"))


def test_a_tag_that_is_not_the_version_is_refused(tmp_path: Path) -> None:
    done = _check("--out", str(tmp_path), "--tag", "v99.0.0", "--repository", "someone/else")
    assert done.returncode == 1
    assert f"release-check: tag v99.0.0 is not v{__version__}" in done.stderr
    assert "not https://github.com/someone/else, the repository publishing" in done.stderr


def test_the_workflow_publishes_on_a_tag_with_trusted_publishing_and_ci_checks() -> None:
    flow = yaml.safe_load((REPO / ".github" / "workflows" / "release.yml").read_text())
    assert flow[True]["push"]["tags"] == ["v*"]  # YAML 1.1 reads the key `on` as True
    build, publish = flow["jobs"]["build"], flow["jobs"]["publish"]
    steps = " ".join(str(s.get("run", "")) for s in build["steps"])
    assert "python tools/release_check.py --out dist --tag" in steps
    assert publish["needs"] == "build"
    assert publish["permissions"] == {"id-token": "write"}  # no stored token
    assert any(
        str(s.get("uses", "")).startswith("pypa/gh-action-pypi-publish") for s in publish["steps"]
    )
    assert "password" not in str(publish)
    ci = (REPO / ".ci" / "run").read_text()
    assert "python tools/release_check.py\n" in ci  # built and checked, never uploaded
    commands = [line for line in ci.splitlines() if line and not line.startswith("#")]
    assert not [line for line in commands if "upload" in line or "publish" in line]
