#!/usr/bin/env python3
"""Record the real Claude Code and Codex installing vaultkeeper's plugins, offline.

    python tools/hosts/record_plugins.py [--claude PATH] [--codex PATH] [--skip-claude]
                                         [--skip-codex]

For each host, three throw-away HOMEs under /tmp, each with a vault made by `vaultkeeper
init` holding sample_vault's pattern registry, and the host pointed at mock_server.py on
127.0.0.1 (nothing else leaves the machine: a dead proxy for everything else):

* ``plugin``: the repository added as a marketplace from its local path and the
  ``vaultkeeper`` and ``vaultkeeper-recall`` plugins installed by the host's own command
  (`claude plugin marketplace add` / `claude plugin install`, `codex plugin marketplace
  add` / `codex plugin add`); one session; then `vaultkeeper hooks status` and `vaultkeeper
  hooks install HOST` (which must refuse) in that HOME;
* ``hooks-install``: `vaultkeeper hooks install HOST` instead; the same session;
* ``missing-program``: the plugin installed, the session started with a PATH that holds
  no `vaultkeeper`.

What the host wrote (its stream / rollout, the transcript, its plugin records, what the
model was sent) goes to tests/fixtures/hosts/plugins/<host>-<version>/<scenario>/ with the
placeholders of record.py (/HOME, /REPO, /VENV, 127.0.0.1:PORT); the brief each
session started with to ``brief.txt``. tests/test_plugins_recorded.py reads them. Codex
runs a plugin's hooks only once the person trusted them (/hooks, then t): the sessions
pass ``--dangerously-bypass-hook-trust``, as record.py does, and ``plugin`` also drives
the TUI to trust them and keeps the config.toml that wrote (``trust/``).

Needs the hosts' npm packages (`npm install @anthropic-ai/claude-code @openai/codex` in
/tmp/hostsnpm, or --claude / --codex), tmux, and the `vaultkeeper` of the Python running
this script. Never part of CI.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
from record import Run  # noqa: E402
from tui import Tui  # noqa: E402

FIXTURES = REPO / "tests" / "fixtures" / "hosts" / "plugins"
NPM = Path("/tmp/hostsnpm/node_modules")
CLAUDE_BIN = NPM / "@anthropic-ai/claude-code-linux-x64/claude"
CODEX_BIN = NPM / "@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"
TIMEOUT = 180
PROMPT = "VKSCN:plugin Fix the date test."
CLAUDE_TOOL = "mcp__plugin_vaultkeeper_vaultkeeper__cite"  # a plugin's server, as Claude names it


class World(Run):
    """One scenario's throw-away HOME, vault, project and mock model server (record.py's
    Run: the same environment, placeholders, command log and trimmed model requests)."""

    def __init__(self, host: str, version: str, scenario: str, vk: str):
        super().__init__(host, scenario, FIXTURES / f"{host}-{version}", vk)
        shutil.rmtree(self.out, ignore_errors=True)
        self.out.mkdir(parents=True)
        r = self.sh([vk, "init", str(self.vault)], "vaultkeeper-init")
        assert r.returncode == 0, r.stderr
        shutil.copy(REPO / "sample_vault/patterns/registry.md", self.vault / "patterns/registry.md")

    def sh(self, argv: list[str], label: str, env: dict[str, str] | None = None,
           cwd: Path | None = None) -> subprocess.CompletedProcess[str]:  # fmt: skip
        return self.run(argv, env or self.env(vault_env=False), label, timeout=TIMEOUT, cwd=cwd)

    def save(self, rel: str, text: str) -> None:
        self.save_text(rel, text)

    @property
    def log(self) -> list[str]:
        return self.cmdlog


def version_of(binp: Path) -> str:
    out = subprocess.run([str(binp), "--version"], capture_output=True, text=True).stdout
    m = re.search(r"\d+\.\d+\.\d+", out)
    assert m, out
    return m.group(0)


# --------------------------------------------------------------------------------------
# Claude Code
# --------------------------------------------------------------------------------------
def claude(binp: Path, vk: str) -> None:
    version = version_of(binp)
    for scenario in ("plugin", "hooks-install", "missing-program"):
        w = World("claude-code", version, scenario, vk)
        c = str(binp)
        if scenario == "hooks-install":
            r = w.sh([vk, "--vault", str(w.vault), "hooks", "install", "claude-code", "--mcp"],
                     "vaultkeeper-hooks-install")  # fmt: skip
            assert r.returncode == 0, r.stderr
        else:
            r = w.sh([c, "plugin", "marketplace", "add", str(REPO)], "claude-marketplace-add")
            assert r.returncode == 0, r.stdout + r.stderr
            for name in ("vaultkeeper", "vaultkeeper-recall"):
                r = w.sh([c, "plugin", "install", f"{name}@vaultkeeper", "--config",
                          f"vault={w.vault}"], f"claude-install-{name}")  # fmt: skip
                assert r.returncode == 0, r.stdout + r.stderr
        cj = w.home / ".claude.json"
        conf = json.loads(cj.read_text()) if cj.exists() else {}
        conf.setdefault("projects", {})[str(w.proj)] = {"hasTrustDialogAccepted": True}
        conf["hasCompletedOnboarding"] = True
        cj.write_text(json.dumps(conf, indent=2))
        tool = CLAUDE_TOOL if scenario != "hooks-install" else "mcp__vaultkeeper__cite"
        # the MCP server starts in the background: the model first waits for it with
        # Claude Code's own WaitForMcpServers tool, then cites through it
        port = w.start_mock([
            {"name": "wait", "when": "VKSCN:plugin", "reply": [
                {"tool": "WaitForMcpServers", "id": "toolu_vk_plug_0", "input": {}}]},
            {"name": "cite", "when": "toolu_vk_plug_0", "reply": [
                {"tool": tool, "id": "toolu_vk_plug_1",
                 "input": {"name": "pin-test-clock", "evidence": "tests/test_clock.py:12"}}]},
            {"name": "done", "when": "toolu_vk_plug_1", "reply": [
                {"text": "Done, as in [[patterns/registry#pin-test-clock]]."}]},
        ])  # fmt: skip
        env = w.env(
            with_vk=scenario != "missing-program", vault_env=False,
            ANTHROPIC_BASE_URL=f"http://127.0.0.1:{port}", ANTHROPIC_API_KEY="sk-ant-dummy-offline",
            DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1", DISABLE_AUTOUPDATER="1",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY="1",
        )  # fmt: skip
        allowed = "--allowedTools=Read,mcp__vaultkeeper,mcp__plugin_vaultkeeper_vaultkeeper"
        r = w.sh([c, "-p", "--output-format", "stream-json", "--verbose", allowed, PROMPT],
                 "claude-p", env=env)  # fmt: skip
        brief = [
            json.loads(line)
            for line in r.stdout.splitlines()
            if '"hook_response"' in line and '"SessionStart"' in line
        ]
        w.save("brief.txt", "".join(str(b.get("stdout", "")) for b in brief))
        if scenario == "plugin":
            w.sh([vk, "hooks", "status", "claude-code"], "vaultkeeper-hooks-status")
            w.sh([vk, "hooks", "status", "claude-code", "--json"], "vaultkeeper-hooks-status-json")
            w.sh([vk, "--vault", str(w.vault), "hooks", "install", "claude-code"],
                 "vaultkeeper-hooks-install-refused")  # fmt: skip
            w.sh([c, "plugin", "list"], "claude-plugin-list", env=env)
        _wait_scan(w)
        w.copy(w.home / ".claude/plugins/installed_plugins.json", "claude/installed_plugins.json")
        w.copy(w.home / ".claude/plugins/known_marketplaces.json", "claude/known_marketplaces.json")
        w.copy(w.home / ".claude/settings.json", "claude/settings.json")
        w.copy(w.home / ".claude/plugins/cache", "claude/plugins-cache")  # the installed copy
        w.copy(w.home / ".claude/projects", "claude-projects")
        w.copy(w.vault / "state" / "journal.jsonl", "vault-journal.jsonl")
        w.finish()


# --------------------------------------------------------------------------------------
# Codex
# --------------------------------------------------------------------------------------
def codex(binp: Path, vk: str) -> None:
    version = version_of(binp)
    x = str(binp)
    for scenario in ("plugin", "hooks-install", "missing-program"):
        w = World("codex", version, scenario, vk)
        ch = w.home / ".codex"
        ch.mkdir()
        done = {"text": "Done, as in [[patterns/registry#pin-test-clock]]."}
        # MCP servers start in the background and the tools hide behind tool_search: the
        # model searches, then cites through the server (approved in `plugin`)
        port = w.start_mock([
            {"name": "search", "when": "VKSCN:plugin", "reply": [
                {"tool_search": "vaultkeeper cite", "id": "call_vk_plug_0"}]},
            {"name": "cite", "when": "call_vk_plug_0", "reply": [
                {"tool": "mcp:cite", "id": "call_vk_plug_1",
                 "input": {"name": "pin-test-clock", "evidence": "tests/test_clock.py:12"}}]},
            {"name": "done", "when": "call_vk_plug_1", "reply": [done]},
        ] if scenario != "missing-program" else [
            {"name": "done", "when": "VKSCN:plugin", "reply": [done]},
        ])  # fmt: skip
        (ch / "config.toml").write_text(
            'model = "gpt-5.5"\nmodel_provider = "mock"\ncheck_for_update_on_startup = false\n'
            # 0.171 fixes a turn's tools when it starts: let the MCP server come up first
            "mcp_optional_startup_grace_ms = 20000\n\n"
            '[model_providers.mock]\nname = "mock"\n'
            f'base_url = "http://127.0.0.1:{port}/v1"\n'
            'wire_api = "responses"\nenv_key = "OPENAI_API_KEY"\n'
            "request_max_retries = 0\nstream_max_retries = 0\n"
            f'\n[projects."{w.proj}"]\ntrust_level = "trusted"\n'
            "\n[analytics]\nenabled = false\n"
        )
        env = w.env(
            with_vk=scenario != "missing-program", CODEX_HOME=str(ch),
            OPENAI_API_KEY="sk-dummy-offline", RUST_LOG="error", VAULTKEEPER_VAULT=str(w.vault),
        )  # fmt: skip
        if scenario == "hooks-install":
            r = w.sh([vk, "--vault", str(w.vault), "hooks", "install", "codex", "--mcp"],
                     "vaultkeeper-hooks-install", env=env)  # fmt: skip
            assert r.returncode == 0, r.stderr
        else:
            r = w.sh([x, "plugin", "marketplace", "add", str(REPO)], "codex-marketplace-add",
                     env=env)  # fmt: skip
            assert r.returncode == 0, r.stdout + r.stderr
            for name in ("vaultkeeper", "vaultkeeper-recall"):
                r = w.sh([x, "plugin", "add", f"{name}@vaultkeeper"], f"codex-add-{name}",
                         env=env)  # fmt: skip
                assert r.returncode == 0, r.stdout + r.stderr
        if scenario == "plugin":  # `codex exec` runs only approved MCP tools (docs/plugins.md)
            with (ch / "config.toml").open("a") as fh:
                fh.write('\n[plugins."vaultkeeper@vaultkeeper".mcp_servers.vaultkeeper.tools.cite]\n'
                         'approval_mode = "approve"\n')  # fmt: skip
        w.copy(ch / "config.toml", "codex/config.before-session.toml")
        r = w.sh([x, "exec", "--skip-git-repo-check", "--json", "--dangerously-bypass-hook-trust",
                  PROMPT], "codex-exec", env=env)  # fmt: skip
        _wait_scan(w)
        rollouts = sorted((ch / "sessions").rglob("*.jsonl"))
        w.save("brief.txt", _codex_brief(rollouts))
        if scenario == "plugin":
            w.sh([vk, "hooks", "status", "codex"], "vaultkeeper-hooks-status", env=env)
            w.sh([vk, "hooks", "status", "codex", "--json"], "vaultkeeper-hooks-status-json",
                 env=env)  # fmt: skip
            w.sh([vk, "--vault", str(w.vault), "hooks", "install", "codex"],
                 "vaultkeeper-hooks-install-refused", env=env)  # fmt: skip
            _codex_trust(w, x, env)
            w.sh([vk, "hooks", "status", "codex"], "vaultkeeper-hooks-status-trusted", env=env)
        if scenario == "missing-program":
            _codex_tui_message(w, x, env)
        w.copy(w.vault / "state" / "journal.jsonl", "vault-journal.jsonl")
        w.copy(ch / "sessions", "codex-sessions")
        w.copy(ch / "config.toml", "codex/config.toml")
        w.copy(ch / "plugins" / "cache", "codex/plugins-cache")
        w.finish()


def _codex_brief(rollouts: list[Path]) -> str:
    """The SessionStart hook's text as the rollout keeps it (a developer message)."""
    for path in rollouts:
        for line in path.read_text().splitlines():
            if "Memory vault:" not in line and "vaultkeeper plugin:" not in line:
                continue
            obj = json.loads(line)
            payload = obj.get("payload", {})
            for part in payload.get("content", []) if isinstance(payload, dict) else []:
                text = part.get("text", "") if isinstance(part, dict) else ""
                if "Memory vault:" in text or "vaultkeeper plugin:" in text:
                    return str(text)
            for key in ("message", "text"):
                if isinstance(payload, dict) and isinstance(payload.get(key), str):
                    return str(payload[key])
    return ""


def _codex_trust(w: World, x: str, env: dict[str, str]) -> None:
    """Codex's TUI: review the plugin's hooks and trust them all (t), as a person would."""
    with Tui([x, "--no-alt-screen"], env, w.proj, name="codexplug") as t:
        for _ in range(60):
            s = t.screen()
            if "t trust all" in s:
                break
            if "Hooks need review" in s or "need review" in s:
                t.shots.append(s)
                t._tmux("send-keys", "-t", t.sess, "Enter")
            elif "Use existing model" in s:
                t._tmux("send-keys", "-t", t.sess, "Down", "Enter")
            elif ("for shortcuts" in s or "Ask Codex" in s) and "/hooks" not in s:
                t._tmux("send-keys", "-t", t.sess, "/hooks")
                time.sleep(0.5)
                t._tmux("send-keys", "-t", t.sess, "Enter")
            time.sleep(1)
        t.shots.append(t.screen())
        t._tmux("send-keys", "-t", t.sess, "t")
        for _ in range(20):
            if "trusted_hash" in (w.home / ".codex/config.toml").read_text():
                break
            time.sleep(0.5)
        t.shots.append(t.screen())
        t._tmux("send-keys", "-t", t.sess, "Escape")
        time.sleep(1)
        t._tmux("send-keys", "-t", t.sess, "C-c")
        time.sleep(1)
        t._tmux("send-keys", "-t", t.sess, "C-c")
        w.save("trust/tui-screens.txt", "\n=====\n".join(t.shots))
    _stop_daemon(x, env)
    w.copy(w.home / ".codex/config.toml", "trust/config.trusted.toml")


def _codex_tui_message(w: World, x: str, env: dict[str, str]) -> None:
    """What the person sees in Codex's TUI when the plugin finds no vaultkeeper: the
    SessionStart hook's systemMessage, shown under the first prompt."""
    argv = [x, "--no-alt-screen", "--dangerously-bypass-hook-trust"]
    w.log.append("[codex-tui] " + " ".join(argv) + "  (typed: the prompt)")
    screen = ""
    with Tui(argv, env, w.proj, name="codexmsg") as t:
        typed = False
        for _ in range(60):
            time.sleep(1)
            screen = t.screen()
            if "vaultkeeper plugin:" in screen:
                break
            if "Use existing model" in screen:
                t._tmux("send-keys", "-t", t.sess, "Down", "Enter")
            elif "Ask Codex" in screen and not typed:
                t._tmux("send-keys", "-t", t.sess, PROMPT)
                time.sleep(0.5)
                t._tmux("send-keys", "-t", t.sess, "Enter")
                typed = True
        t._tmux("send-keys", "-t", t.sess, "C-c")
        time.sleep(0.5)
        t._tmux("send-keys", "-t", t.sess, "C-c")
    _stop_daemon(x, env)
    w.save("tui-screen.txt", screen)


def _stop_daemon(x: str, env: dict[str, str]) -> None:
    """Codex's TUI leaves an app-server daemon (and its pid loop) running from the HOME:
    stop it, then end, by pid, any process still running a program under that HOME."""
    subprocess.run([x, "app-server", "daemon", "stop"], env=env, capture_output=True,
                   stdin=subprocess.DEVNULL, timeout=60)  # fmt: skip
    home = env["HOME"] + "/"
    for proc in Path("/proc").iterdir():
        try:
            argv0 = (proc / "cmdline").read_bytes().split(b"\0")[0].decode()
        except (OSError, UnicodeDecodeError):
            continue
        if proc.name.isdigit() and argv0.startswith(home):
            with contextlib.suppress(OSError):
                os.kill(int(proc.name), 15)


def _wait_scan(w: World) -> None:
    """The session-end scan runs detached: wait (bounded) for its completion."""
    state = w.vault / "state" / "self-maintain.json"
    for _ in range(120):
        if state.exists() and '"lastCompleted": 0' not in state.read_text():
            return
        time.sleep(0.5)
    w.log.append("(no session-end scan report within 60 s)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--claude", type=Path, default=CLAUDE_BIN)
    ap.add_argument("--codex", type=Path, default=CODEX_BIN)
    ap.add_argument("--skip-claude", action="store_true")
    ap.add_argument("--skip-codex", action="store_true")
    ap.add_argument("--vaultkeeper", default=str(Path(sys.executable).parent / "vaultkeeper"))
    a = ap.parse_args()
    if not a.skip_claude:
        claude(a.claude, a.vaultkeeper)
    if not a.skip_codex:
        codex(a.codex, a.vaultkeeper)
    return 0


if __name__ == "__main__":
    sys.exit(main())
