"""Register the session hooks in Claude Code's and Codex CLI's settings files.

Both hosts read ``{"hooks": {EVENT: [{"matcher": ..., "hooks": [HANDLER, ...]}]}}``.
We add one handler per event (SessionEnd: the throttled scan; SessionStart: the brief)
and touch nothing else: every other key, event and handler, another tool's SessionEnd
hook included, is written back as it was read. A handler is ours when its command
starts with one of our hook scripts (see ``is_ours``). Reading and writing the file's
JSON is hosts/settings.py's.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.errors import UsageError, VaultkeeperError
from vaultkeeper.hosts import codex_trust
from vaultkeeper.hosts.program import problem_of
from vaultkeeper.hosts.settings import (
    event_groups,
    forget_created,
    indent_of,
    missing_folders,
    remember_created,
    set_groups,
    undo_created,
    without_spots,
)
from vaultkeeper.hosts.settings import read_settings as read_settings
from vaultkeeper.hosts.settings import replace_keeping_backup as replace_keeping_backup
from vaultkeeper.store.templates import data_dir

HOSTS = ("claude-code", "codex")
_SESSION_END_TIMEOUT = {
    "claude-code": config.CLAUDE_SESSION_END_TIMEOUT,
    "codex": config.CODEX_SESSION_END_TIMEOUT,
}


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
    raw = config.CLAUDE_SETTINGS if target == "claude-code" else config.CODEX_HOOKS
    home = env.get("HOME") or str(Path.home())
    return Path(home) / raw.removeprefix("~/")


def find_program(env: Mapping[str, str]) -> str | None:
    """The vaultkeeper executable of *this* installation, else the one on PATH.

    The console script beside the running interpreter comes first: a PATH lookup may
    find a version-manager shim or another installation.
    """
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


EVENTS = (*config.HOOK_SCRIPTS, *config.RECALL_HOOK_EVENTS)  # every event we may add to


def recall_handlers(target: str, vault: Path, program: str | None) -> list[Handler]:
    """The point-of-use recall's handlers (``install --recall``): prompt and file tools."""
    script = script_path(config.RECALL_HOOK_EVENTS[0])
    if not os.access(script, os.X_OK):
        raise VaultkeeperError(f"{script}: hook script is not executable; reinstall vaultkeeper")
    argv = shlex.join([str(script), str(vault), target] + ([program] if program else []))
    return [
        Handler(event, argv, config.RECALL_HOOK_TIMEOUT, str(vault), matcher=matcher)
        for event, matcher in zip(
            config.RECALL_HOOK_EVENTS, (None, config.RECALL_MATCHERS[target]), strict=True
        )
    ]


def desired(target: str, vault: Path, program: str | None) -> list[Handler]:
    """Our handlers for ``target``: absolute script, vault and program paths."""
    out: list[Handler] = []
    for event in config.HOOK_SCRIPTS:
        script = script_path(event)
        if not os.access(script, os.X_OK):
            raise VaultkeeperError(
                f"{script}: hook script is not executable; reinstall vaultkeeper"
            )
        argv = [str(script), str(vault)] + ([program] if program else [])
        timeout = (
            _SESSION_END_TIMEOUT[target] if event == "SessionEnd" else config.SESSION_START_TIMEOUT
        )
        out.append(Handler(event, shlex.join(argv), timeout, str(vault)))
    return out


def is_ours(handler: object, event: str) -> bool:
    """True for a handler whose command starts with our script for ``event``.

    The script's name alone is not enough (another tool may ship a session-end.sh);
    it must be the installed script, a file carrying our marker line, or a path inside
    a vaultkeeper wheel (``.../vaultkeeper/_data/hooks/``) that has since gone.
    """
    if not isinstance(handler, dict) or not isinstance(handler.get("command"), str):
        return False
    try:
        argv = shlex.split(handler["command"])
    except ValueError:
        return False
    if not argv:
        return False
    first = Path(argv[0])
    if first.name != script_name(event):
        return False
    wheel_layout = tuple(p.name for p in first.parents[:3]) == ("hooks", "_data", "vaultkeeper")
    if first == script_path(event) or wheel_layout:
        return True
    try:
        return config.HOOK_MARKER in first.read_text(encoding="utf-8", errors="replace")[:2000]
    except OSError:
        return False


def _vault_of(command: str) -> str | None:
    try:
        argv = shlex.split(command)
    except ValueError:
        return None
    return argv[1] if len(argv) > 1 else None


def _ours_in(groups: list[Any], event: str) -> list[tuple[int, int]]:
    """(group index, handler index) of every handler of ours, in file order."""
    found: list[tuple[int, int]] = []
    for gi, group in enumerate(groups):
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            found.extend((gi, hi) for hi, h in enumerate(group["hooks"]) if is_ours(h, event))
    return found


def install(
    target: str, path: Path, vault: Path, program: str | None, recall: bool = False
) -> Change:
    """Merge our SessionEnd and SessionStart handlers (and with ``recall`` the recall
    hook's UserPromptSubmit and PreToolUse ones) into the settings file at ``path``."""
    _check_target(target)
    real = Path(os.path.realpath(path))  # a symlinked dotfile keeps its link
    data, raw = read_settings(real)
    actions: list[str] = []
    wanted = desired(target, vault, program)
    for want in wanted + (recall_handlers(target, vault, program) if recall else []):
        groups = event_groups(data, want.event, real)
        spots = _ours_in(groups, want.event)
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
    """Remove our handlers, and only ours, from the settings file at ``path``.

    A file install created is deleted (with our backup and the folders made for it) when
    nothing but our handlers is left in it; otherwise it is written back without them.
    """
    _check_target(target)
    real = Path(os.path.realpath(path))
    data, raw = read_settings(real)
    actions: list[str] = []
    for event in EVENTS:
        groups = event_groups(data, event, real)
        spots = _ours_in(groups, event)
        if not spots and event not in config.HOOK_SCRIPTS:
            continue  # the recall hook was never installed: nothing to say
        if not spots:
            actions.append(f"absent  {event}: not installed")
            continue
        for gi, hi in spots:
            actions.append(f"removed {event}: {groups[gi]['hooks'][hi].get('command')}")
        set_groups(data, event, without_spots(groups, spots))
    if not data:
        undone = undo_created(real)
        if undone is not None:
            return Change(target, str(real), True, None, (*actions, *undone))
    change = _write(target, real, data, raw, actions)
    if change.changed:  # someone else's settings live in it now: the file is theirs
        forget_created(real)
    return change


def installed(target: str, path: Path) -> Installed:
    """Our handlers in the settings file at ``path``; an unreadable file is a note."""
    _check_target(target)
    if not path.exists():
        return Installed(target, str(path), False, ())
    try:
        data, _ = read_settings(path)
        found: list[Handler] = []
        for event in EVENTS:
            groups = event_groups(data, event, path)
            for gi, hi in _ours_in(groups, event):
                h = groups[gi]["hooks"][hi]
                timeout = h.get("timeout") if isinstance(h.get("timeout"), int) else None
                cmd = h["command"]
                trust = None
                if target == "codex":
                    trust = codex_trust.state(path, event, (gi, hi), groups[gi], h)
                found.append(Handler(event, cmd, timeout, _vault_of(cmd), problem_of(cmd), trust))
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


def _check_target(target: str) -> None:
    if target not in HOSTS:
        raise UsageError(f"unknown host {target!r}; one of {', '.join(HOSTS)}")
