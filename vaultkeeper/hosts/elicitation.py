"""Can a Claude Code hook answer an MCP server's dialog in the person's place?

Claude Code runs ``Elicitation`` hooks when an MCP server asks a question and
``ElicitationResult`` hooks on the answer; either may return the answer itself, and the
person never sees the question (Claude Code 2.1.332: issue 34). Hooks come from the
user's settings, a project's checked-in ``.claude/settings.json``, managed settings and
plugins. So the host's dialog for a deletion (``hooks install claude-code --mcp
--dialog``, checked by ``check_dialog``) is refused while any of these files configures
one (``answering``), cannot be read, or sets the opt-in or moves the folders read here in
its ``env``; and always while the host is Codex (it answers cancel unseen). Claude Code
keeps the hooks it started with: ``remember``. ``refusal`` says why. Reads only.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.errors import UsageError
from vaultkeeper.hosts import home_path
from vaultkeeper.search.rank import inert

# `hooks install claude-code --mcp --dialog` puts this in the server's registration env:
# the host's dialog for a deletion is on (``refusal`` below); without it apply_prune queues.
DIALOG_ENV = config.ENV_MCP_DIALOG
DIALOG_ON = (
    f"deletions: asked in Claude Code's dialog ({DIALOG_ENV}=1 in the entry's env), refused "
    "while an Elicitation hook is configured; else queued for `vaultkeeper review`"
)
DIALOG_OFF = "deletions: queued for `vaultkeeper review` (--dialog: asked in Claude Code's dialog)"
# The hook events whose hooks can answer a dialog (Claude Code's names).
EVENTS = ("Elicitation", "ElicitationResult")
SETTINGS = ("settings.json", "settings.local.json")  # in ~/.claude/ and in a project's .claude/
MANAGED = (  # Claude Code's managed (enterprise) settings, Linux and macOS
    "/etc/claude-code/managed-settings.json",
    "/Library/Application Support/ClaudeCode/managed-settings.json",
)
_PLUGIN_FILES = ("hooks.json", "plugin.json")  # a plugin's hooks, or its manifest naming them
_SKIP = frozenset({".git", "node_modules"})
# A settings file's env that sets the opt-in or moves the folders this check reads.
_ENV_NAMES = (DIALOG_ENV, "CLAUDE_CONFIG_DIR", "HOME")
_MAX_BYTES = 4 * 1024 * 1024  # a settings file larger than this is not read: not ruled out


@dataclass(frozen=True)
class Answerer:
    """A settings file that configures a hook able to answer a dialog (or may: ``why``)."""

    path: str
    why: str  # "an Elicitation hook", or why the file could not be read

    def line(self) -> str:
        return f"{self.path}: {self.why}"


def user_dir(env: Mapping[str, str]) -> Path:
    """Claude Code's user folder: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    configured = env.get("CLAUDE_CONFIG_DIR")
    return Path(configured) if configured else home_path("~/.claude", env)


def settings_files(env: Mapping[str, str], cwd: Path) -> list[Path]:
    """Every settings file whose hooks Claude Code may run for a session in ``cwd``: the
    user's, each project folder's from ``cwd`` (and ``$CLAUDE_PROJECT_DIR``) up to the
    root (Claude Code reads the project's; its parents are checked too: a refusal too
    many is safe), and the managed ones. The user folder's own ``~/.claude`` and a
    parent's ``.claude`` are the same kind of file; each is listed once."""
    folders = [user_dir(env)]
    starts = [cwd] + ([Path(env["CLAUDE_PROJECT_DIR"])] if env.get("CLAUDE_PROJECT_DIR") else [])
    for start in starts:
        start = start.absolute()
        folders += [folder / ".claude" for folder in (start, *start.parents)]
    folders.append(home_path("~/.claude", env))
    found = dict.fromkeys(folder / name for folder in folders for name in SETTINGS)
    return [*found, *(Path(p) for p in MANAGED)]


def answering(env: Mapping[str, str], cwd: Path) -> tuple[Answerer, ...]:
    """The files that configure (or may configure) a hook able to answer a dialog."""
    plugins = dict.fromkeys(_plugin_files(user_dir(env) / "plugins"))  # each once
    found = [(p, _settings(p)) for p in settings_files(env, cwd)]
    found += [(p, _plugin(p)) for p in plugins]
    return tuple(Answerer(str(p), why) for p, why in found if why is not None)


def _read(path: Path) -> bytes | None:
    """The file's bytes; None when there is no file. OSError/ValueError: not readable."""
    try:
        if not path.exists():
            return None
    except OSError:
        return None
    if not path.is_file():
        raise ValueError("not a regular file")
    if path.stat().st_size > _MAX_BYTES:
        raise ValueError(f"over {_MAX_BYTES} bytes")
    return path.read_bytes()


def _unreadable(exc: Exception) -> str:
    return f"cannot be read ({type(exc).__name__}), so a hook in it cannot be ruled out"


def _settings(path: Path) -> str | None:
    try:
        raw = _read(path)
        if raw is None:
            return None
        data = json.loads(raw.decode("utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        return _unreadable(exc)
    env = data.get("env") if isinstance(data, dict) else None
    moved = [k for k in _ENV_NAMES if isinstance(env, dict) and k in env]
    if moved:  # Claude Code passes a settings file's env to the servers it starts
        sets = ", ".join(moved)
        return f"its env sets {sets}: the opt-in and the files checked are not the person's"
    hooks = data.get("hooks") if isinstance(data, dict) else None
    if hooks is None:
        return None
    if not isinstance(hooks, dict):
        return '"hooks" is not an object, so an Elicitation hook cannot be ruled out'
    named = [event for event in EVENTS if hooks.get(event)]
    return f"an {' and an '.join(named)} hook" if named else None


def _plugin_files(root: Path) -> Iterator[Path]:
    """A plugin's hooks.json and plugin.json files under ``root`` (installed plugins),
    linked folders followed (each real folder once), and every file a plugin.json's
    ``hooks`` names, wherever in its plugin (Claude Code loads a hooks file of any name)."""
    if not root.is_dir():
        return
    seen: set[str] = set()
    for folder, dirs, files in os.walk(root, followlinks=True):
        real = os.path.realpath(folder)
        if real in seen:  # a link back up: walked already
            dirs[:] = []
            continue
        seen.add(real)
        dirs[:] = sorted(d for d in dirs if d not in _SKIP)
        for name in sorted(files):
            if name in _PLUGIN_FILES:
                yield Path(folder) / name
            if name == "plugin.json":
                yield from _named_hooks(Path(folder) / name)


def _named_hooks(manifest: Path) -> Iterator[Path]:
    """The hooks files a plugin manifest names (``"hooks": "./x.json"`` or a list)."""
    try:
        data = json.loads(_read(manifest) or b"{}")
    except (OSError, ValueError, RecursionError):
        return  # the manifest itself is listed as unreadable
    named = data.get("hooks") if isinstance(data, dict) else None
    base = manifest.parent.parent if manifest.parent.name.startswith(".") else manifest.parent
    for rel in named if isinstance(named, list) else [named]:
        if isinstance(rel, str) and rel.strip():
            yield base / rel


def _plugin(path: Path) -> str | None:
    """A plugin file naming an answering event anywhere in its text or its JSON (hooks
    inline or in a hooks file, the name escaped or not): conservative, a plugin that
    merely mentions one is counted too."""
    try:
        raw = _read(path)
    except (OSError, ValueError) as exc:
        return _unreadable(exc)
    if raw is None:
        return None
    if any(event.encode() in raw for event in EVENTS):
        return "a plugin's Elicitation hook"
    try:  # the JSON written again unescaped: an event named through escapes shows
        text = json.dumps(json.loads(raw.decode("utf-8")), ensure_ascii=False)
    except (ValueError, RecursionError):
        return None  # not JSON and no event named: Claude Code loads no hook from it
    return "a plugin's Elicitation hook" if any(event in text for event in EVENTS) else None


def check_dialog(target: str, with_mcp: bool, dialog: bool) -> None:
    """``--dialog`` (the host's dialog for a deletion) is for ``claude-code --mcp`` only:
    Codex answers the dialog with cancel at once and shows nothing (0.169.0, 0.171.0)."""
    if not dialog:
        return
    if target == "codex":
        raise UsageError(
            "--dialog is for claude-code: Codex answers an MCP dialog with cancel at once and "
            "shows nothing, so a deletion through Codex waits for `vaultkeeper review`; "
            "nothing written"
        )
    if target != "claude-code" or not with_mcp:
        raise UsageError("--dialog is for claude-code --mcp (the server's registration)")


# The clientInfo names the recorded hosts sent (tools/hosts/NOTES.md), and what to call them.
HOST_LABELS = {"claude-code": "Claude Code", "codex-mcp-client": "Codex"}
CODEX = "Codex"
OFF = (
    "the host's dialog is off (the default: a deletion through MCP waits for "
    "`vaultkeeper review`; `hooks install claude-code --mcp --dialog` turns it on)"
)
CODEX_NEVER = (
    "Codex shows no dialog (it answers the question with cancel at once, unseen), so "
    "the host's dialog is not used there"
)


def host_label(name: object, title: object = None) -> str:
    """What the journal calls the host: ``Claude Code``, ``Codex``, else its own name."""
    if isinstance(name, str) and name in HOST_LABELS:
        return HOST_LABELS[name]
    given = title if isinstance(title, str) and title.strip() else name
    if isinstance(given, str) and given.strip():
        return inert(" ".join(given.split()))[:60]
    return "the host"


def opted_in(env: Mapping[str, str]) -> bool:
    return env.get(DIALOG_ENV) == "1"


# What answering() found when the server started: Claude Code runs the hooks it started
# with for the whole session, whatever the file says later (an Elicitation hook taken out
# of the file, by the agent or by itself, still answers). A hook removed before the
# server's start is not seen: the limit of reading files.
_AT_START: list[Answerer] = []


def remember(env: Mapping[str, str], cwd: Path) -> None:
    """At the server's start, with the dialog on: the answering hooks configured then
    (called again when the tools are registered: what either call found is kept)."""
    if opted_in(env):
        _AT_START.extend(a for a in answering(env, cwd) if a not in _AT_START)


def refusal(host: str, env: Mapping[str, str], cwd: Path) -> str | None:
    """Why the host's dialog may not be used for a deletion now, or None when it may."""
    if not opted_in(env):
        return OFF
    if host == CODEX:
        return CODEX_NEVER
    now = answering(env, cwd)
    found = first_of((*now, *(a for a in _AT_START if a not in now)), inert)
    if found is None:
        return None
    return (
        "the host's dialog is refused while a Claude Code hook could answer it in the "
        f"person's place: {found}"
    )


def first_of(found: tuple[Answerer, ...], shown: Callable[[str], str] = str) -> str | None:
    """The first file found (its line through ``shown``) and how many more; None: none."""
    if not found:
        return None
    return shown(found[0].line()) + (f" (and {len(found) - 1} more)" if len(found) > 1 else "")
