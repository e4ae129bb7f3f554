"""Register the session hooks in Claude Code's and Codex CLI's settings files.

Both hosts read ``{"hooks": {EVENT: [{"matcher": ..., "hooks": [HANDLER, ...]}]}}``; what
differs between them is data (``HOSTS``). We add one handler per event (SessionEnd: the
throttled scan; SessionStart: the brief; with --recall the recall hook's) and touch
nothing else. A handler is ours when its command starts with one of our hook scripts.
The settings file's JSON is read and written here for the MCP registration too
(hosts/mcp.py); a file install created is remembered beside it, so uninstall can leave
the home as it was while nothing but our entries was ever put in it.

A hook runs absolute paths (our script, the vault, the program) and exits 0 whatever
happens, so a deleted clone or virtual environment would make every hook do nothing,
silently: ``hooks status`` says so (``problem_of``), and ``hooks install`` warns when what
it writes lives in a temporary folder or a project's own environment
(``placement_warning``). The way to avoid both: an install for daily use (pipx).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.errors import UsageError, VaultkeeperError
from vaultkeeper.hosts import codex_trust, home_path
from vaultkeeper.store.fsio import atomic_write
from vaultkeeper.store.templates import data_dir


@dataclass(frozen=True)
class Host:
    """What differs between the hosts we install into."""

    hooks_file: str  # the settings file holding its hooks
    mcp_file: str  # the user-scope file registering MCP servers
    session_end_timeout: int  # seconds the host gives a SessionEnd hook
    remove_plugin: str  # the host's command that uninstalls a plugin


HOSTS = {
    "claude-code": Host(
        config.CLAUDE_SETTINGS, config.CLAUDE_USER_CONFIG, config.CLAUDE_SESSION_END_TIMEOUT,
        "claude plugin uninstall",
    ),
    "codex": Host(
        config.CODEX_HOOKS, config.CODEX_CONFIG, config.CODEX_SESSION_END_TIMEOUT,
        "codex plugin remove",
    ),
}  # fmt: skip
Spot = tuple[int, int]  # a handler's place: (group index, handler index)
EVENTS = (*config.HOOK_SCRIPTS, *config.RECALL_HOOK_EVENTS)  # every event we may add to


def host(target: str) -> Host:
    """The host ``target`` names; any other name is a usage error."""
    if target not in HOSTS:
        raise UsageError(f"unknown host {target!r}; one of {', '.join(HOSTS)}")
    return HOSTS[target]


@dataclass(frozen=True)
class Handler:
    """One hook handler as it sits (or will sit) in a settings file."""

    event: str
    command: str
    timeout: int | None
    vault: str | None  # the vault the command names, when it names one
    problem: str | None = None  # hooks status: its script or program gone, not a vaultkeeper
    trust: str | None = None  # Codex: trusted, not yet trusted, or changed (codex_trust)
    matcher: str | None = None  # the tools a PreToolUse handler is for (--recall)

    def as_json(self) -> dict[str, Any]:
        return {"type": "command", "command": self.command, "timeout": self.timeout}

    def group(self) -> dict[str, Any]:
        return {**({"matcher": self.matcher} if self.matcher else {}), "hooks": [self.as_json()]}


@dataclass(frozen=True)
class Change:
    """What install or uninstall did to one file (or the crontab)."""

    target: str
    path: str
    changed: bool
    backup: str | None
    actions: tuple[str, ...]  # one line per event: added / updated / kept / removed


@dataclass(frozen=True)
class Installed:
    """What ``hooks status`` finds for one host."""

    target: str
    path: str
    exists: bool
    handlers: tuple[Handler, ...]
    note: str | None = None  # a reason the file could not be read


def default_path(target: str, env: Mapping[str, str]) -> Path:
    """The host's hooks file (cron and git have none: Codex's, unused, as ever)."""
    return home_path(HOSTS.get(target, HOSTS["codex"]).hooks_file, env)


def find_program(env: Mapping[str, str]) -> str | None:
    """The vaultkeeper executable of *this* installation (the console script beside the
    running interpreter: a PATH lookup may find a shim or another installation), else
    the one on PATH."""
    beside = Path(sys.executable).parent / "vaultkeeper"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("vaultkeeper", path=env.get("PATH"))
    return os.path.abspath(found) if found else None


def script_name(event: str) -> str:
    """Our script for ``event``: the session scripts, else the recall hook (--recall)."""
    return config.HOOK_SCRIPTS.get(event, config.RECALL_HOOK_SCRIPT)


def script_path(event: str) -> Path:
    return data_dir(config.HOOKS_DIR) / script_name(event)


def desired(target: str, vault: Path, program: str | None, recall: bool = False) -> list[Handler]:
    """Our handlers for ``target`` (absolute script, vault and program paths); with
    ``recall`` the point-of-use recall's too (prompt and file tools)."""
    prog = [program] if program else []
    timeouts = {"SessionEnd": host(target).session_end_timeout}
    wanted: list[tuple[str, list[str], str | None, int]] = [
        (event, [str(vault), *prog], None, timeouts.get(event, config.SESSION_START_TIMEOUT))
        for event in config.HOOK_SCRIPTS
    ]
    if recall:
        matchers = (None, config.RECALL_MATCHERS[target])
        for event, matcher in zip(config.RECALL_HOOK_EVENTS, matchers, strict=True):
            wanted.append((event, [str(vault), target, *prog], matcher, config.RECALL_HOOK_TIMEOUT))
    out: list[Handler] = []
    for event, args, matcher, timeout in wanted:
        script = script_path(event)
        if not os.access(script, os.X_OK):
            raise VaultkeeperError(
                f"{script}: hook script is not executable; reinstall vaultkeeper"
            )
        command = shlex.join([str(script), *args])
        out.append(Handler(event, command, timeout, str(vault), matcher=matcher))
    return out


def _argv(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return []


def is_ours(handler: object, event: str) -> bool:
    """True for a handler whose command starts with our script for ``event``.

    The script's name alone is not enough (another tool may ship a session-end.sh);
    it must be the installed script, a file carrying our marker line, or a path inside
    a vaultkeeper wheel (``.../vaultkeeper/_data/hooks/``) that has since gone.
    """
    if not isinstance(handler, dict) or not isinstance(handler.get("command"), str):
        return False
    argv = _argv(handler["command"])
    if not argv or Path(argv[0]).name != script_name(event):
        return False
    first = Path(argv[0])
    wheel_layout = tuple(p.name for p in first.parents[:3]) == ("hooks", "_data", "vaultkeeper")
    if first == script_path(event) or wheel_layout:
        return True
    return config.HOOK_MARKER in head(first)


def head(path: Path, size: int = 2000) -> str:
    """A regular file's first ``size`` bytes as text; "" for anything else: a settings
    file (a cloned repository's) or a plugin's copy may name a FIFO, which would wait for
    ever, or a link to /dev/zero, which never ends."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return ""
    try:
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
        return os.read(fd, size).decode("utf-8", "replace") if regular else ""
    except OSError:
        return ""
    finally:
        os.close(fd)


def _ours_in(data: dict[str, Any], event: str, path: Path) -> tuple[list[Any], list[Spot]]:
    """The event's groups and (group index, handler index) of every handler of ours."""
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise VaultkeeperError(f'{path}: "hooks" is not an object; nothing written')
    groups = hooks.get(event, [])
    if not isinstance(groups, list):
        raise VaultkeeperError(f'{path}: "hooks.{event}" is not a list; nothing written')
    found: list[Spot] = []
    for gi, group in enumerate(groups):
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            found.extend((gi, hi) for hi, h in enumerate(group["hooks"]) if is_ours(h, event))
    return groups, found


def install(
    target: str, path: Path, vault: Path, program: str | None, recall: bool = False
) -> Change:
    """Merge our SessionEnd and SessionStart handlers (and with ``recall`` the recall
    hook's UserPromptSubmit and PreToolUse ones) into the settings file at ``path``."""
    real = Path(os.path.realpath(path))  # a symlinked dotfile keeps its link
    wanted = desired(target, vault, program, recall)
    data, raw = read_settings(real)
    actions: list[str] = []
    for want in wanted:
        groups, spots = _ours_in(data, want.event, real)
        if len(spots) == 1:
            gi, hi = spots[0]
            have = groups[gi]["hooks"][hi]
            if all(have.get(k) == v for k, v in want.as_json().items()):
                actions.append(f"kept    {want.event}: {want.command} (already installed)")
                continue
        if spots:
            gi, hi = spots[0]
            groups[gi]["hooks"][hi] = want.as_json()
            groups = without_spots(groups, spots[1:])
            actions.append(f"updated {want.event}: {want.command}")
        else:
            groups = [*groups, want.group()]
            actions.append(f"added   {want.event}: {want.command}")
        set_groups(data, want.event, groups)
    made = missing_folders(real.parent) if raw is None else []
    change = _write(target, real, data, raw, actions)
    if raw is None and change.changed:  # we created it: uninstall may take it away again
        remember_created(real, made)
    return change


def uninstall(target: str, path: Path) -> Change:
    """Remove our handlers, and only ours, from the settings file at ``path``; a file
    install created goes when nothing but our handlers is left in it."""
    host(target)
    real = Path(os.path.realpath(path))
    data, raw = read_settings(real)
    actions: list[str] = []
    for event in EVENTS:
        groups, spots = _ours_in(data, event, real)
        if not spots and event in config.HOOK_SCRIPTS:
            actions.append(f"absent  {event}: not installed")
        for gi, hi in spots:
            actions.append(f"removed {event}: {groups[gi]['hooks'][hi].get('command')}")
        if spots:
            set_groups(data, event, without_spots(groups, spots))
    return settle_uninstall(real, not data, _write(target, real, data, raw, actions))


def installed(target: str, path: Path) -> Installed:
    """Our handlers in the settings file at ``path``; an unreadable file is a note."""
    host(target)
    if not path.exists():
        return Installed(target, str(path), False, ())
    found: list[Handler] = []
    try:
        data, _ = read_settings(path)
        for event in EVENTS:
            groups, spots = _ours_in(data, event, path)
            for gi, hi in spots:
                h = groups[gi]["hooks"][hi]
                timeout = h.get("timeout") if isinstance(h.get("timeout"), int) else None
                cmd = h["command"]
                trust = None
                if target == "codex":
                    trust = codex_trust.state(path, event, (gi, hi), groups[gi], h)
                vault = argv[1] if len(argv := _argv(cmd)) > 1 else None
                found.append(Handler(event, cmd, timeout, vault, problem_of(cmd), trust))
    except VaultkeeperError as exc:
        return Installed(target, str(path), True, (), str(exc).removesuffix("; nothing written"))
    return Installed(target, str(path), True, tuple(found))


def _write(
    target: str, path: Path, data: dict[str, Any], raw: str | None, actions: list[str]
) -> Change:
    before = json.loads(raw) if raw is not None and raw.strip() else {}
    if before == data:  # nothing to do, whatever the formatting
        return Change(target, str(path), False, None, tuple(actions))
    try:
        # 1e999 would come back as Infinity and a lone surrogate not at all: the host
        # could no longer read its settings
        text = json.dumps(data, indent=indent_of(raw), ensure_ascii=False, allow_nan=False) + "\n"
        text.encode("utf-8")
    except ValueError as exc:
        raise VaultkeeperError(
            f"{path}: cannot be written back as valid JSON ({exc}); nothing written"
        ) from None
    backup = replace_keeping_backup(path, raw is not None, text)
    return Change(target, str(path), True, backup, tuple(actions))


# -- a host's settings file as JSON ------------------------------------------------------
def read_settings(path: Path) -> tuple[dict[str, Any], str | None]:
    """The file's JSON object (``{}`` when absent or blank) and its raw text."""
    if not path.exists():
        return {}, None
    raw = read_text(path)
    if not raw.strip():
        return {}, raw
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise VaultkeeperError(
            f"{path}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg}); nothing written"
        ) from None
    except RecursionError:  # json's nesting depth passed: not a host's settings either
        raise VaultkeeperError(
            f"{path}: not valid JSON (nested too deep); nothing written"
        ) from None
    if not isinstance(data, dict):
        raise VaultkeeperError(
            f"{path}: holds a JSON {type(data).__name__}, not an object; nothing written"
        )
    return data, raw


def read_text(path: Path) -> str:
    """A host's file as on disk (CRLF kept); not a regular file (a FIFO would block the
    read for ever) or not UTF-8: a one-line refusal."""
    if not path.is_file():
        raise VaultkeeperError(f"{path}: not a regular file; nothing written")
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise VaultkeeperError(f"{path}: not UTF-8 text; nothing written") from None


def without_spots(groups: list[Any], spots: list[Spot]) -> list[Any]:
    """``groups`` without the handlers at ``spots``; a group left empty by that goes too."""
    out: list[Any] = []
    for gi, group in enumerate(groups):
        drop = {hi for g, hi in spots if g == gi}
        kept = [h for hi, h in enumerate(group["hooks"]) if hi not in drop] if drop else None
        if not drop or kept:
            out.append(group if not drop else {**group, "hooks": kept})
    return out


def set_groups(data: dict[str, Any], event: str, groups: list[Any]) -> None:
    hooks = data.setdefault("hooks", {})
    if groups:
        hooks[event] = groups
    else:
        hooks.pop(event, None)
        if not hooks:
            del data["hooks"]


def replace_keeping_backup(path: Path, existed: bool, text: str) -> str | None:
    """Write ``text`` over a host's file atomically; the file as it was (if it was) is
    kept beside it first. Returns the backup's path."""
    backup: str | None = None
    if existed:
        bak = path.with_name(path.name + config.HOOK_BACKUP_SUFFIX)
        atomic_write(bak, path.read_bytes())
        backup = str(bak)
    atomic_write(path, text)
    return backup


def indent_of(raw: str | None) -> int | str:
    """The file's own indentation (first indented line), so a rewrite stays familiar."""
    for line in (raw or "").splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            lead = line[: len(line) - len(stripped)]
            return "\t" if lead.startswith("\t") else len(lead)
    return 2


def _record(path: Path) -> Path:
    return path.with_name(path.name + config.HOOK_CREATED_SUFFIX)


def missing_folders(folder: Path) -> list[Path]:
    """The folders a write into ``folder`` would create, outermost first."""
    missing: list[Path] = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    return missing[::-1]


def remember_created(path: Path, folders: list[Path]) -> None:
    record = {"file": str(path), "folders": [str(f) for f in folders]}
    atomic_write(_record(path), json.dumps(record, indent=2) + "\n")


def settle_uninstall(path: Path, empty: bool, change: Change) -> Change:
    """After an uninstall's edit: a file install created, now ``empty``, goes with our
    backup, the record and the folders made for it (each only once empty); a file that
    holds someone else's settings is theirs from now on (the record goes)."""
    undone = _undo_created(path) if empty else None
    if undone is not None:
        return Change(change.target, change.path, True, None, (*change.actions, *undone))
    if change.changed:
        with contextlib.suppress(FileNotFoundError):
            _record(path).unlink()
    return change


def _undo_created(path: Path) -> list[str] | None:
    try:
        made = json.loads(_record(path).read_text(encoding="utf-8"))
        if made.get("file") != str(path):
            return None  # copied from elsewhere: not a record of this file
        folders = [Path(str(f)) for f in made["folders"]]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    backup = path.with_name(path.name + config.HOOK_BACKUP_SUFFIX)
    for gone in (path, backup, _record(path)):
        with contextlib.suppress(FileNotFoundError):
            gone.unlink()
    actions = [f"deleted {path}: install created it and it held nothing else"]
    for folder in reversed(folders):
        try:
            folder.rmdir()  # only when empty: anything someone else put there stays
        except OSError:
            break
        actions.append(f"deleted {folder}/: install created it")
    return actions


# -- will the program a hook names still be a vaultkeeper (see the module doc)

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
        info = os.stat(program)
    except OSError:
        gone = "is gone (a deleted clone or virtual environment?)"
        return f"the program {program} {gone}: {_REINSTALL}"
    if not os.path.isfile(program) or not os.access(program, os.X_OK):
        return f"the program {program} is not an executable file: {_REINSTALL}"
    answer = _version_of(program, info.st_mtime_ns, info.st_ino)
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
        # the nearest folder above it holding a pyvenv.cfg (a virtual environment)
        venv = next((str(p) for p in Path(real).parents if (p / "pyvenv.cfg").is_file()), None)
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


def _working_tree(path: str, home: str) -> str | None:
    """The nearest folder above ``path`` with a .git (not the home: dotfiles), or None."""
    for parent in Path(path).parents:
        if str(parent) == home:
            return None
        if (parent / ".git").exists():
            return str(parent)
    return None
