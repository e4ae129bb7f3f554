"""Is the program a hook names still a vaultkeeper, and will it stay one?

A hook runs absolute paths (our script, the vault, the program) and exits 0 whatever
happens, so a deleted clone or virtual environment would make every hook do nothing,
silently: ``hooks status`` says so (``problem_of``), and ``hooks install`` warns when what
it writes lives in a temporary folder or a project's own environment
(``placement_warning``). The way to avoid both: an install for daily use (pipx).
"""

from __future__ import annotations

import functools
import os
import shlex
import subprocess
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from vaultkeeper import config

DAILY_INSTALL = (  # from a clone until the distribution is on the index (config)
    f"`pipx install {config.INSTALL_FROM}`{config.INSTALL_WHERE} "
    f"(or `uv tool install {config.INSTALL_FROM}`)"
)
_VERSION_TIMEOUT_S = 20  # `PROGRAM --version` on a loaded machine; not a hook's budget
_REINSTALL = f"install vaultkeeper for daily use ({DAILY_INSTALL}) and run `hooks install` again"


def problem_of(command: str) -> str | None:
    """Why the hook ``command`` cannot work (its script or its program gone, or the program
    not a vaultkeeper), or None when it can."""
    try:
        argv = shlex.split(command)
    except ValueError:
        return None
    if not argv:
        return None
    if not os.path.isfile(argv[0]):
        return f"its hook script {argv[0]} is gone: {_REINSTALL}"
    # the session scripts take VAULT PROGRAM; recall.sh takes VAULT HOST PROGRAM (hooks.py)
    at = 3 if os.path.basename(argv[0]) == config.RECALL_HOOK_SCRIPT else 2
    return program_problem(argv[at]) if len(argv) > at else None


def program_problem(program: str) -> str | None:
    """None when ``program`` is an executable vaultkeeper (it answers ``--version``)."""
    try:
        stat = os.stat(program)
    except OSError:
        gone = "is gone (a deleted clone or virtual environment?)"
        return f"the program {program} {gone}: {_REINSTALL}"
    if not os.path.isfile(program) or not os.access(program, os.X_OK):
        return f"the program {program} is not an executable file: {_REINSTALL}"
    answer = _version_of(program, stat.st_mtime_ns, stat.st_ino)
    if answer is None or not answer.startswith("vaultkeeper, version "):
        said = f" (`--version` said {answer!r})" if answer else " (it does not answer `--version`)"
        return f"the program {program} is not a vaultkeeper{said}: {_REINSTALL}"
    return None


@functools.lru_cache(maxsize=16)
def _version_of(program: str, _mtime: int, _inode: int) -> str | None:
    """The first line ``program --version`` prints, or None (a failure, a timeout)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    try:
        done = subprocess.run(
            [program, "--version"], capture_output=True, text=True, errors="replace",
            stdin=subprocess.DEVNULL, timeout=_VERSION_TIMEOUT_S, env=env,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    lines = done.stdout.strip().splitlines()
    return lines[0][:200] if done.returncode == 0 and lines else None


def install_warning(
    target: str, program: str | None, env: Mapping[str, str], cwd: Path
) -> str | None:
    """``placement_warning`` for what ``hooks install TARGET`` writes: the program, and
    for a host the hook scripts too."""
    from vaultkeeper.store.templates import data_dir

    scripts = [str(data_dir(config.HOOKS_DIR) / name) for name in config.HOOK_SCRIPTS.values()]
    paths = ([program] if program else []) + (scripts if target in ("claude-code", "codex") else [])
    return placement_warning(paths, env, cwd)


def placement_warning(
    paths: Iterable[str], env: Mapping[str, str], cwd: Path, temps: Iterable[str] | None = None
) -> str | None:
    """One line when a path about to be written into a host's settings (the program, the
    hook scripts) lives where it will not last: a temporary folder, a project's working
    tree or a virtual environment inside the current folder. None otherwise."""
    home = _real(env.get("HOME") or str(Path.home()))
    here = _real(str(cwd))
    if temps is None:
        temps = (tempfile.gettempdir(), "/tmp", "/var/tmp", env.get("TMPDIR") or "")
    temps = {_real(p) for p in temps}
    for path in paths:
        real = _real(path)
        for temp in sorted((t for t in temps if t and t != "/"), key=len, reverse=True):
            if _inside(real, temp):
                return _warning(path, f"inside the temporary folder {temp}")
        venv = _venv_root(real)
        tree = _working_tree(real, home)
        if venv is not None and here not in (home, "/") and _inside(venv, here):
            return _warning(path, f"inside the virtual environment {venv} of the current folder")
        if tree is not None:
            where = f"the virtual environment {venv}" if venv else "the working tree"
            return _warning(path, f"inside {where} of the project {tree}")
    return None


def _warning(path: str, where: str) -> str:
    return (
        f"the hooks will run {path}, {where}: they stop working (silently) when it is "
        f"deleted; for daily use install with {DAILY_INSTALL} and run `hooks install` again"
    )


def _real(path: str | None) -> str:
    return os.path.realpath(path) if path else ""


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _venv_root(path: str) -> str | None:
    """The nearest folder above ``path`` holding a pyvenv.cfg (a virtual environment)."""
    return next((str(p) for p in Path(path).parents if (p / "pyvenv.cfg").is_file()), None)


def _working_tree(path: str, home: str) -> str | None:
    """The nearest folder above ``path`` with a .git (not the home: dotfiles), or None."""
    for parent in Path(path).parents:
        if str(parent) == home:
            return None
        if (parent / ".git").exists():
            return str(parent)
    return None
