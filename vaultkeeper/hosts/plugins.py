"""Is vaultkeeper's plugin installed in Claude Code or Codex? Read from the hosts' records.

The repository ships two plugins per host (``plugins/vaultkeeper``: session hooks, MCP
server, skill; ``plugins/vaultkeeper-recall``: the recall hooks), installed by the host
itself. Their hooks are the ones ``hooks install`` writes, so ``hooks status`` names a
plugin install and ``hooks install`` refuses a second copy beside it. Where the hosts
record an install (read, never written; recorded in tests/fixtures/hosts/plugins/):
Claude Code's ``~/.claude/plugins/installed_plugins.json`` (``{"version": 2, "plugins":
{"NAME@MARKETPLACE": [{"scope", "installPath", "version", "projectPath"?}]}}``), enabled in
a settings file's ``enabledPlugins``, options (our ``vault``) in ``pluginConfigs``;
Codex's ``config.toml`` ``[plugins."NAME@MARKETPLACE"] enabled = true``, the copy under
``~/.codex/plugins/cache/MARKETPLACE/NAME/VERSION/``, its hooks trusted under the key
``NAME@MARKETPLACE:<hooks file>:<event>:<group>:<handler>``. A plugin is ours when its
installed copy carries our launcher (``scripts/vaultkeeper-hook`` with the marker line
``vaultkeeper-hook: plugin``), whatever the marketplace was called.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vaultkeeper import config
from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.hosts import codex_trust, home_path
from vaultkeeper.hosts.elicitation import SETTINGS
from vaultkeeper.hosts.hooks import HOSTS, head
from vaultkeeper.store.text import ParseError, read_regular

NAMES = ("vaultkeeper", "vaultkeeper-recall")  # the plugins of plugins/ in the repository
LAUNCHER = "scripts/vaultkeeper-hook"
MARKER = f"{config.HOOK_MARKER} plugin"
CLAUDE_RECORD = "~/.claude/plugins/installed_plugins.json"
CODEX_CACHE = "~/.codex/plugins/cache"
_MANIFEST = {"claude-code": ".claude-plugin/plugin.json", "codex": ".codex-plugin/plugin.json"}


@dataclass(frozen=True)
class Plugin:
    """One install of one of our plugins in one host (a scope of it, for Claude Code)."""

    target: str  # claude-code | codex
    plugin_id: str  # NAME@MARKETPLACE
    name: str  # vaultkeeper | vaultkeeper-recall
    enabled: bool
    record: str  # the host's file that records the install
    path: str | None  # the installed copy the host runs
    version: str | None
    scope: str | None  # Claude Code: user, project or local
    vault: str | None  # the plugin's vault option (Claude Code), when set
    events: tuple[str, ...]  # the hook events its installed copy registers
    trust: tuple[str, ...] = ()  # Codex: one codex_trust state per hook handler
    note: str | None = None  # why the installed copy could not be read

    def line(self) -> str:
        """The ``hooks status`` line after the target's column."""
        head = f"plugin {self.plugin_id} ({'enabled' if self.enabled else 'disabled'}"
        head += (f", {self.scope} scope" if self.scope else "") + (
            f", version {self.version})" if self.version else ")"
        )
        what = (", ".join(self.events) or "no hooks") + (
            ", MCP server, skill" if self.name == NAMES[0] else ""
        )
        vault = self.vault or "$VAULTKEEPER_VAULT" + (
            " (no vault option set)" if self.target == "claude-code" else ""
        )
        text = f"{head} in {self.path or self.record}: {what}; vault {vault}"
        text += f" [{codex_trust.summary(self.trust)}]" if self.trust else ""
        return text + (f"; {self.note}" if self.note else "")


def installed(targets: Iterable[str], env: Mapping[str, str]) -> tuple[Plugin, ...]:
    """Our plugins each host in ``targets`` records as installed (cron, git: none)."""
    readers = {"claude-code": _claude, "codex": _codex}
    return tuple(p for t in targets if t in readers for p in readers[t](env))


def refuse_second_copy(target: str, recall: bool, env: Mapping[str, str]) -> None:
    """``hooks install TARGET``: refuse when an enabled plugin of ours already registers
    the hooks it would add (the session hooks; with ``recall`` the recall hooks too)."""
    for plugin in installed([target], env):
        if not plugin.enabled:
            continue
        if plugin.name == NAMES[0] or (recall and plugin.name == NAMES[1]):
            how = f"{HOSTS[target].remove_plugin} {plugin.plugin_id}"
            raise VaultkeeperError(
                f"{target}: the plugin {plugin.plugin_id} ({plugin.path or plugin.record}) "
                f"already runs vaultkeeper's {', '.join(plugin.events) or 'hooks'}: a second "
                f"copy would run each twice; nothing written (keep the plugin, or `{how}` "
                "first)"
            )


def _claude(env: Mapping[str, str]) -> list[Plugin]:
    record = home_path(CLAUDE_RECORD, env)
    data = _json(record)
    plugins = data.get("plugins") if isinstance(data, dict) else None
    if not isinstance(plugins, dict):
        return []
    user = _json(home_path(config.CLAUDE_SETTINGS, env))
    out: list[Plugin] = []
    for plugin_id, entries in sorted(plugins.items()):
        name = plugin_id.split("@", 1)[0]
        if name not in NAMES:
            continue
        for entry in entries if isinstance(entries, list) else [entries]:
            if not isinstance(entry, dict):
                continue
            path = Path(where) if (where := _str(entry, "installPath")) else None
            if path is not None and path.is_dir() and not _ours(path):
                continue  # another tool's plugin of the same name
            scope, project = _str(entry, "scope"), _str(entry, "projectPath")
            if scope in ("project", "local") and project is not None:
                settings = [_json(Path(project) / ".claude" / n) for n in SETTINGS]
            else:  # Claude Code layers the folder's project settings over the user's
                here = Path.cwd() / ".claude"
                settings = [user, *(_json(here / n) for n in SETTINGS)]
            said = [_dig(s, "enabledPlugins", plugin_id) for s in settings]
            enabled = [v for v in said if isinstance(v, bool)][-1:] == [True]  # the last says
            vault = _str(_dig(user, "pluginConfigs", plugin_id, "options"), "vault")
            events, note = _events("claude-code", path)
            out.append(
                Plugin(
                    "claude-code", plugin_id, name, enabled, str(record),
                    str(path) if path else None, _str(entry, "version"), scope, vault, events,
                    note=note,
                )
            )  # fmt: skip
    return out


def _codex(env: Mapping[str, str]) -> list[Plugin]:
    conf = home_path(config.CODEX_CONFIG, env)
    tables = codex_trust.tables(conf, "plugins")
    out: list[Plugin] = []
    for plugin_id, table in sorted(tables.items()):
        name, _, market = plugin_id.partition("@")
        if name not in NAMES:
            continue
        path = _codex_copy(home_path(CODEX_CACHE, env) / market / name)
        if path is not None and not _ours(path):
            continue
        events, note = _events("codex", path)
        trust = _codex_trust(conf, plugin_id, path) if path and not note else ()
        out.append(
            Plugin(
                "codex", plugin_id, name, table.get("enabled") is not False, str(conf),
                str(path) if path else None, path.name if path else None, None, None, events,
                trust, note,
            )
        )  # fmt: skip
    return out


def _codex_copy(base: Path) -> Path | None:
    """The installed copy Codex runs: the newest version folder holding a manifest."""
    try:
        versions = [p for p in base.iterdir() if (p / _MANIFEST["codex"]).is_file()]
    except OSError:
        return None
    return max(versions, key=lambda p: p.stat().st_mtime_ns, default=None)


def _codex_trust(conf: Path, plugin_id: str, root: Path) -> tuple[str, ...]:
    """codex_trust's state of each hook handler the installed copy declares."""
    rel, hooks = _hooks_of("codex", root)
    known = codex_trust.trusted_hashes(conf)
    states: list[str] = []
    for event, groups in hooks.items():
        for gi, group in enumerate(groups if isinstance(groups, list) else []):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for hi, handler in enumerate(handlers if isinstance(handlers, list) else []):
                if not isinstance(handler, dict):
                    continue
                key = f"{plugin_id}:{codex_trust.key(rel, event, gi, hi)}"
                have = [known[key]] if key in known else []
                states.append(codex_trust.verdict(have, event, group, handler))
    return tuple(states)


def _ours(root: Path) -> bool:
    return MARKER in head(root / LAUNCHER)


def _events(target: str, root: Path | None) -> tuple[tuple[str, ...], str | None]:
    """The hook events the installed copy registers, or a note saying why not known."""
    if root is None or not root.is_dir():
        return (), "its installed copy is missing: reinstall the plugin"
    try:
        _, hooks = _hooks_of(target, root)
    except VaultkeeperError as exc:
        return (), str(exc)
    return tuple(hooks), None


def _hooks_of(target: str, root: Path) -> tuple[str, dict[str, Any]]:
    """(the hooks file relative to ``root``, its ``hooks`` object) named by the manifest."""
    manifest = _json(root / _MANIFEST[target], strict=True)
    rel = manifest.get("hooks") if isinstance(manifest, dict) else None
    if not isinstance(rel, str) or not rel.startswith("./"):
        rel = "./hooks/hooks.json"
    rel = rel.removeprefix("./")
    data = _json(root / rel, strict=True)
    hooks = data.get("hooks") if isinstance(data, dict) else None
    if not isinstance(hooks, dict):
        raise VaultkeeperError(f"{root / rel}: holds no hooks object")
    return rel, hooks


def _json(path: Path, strict: bool = False) -> Any:
    """The file's JSON; {} when it is missing or unreadable, or not a regular file (a
    project's settings may be a FIFO or a link to /dev/zero) (``strict``: a one-line error)."""
    try:
        return json.loads(read_regular(path).decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        if strict:
            why = exc.reason.removeprefix("cannot read: ") if isinstance(exc, ParseError) else ""
            reason = why or "not valid JSON"
            raise VaultkeeperError(f"{path}: cannot be read ({reason})") from None
        return {}


def _str(data: Any, key: str) -> str | None:
    """``data[key]`` when ``data`` is an object and that is a text not empty, else None."""
    found = data.get(key) if isinstance(data, dict) else None
    return found if isinstance(found, str) and found else None


def _dig(data: Any, *keys: str) -> Any:
    for k in keys:
        data = data.get(k) if isinstance(data, dict) else None
    return data
