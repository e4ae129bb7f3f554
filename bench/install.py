"""Is the vaultkeeper this interpreter runs a clean install of this checkout?

The benchmark's headline ratios compare vaultkeeper's console script with a bare
``python``. An editable install (``pip install -e``) puts an import hook or a path file
in site-packages that every interpreter start runs: it slows ``python -c pass`` too and
so hides vaultkeeper's own import cost (1.06x measured that way, 2.54x from a
clean install). A stale install measures old code. So bench/run.py asks for a plain
``pip install .`` of the current checkout, made by bench/clean-run.sh.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

from vaultkeeper import config

# what a child process imports: the interpreter's own path, not the current folder
_WHERE = "import sys; sys.path.pop(0); import vaultkeeper; print(vaultkeeper.__file__)"


def problems(
    repo: Path, python: str = sys.executable, env: dict[str, str] | None = None
) -> list[str]:
    """Why ``python``'s vaultkeeper is not a clean install of ``repo`` (empty: it is one)."""
    try:
        dist = distribution(config.DIST_NAME)
    except PackageNotFoundError:
        return [f"vaultkeeper is not installed for {python}"]
    found: list[str] = []
    direct = dist.read_text("direct_url.json")
    if direct and json.loads(direct).get("dir_info", {}).get("editable"):
        found.append("vaultkeeper is an editable install (pip install -e)")
    done = subprocess.run(
        [python, "-c", _WHERE], capture_output=True, text=True, env=env, cwd=repo, check=False
    )
    package = Path(done.stdout.strip()).parent if done.returncode == 0 else None
    if package is None:
        found.append(f"{python} cannot import vaultkeeper: {done.stderr.strip()[-200:]}")
    elif package.resolve() == (repo / "vaultkeeper").resolve():
        found.append(f"vaultkeeper is imported from this checkout ({package}), not installed")
    else:
        stale = changed(repo / "vaultkeeper", package)
        if stale:
            more = f" and {len(stale) - 1} more" if len(stale) > 1 else ""
            found.append(f"the installed vaultkeeper differs from this checkout: {stale[0]}{more}")
    return found


def changed(source: Path, installed: Path) -> list[str]:
    """The .py files (package-relative) that differ between the checkout and the install."""

    def files(top: Path) -> dict[str, bytes]:
        out = {}
        for folder, dirs, names in os.walk(top):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for name in names:
                if name.endswith(".py"):
                    path = Path(folder) / name
                    out[path.relative_to(top).as_posix()] = path.read_bytes()
        return out

    ours, theirs = files(source), files(installed)
    return sorted(n for n in ours.keys() | theirs.keys() if ours.get(n) != theirs.get(n))
