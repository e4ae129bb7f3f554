"""Build the sdist and the wheel and check them, as a release does before it publishes.

    python tools/release_check.py [--out DIR] [--tag vX.Y.Z] [--repository OWNER/NAME]

The release workflow (.github/workflows/release.yml) runs this on a tag and publishes
what it built only when it passes; CI (.ci/run) runs it on every submission, without
publishing, so a release never meets a problem first. What it checks:

- the build itself (hatchling, the build backend, without network: no build isolation);
- ``twine check --strict``: the metadata and the README render as the index shows them;
- the sdist holds what building the wheel needs and nothing else: no tests, fixtures,
  benchmarks or CI files; the LICENSE in both;
- the wheel's metadata: the distribution's name, MIT, the project URLs, the console script;
- with ``--tag``: the tag is ``v`` + the version in pyproject.toml;
- with ``--repository``: the Source URL names that repository (the one publishing).

Exit 0 when all hold; else one line per problem on stderr and exit 1.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from email.parser import Parser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME = "vaultkeeper-memory"
# what the sdist may hold at its top level: enough to build the wheel, and to read
SDIST_TOP = {
    "vaultkeeper", "templates", "hooks", "sample_vault", "docs", "README.md", "LICENSE",
    "pyproject.toml", "PKG-INFO", ".gitignore",
}  # fmt: skip


def build(out: Path) -> list[Path]:
    done = subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "-d", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"release-check: the build failed: {done.stderr.strip()[-2000:]}")
    return sorted(out.iterdir())


def problems(built: list[Path], tag: str | None, repository: str | None) -> list[str]:
    found: list[str] = []
    sdists = [p for p in built if p.name.endswith(".tar.gz")]
    wheels = [p for p in built if p.suffix == ".whl"]
    if len(sdists) != 1 or len(wheels) != 1:
        return [f"expected one sdist and one wheel, built {[p.name for p in built]}"]
    twine = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, built)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if twine.returncode != 0:
        found.append(f"twine check --strict: {' '.join(twine.stdout.split())[-1000:]}")
    with tarfile.open(sdists[0]) as sdist:
        names = sdist.getnames()
    tops = {n.split("/", 2)[1] for n in names if n.count("/") >= 1}
    if tops - SDIST_TOP:
        found.append(f"sdist: holds {sorted(tops - SDIST_TOP)} (only {sorted(SDIST_TOP)})")
    if "LICENSE" not in tops:
        found.append("sdist: no LICENSE")
    with zipfile.ZipFile(wheels[0]) as wheel:
        files = wheel.namelist()
        meta_name = next((n for n in files if n.endswith(".dist-info/METADATA")), None)
        meta = Parser().parsestr(wheel.read(meta_name).decode()) if meta_name else None
        entry = next((n for n in files if n.endswith(".dist-info/entry_points.txt")), None)
        scripts = wheel.read(entry).decode() if entry else ""
    if meta is None:
        return [*found, "wheel: no METADATA"]
    version = str(meta["Version"])
    if meta["Name"] != NAME:
        found.append(f"wheel: Name is {meta['Name']}, not {NAME}")
    if meta["License-Expression"] != "MIT" or not any(
        n.endswith(".dist-info/licenses/LICENSE") for n in files
    ):
        found.append("wheel: not MIT with its LICENSE file")
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL") or [])
    if not {"Source", "Documentation", "Issues"} <= set(urls):
        found.append(f"wheel: project URLs {sorted(urls)}, want Source, Documentation, Issues")
    if "vaultkeeper = vaultkeeper.entry:main" not in scripts:
        found.append("wheel: no `vaultkeeper` console script")
    if not any(n.startswith("vaultkeeper/_data/templates/") for n in files):
        found.append("wheel: no templates (init needs them)")
    if tag is not None and tag != f"v{version}":
        found.append(f"tag {tag} is not v{version}, the version in pyproject.toml")
    if repository is not None:
        want = f"https://github.com/{repository}"
        if urls.get("Source") != want:
            found.append(
                f"project URL Source is {urls.get('Source')}, not {want}, the repository "
                "publishing: set [project.urls] in pyproject.toml"
            )
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="where to build (default: a temporary folder)")
    parser.add_argument("--tag", help="the release tag, vX.Y.Z")
    parser.add_argument("--repository", help="OWNER/NAME of the repository publishing")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="vaultkeeper-release-") as tmp:
        out = args.out or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        built = build(out)
        found = problems(built, args.tag, args.repository)
        for problem in found:
            print(f"release-check: {problem}", file=sys.stderr)
        if not found:
            print(f"release-check: ok: {', '.join(p.name for p in built)}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
