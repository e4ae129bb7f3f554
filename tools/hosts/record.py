#!/usr/bin/env python3
"""Record real Claude Code and Codex transcripts, hook payloads and MCP traffic, offline.

    python tools/hosts/record.py [--claude-version X] [--codex-version Y] [--only NAME ...]

Each scenario runs the real host (installed with npm under /tmp, never globally) in a fresh
throw-away HOME under /tmp, against mock_server.py on 127.0.0.1, with
`vaultkeeper hooks install <host> --mcp` done in that HOME, a vault made by
`vaultkeeper init` holding sample_vault's pattern registry, the vaultkeeper MCP server
wrapped in mcp_tee.py, and dump_hook.py registered for the hook events worth seeing. What
the host wrote is copied to tests/fixtures/hosts/<host>-<version>/<scenario>/, with the
throw-away paths rewritten to placeholders (see PLACEHOLDERS); nothing else is changed.
See tools/hosts/README.md. Never part of CI: it installs the hosts.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
from mock_server import MockServer  # noqa: E402
from tui import Tui  # noqa: E402

DEFAULT_CLAUDE = "2.1.332"
DEFAULT_CODEX = "0.171.0"
NPM_PREFIX = Path("/tmp/hosts-npm")
FIXTURES = REPO / "tests" / "fixtures" / "hosts"
HOST_TIMEOUT = 150
BIG = 3000  # model request texts longer than this are trimmed in requests.jsonl

# Hook events to dump. Claude Code and Codex share the settings shape.
CLAUDE_DUMP_EVENTS = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "SessionEnd",
]
CODEX_DUMP_EVENTS = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Stop",
    "SessionEnd",
]
CONTEXT_TEXT = "VKCTX: extra context from a UserPromptSubmit hook"
PLAIN_CONTEXT_TEXT = "VKPLAIN: plain stdout from a UserPromptSubmit hook"
RECALL_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # planted: the hook masks it
RECALL_LESSONS = {
    "cart-rounding.md": "---\nname: cart-rounding\ndescription: Round cart totals half-even "
    "once at the end, never per line\ntype: memory\nstatus: active\n"
    "anchors: [src/billing/cart.py::round_cart]\n---\n\nRounding each line drifts by a cent.\n",
    "billing-decimal.md": "---\nname: billing-money-type\ndescription: Money in billing is "
    "Decimal, never float\ntype: memory\nstatus: active\nanchors: [src/billing]\n---\n\n"
    f"A float sum lost a cent in the invoice job; its log held the token {RECALL_TOKEN}.\n",
}
# the interactive run's second prompt names this one (its planted token masked too)
RECALL_TUI_LESSONS = {
    "invoice-retry.md": "---\nname: invoice-retry\ndescription: The invoice job retries keyed "
    "by invoice id, so a retry never bills twice\ntype: memory\nstatus: active\n---\n\n"
    f"A retry without the key billed a customer twice; the job's log held {RECALL_TOKEN}.\n",
}

PLACEHOLDERS = """\
/HOME        the throw-away HOME of the run (also $CODEX_HOME=/HOME/.codex)
-HOME        the same, as Claude Code sanitizes it into ~/.claude/projects/<name>
/REPO        the vaultkeeper checkout the recorder ran from (hooks/*.sh live there)
/VENV        the virtualenv prefix holding the vaultkeeper command
/TOOLS       tools/hosts of that checkout (mcp_tee.py)
127.0.0.1:PORT  the mock's port
"""


# --------------------------------------------------------------------------------------
# environment
# --------------------------------------------------------------------------------------
def sh(cmd: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, text=True, capture_output=True, **kw)


def ensure_host(pkg: str, version: str, prefix: Path) -> Path:
    """npm-install pkg@version under prefix (never globally); the bin path."""
    name = "claude" if "claude" in pkg else "codex"
    shared = NPM_PREFIX / "node_modules" / pkg / "package.json"
    if shared.exists() and json.loads(shared.read_text())["version"] == version:
        return NPM_PREFIX / "node_modules" / ".bin" / name
    binp = prefix / "node_modules" / ".bin" / name
    pj = prefix / "node_modules" / pkg / "package.json"
    if not (binp.exists() and pj.exists() and json.loads(pj.read_text())["version"] == version):
        prefix.mkdir(parents=True, exist_ok=True)
        r = sh(["npm", "install", "--no-save", "--prefix", str(prefix), f"{pkg}@{version}"])
        if r.returncode:
            sys.exit(f"npm install {pkg}@{version} failed:\n{r.stderr}")
    return binp


class Run:
    """One scenario's throw-away world: HOME, project, vault, mock, fixture folder."""

    def __init__(self, host: str, scenario: str, out: Path, vk: str):
        self.host = host
        self.scenario = scenario
        self.home = Path(tempfile.mkdtemp(prefix="vkhosts-", dir="/tmp"))
        self.proj = self.home / "proj"
        self.proj.mkdir()
        self.vault = self.home / "vault"
        self.out = out / scenario
        self.vk = vk
        self.reqlog = self.home / ".vkhooks" / "requests.raw.jsonl"
        self.reqlog.parent.mkdir(parents=True)
        (self.home / ".vkhooks" / "out").mkdir()
        shutil.copy(HERE / "dump_hook.py", self.home / ".vkhooks" / "dump_hook.py")
        self.mock: MockServer | None = None
        self.notes: list[str] = []
        self.cmdlog: list[str] = []
        for d in (".config", ".cache", ".local/share", ".local/state"):
            (self.home / d).mkdir(parents=True, exist_ok=True)

    # environment shared by both hosts: nothing of the real HOME, only loopback;
    # ``with_vk`` False: no vaultkeeper on PATH, ``vault_env`` False: no $VAULTKEEPER_VAULT
    def env(self, with_vk: bool = True, vault_env: bool = True, **extra: str) -> dict[str, str]:
        e = {
            "PATH": f"{Path(self.vk).parent}:" * with_vk + "/usr/local/bin:/usr/bin:/bin",
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_DATA_HOME": str(self.home / ".local/share"),
            "XDG_STATE_HOME": str(self.home / ".local/state"),
            "TMPDIR": str(self.home / "tmp"),
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
            **({"VAULTKEEPER_VAULT": str(self.vault)} if vault_env else {}),
            # anything not for the mock goes to a dead proxy (defence in depth)
            "HTTPS_PROXY": "http://127.0.0.1:9",
            "HTTP_PROXY": "http://127.0.0.1:9",
            "ALL_PROXY": "http://127.0.0.1:9",
            "https_proxy": "http://127.0.0.1:9",
            "http_proxy": "http://127.0.0.1:9",
        }
        (self.home / "tmp").mkdir(exist_ok=True)
        e.update(extra)
        return e

    def start_mock(self, rules: list[dict[str, Any]]) -> int:
        self.mock = MockServer(rules, self.reqlog, 0, max_requests=300, idle_seconds=400).start()
        return self.mock.port

    def stop_mock(self) -> None:
        if self.mock:
            self.mock.stop()

    def make_vault(self) -> None:
        r = sh([self.vk, "init", str(self.vault)], env=self.env())
        assert r.returncode == 0, r.stderr
        shutil.copy(
            REPO / "sample_vault" / "patterns" / "registry.md",
            self.vault / "patterns" / "registry.md",
        )
        (self.proj / "notes.md").write_text(
            "# Notes\n\nCI config: see [[patterns/registry#yaml-anchor-templates]] for the job"
            " bodies.\n"
        )

    def vk_install(self, target: str) -> str:
        r = sh(
            [self.vk, "--vault", str(self.vault), "hooks", "install", target, "--mcp"],
            env=self.env(),
        )
        assert r.returncode == 0, r.stdout + r.stderr
        return r.stdout

    def recall_setup(self, target: str, extra: dict[str, str] | None = None) -> None:
        """Two lessons for the point-of-use recall (one the prompt names, one anchored to the
        folder of the file the model then reads, with a planted token to be masked) and any
        ``extra``, the recall hooks installed (`hooks install TARGET --recall`) and the
        table built."""
        memory = self.vault / "projects" / "proj" / "memory"
        memory.mkdir(parents=True, exist_ok=True)
        for name, text in {**RECALL_LESSONS, **(extra or {})}.items():
            (memory / name).write_text(text)
        (self.proj / ".git").mkdir()
        (self.proj / "src" / "billing").mkdir(parents=True)
        (self.proj / "src" / "billing" / "cart.py").write_text(
            "def round_cart(lines):\n    return sum(lines)\n"
        )
        r = sh(
            [self.vk, "--vault", str(self.vault), "hooks", "install", target, "--recall"],
            env=self.env(),
        )
        assert r.returncode == 0, r.stdout + r.stderr
        self.install_recall_out = r.stdout
        r = sh([self.vk, "--vault", str(self.vault), "scan", "--force"], env=self.env())
        assert r.returncode in (0, 1), r.stdout + r.stderr

    def mcp_wrapped(self) -> tuple[str, list[str]]:
        """The MCP server command, wrapped in the tee."""
        log = self.home / ".vkhooks" / "mcp-traffic.jsonl"
        return sys.executable, [
            str(HERE / "mcp_tee.py"),
            str(log),
            "--",
            self.vk,
            "--vault",
            str(self.vault),
            "mcp",
        ]

    def tools_listed(self) -> list[str]:
        """The mock's wait_for: the MCP server's answer to tools/list in the traffic log."""
        return [str(self.home / ".vkhooks" / "mcp-traffic.jsonl"), '"tools": [{']

    def dump_cmd(self, event: str, context: str | None = None) -> str:
        c = f'python3 "$HOME/.vkhooks/dump_hook.py" {event}'
        if context:
            c += f" --context '{context}'"
        return c

    def run(
        self,
        argv: list[str],
        env: dict[str, str],
        label: str,
        stdin: str | None = None,
        timeout: int = HOST_TIMEOUT,
        cwd: Path | None = None,
    ) -> subprocess.CompletedProcess[str]:  # noqa: E501
        self.cmdlog.append(f"[{label}] " + " ".join(argv))
        t0 = time.time()
        try:
            r = subprocess.run(
                argv,
                env=env,
                cwd=cwd or self.proj,
                text=True,
                capture_output=True,
                input=stdin if stdin is not None else "",
                timeout=timeout,
            )
        except subprocess.TimeoutExpired as exc:
            r = subprocess.CompletedProcess(argv, 124, _s(exc.stdout), _s(exc.stderr))
        self.cmdlog.append(f"[{label}] exit {r.returncode} after {time.time() - t0:.1f}s")
        self.save_text(f"{label}.stdout.txt", r.stdout)
        if r.stderr.strip():
            self.save_text(f"{label}.stderr.txt", r.stderr)
        return r

    # ----------------------------------------------------------------------------------
    # copying out, with placeholders
    # ----------------------------------------------------------------------------------
    def rewrite(self, text: str) -> str:
        home = str(self.home)
        text = text.replace(str(HERE), "/TOOLS")
        text = text.replace(str(REPO), "/REPO")
        venv = str(Path(self.vk).parent.parent)
        text = text.replace(venv, "/VENV")
        text = text.replace(home, "/HOME")
        text = text.replace(re.sub(r"[^A-Za-z0-9]", "-", home), "-HOME")
        text = text.replace(sys.executable, "/VENV/bin/python")
        if self.mock:
            text = text.replace(f"127.0.0.1:{self.mock.port}", "127.0.0.1:PORT")
        return text

    def save_text(self, rel: str, text: str) -> None:
        p = self.out / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(self.rewrite(text), encoding="utf-8")

    def copy(self, src: Path, rel: str) -> None:
        if not src.exists():
            return
        if src.is_dir():
            for f in sorted(src.rglob("*")):  # a host's SQLite files are not its record
                if f.is_file() and not f.name.endswith((".sqlite", "-wal", "-shm")):
                    self.copy(f, f"{rel}/{self.rewrite(str(f.relative_to(src)))}")
            return
        data = src.read_bytes()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            (self.out / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.out / rel).write_bytes(data)
            return
        self.save_text(rel, text)

    def finish(self) -> None:
        self.stop_mock()
        time.sleep(0.5)
        hooks = sorted((self.home / ".vkhooks" / "out").glob("*.json"))
        for i, f in enumerate(hooks, 1):
            event = f.stem.split("-", 1)[1]
            self.copy(f, f"hooks/{i:02d}-{event}.json")
        self.copy(self.home / ".vkhooks" / "mcp-traffic.jsonl", "mcp-traffic.jsonl")
        if self.reqlog.exists():
            self.save_text("model-requests.jsonl", trim_requests(self.reqlog.read_text()))
        self.save_text(
            "commands.txt",
            "\n".join(self.cmdlog)
            + "\n"
            + ("\nNOTES\n" + "\n".join(self.notes) + "\n" if self.notes else ""),
        )
        if os.environ.get("VKHOSTS_KEEP"):
            print(f"  kept {self.home}")
        else:
            shutil.rmtree(self.home, ignore_errors=True)


def _s(b: Any) -> str:
    if b is None:
        return ""
    return b.decode("utf-8", "replace") if isinstance(b, bytes) else b


# Claude Code merges the first turn's system-role attachments (SessionStart output, the
# skill list, a UserPromptSubmit hook's context or stdout, the date) into one long
# message: a plain cut at BIG hid the hook's text there, so it was once taken for not
# sent at all. What a hook added is kept whole, from the first such part after the start.
# The same for the list of deferred tools Claude Code sends on each turn (MCP tools
# included): a test reads the first turn's list.
HOOK_OUTPUT = re.compile(
    r"\S+ hook (?:additional context|success): |The following deferred tools are now available"
)


def _trim(v: Any, depth: int = 0) -> Any:
    if isinstance(v, str):
        if len(v) <= BIG:
            return v
        hook = next((m.start() for m in HOOK_OUTPUT.finditer(v) if m.start() > 0), None)
        if hook is None:
            return v[:BIG] + f"... [trimmed: {len(v)} chars in all]"
        if hook <= BIG:
            return v
        cut = f"... [trimmed: {len(v)} chars in all; kept from the hook output on]\n\n"
        return v[:BIG] + cut + v[hook:]
    if isinstance(v, list):
        return [_trim(x, depth + 1) for x in v]
    if isinstance(v, dict):
        return {k: _trim(x, depth + 1) for k, x in v.items()}
    return v


def _tool_summary(tools: list[Any]) -> list[Any]:
    out: list[Any] = []
    for t in tools:
        if not isinstance(t, dict):
            continue
        if t.get("type") == "namespace":
            out.append(
                {
                    "type": "namespace",
                    "name": t.get("name"),
                    "tools": _tool_summary(t.get("tools") or []),
                }
            )
        else:
            name = t.get("name") or t.get("type")
            keep = any(k in str(name) for k in ("mcp", "Skill", "Agent", "spawn", "ToolSearch"))
            if keep:
                out.append({k: t[k] for k in t if k != "description"})
            else:
                out.append(name)
    return out


def trim_requests(raw: str) -> str:
    """The mock's request log with the big system prompts and tool catalogues cut down."""
    lines = []
    for line in raw.splitlines():
        rec = json.loads(line)
        body = rec.get("body")
        if isinstance(body, dict):
            if "system" in body:
                body["system"] = _trim(body["system"])
            if "instructions" in body:
                body["instructions"] = _trim(body["instructions"])
            if "tools" in body:
                body["tools"] = _tool_summary(body["tools"])
            for key in ("messages", "input"):
                if key in body:
                    body[key] = _trim(body[key])
            if "tool_search_output" in json.dumps(body.get("input", "")):
                for it in body.get("input", []):
                    if isinstance(it, dict) and it.get("type") == "tool_search_output":
                        it["tools"] = _tool_summary(it.get("tools") or [])
        lines.append(json.dumps(rec))
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------
# Claude Code
# --------------------------------------------------------------------------------------
class Claude:
    def __init__(self, binp: Path, version: str, out: Path, vk: str):
        self.bin = str(binp)
        self.version = version
        self.out = out
        self.vk = vk

    def new(self, scenario: str, extra_hooks: dict[str, list[dict[str, Any]]] | None = None) -> Run:
        r = Run("claude-code", scenario, self.out, self.vk)
        r.make_vault()
        r.install_out = r.vk_install("claude-code")
        # the MCP server, wrapped in the tee
        cj = r.home / ".claude.json"
        conf = json.loads(cj.read_text())
        cmd, args = r.mcp_wrapped()
        conf["mcpServers"]["vaultkeeper"]["command"] = cmd
        conf["mcpServers"]["vaultkeeper"]["args"] = args
        # no onboarding screens, the project trusted
        conf.setdefault("projects", {})[str(r.proj)] = {"hasTrustDialogAccepted": True}
        conf["hasCompletedOnboarding"] = True
        cj.write_text(json.dumps(conf, indent=2))
        st = r.home / ".claude" / "settings.json"
        settings = json.loads(st.read_text())
        for ev in CLAUDE_DUMP_EVENTS:
            settings["hooks"].setdefault(ev, []).append(
                {"hooks": [{"type": "command", "command": r.dump_cmd(ev)}]}
            )
        for ev, groups in (extra_hooks or {}).items():
            settings["hooks"].setdefault(ev, []).extend(groups)
        st.write_text(json.dumps(settings, indent=2))
        r.copy(st, "config/settings.json")
        r.copy(cj, "config/claude.json")
        return r

    def env(self, r: Run, port: int) -> dict[str, str]:
        return r.env(
            ANTHROPIC_BASE_URL=f"http://127.0.0.1:{port}",
            ANTHROPIC_API_KEY="sk-ant-dummy-offline",
            DISABLE_TELEMETRY="1",
            DISABLE_ERROR_REPORTING="1",
            DISABLE_AUTOUPDATER="1",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY="1",
        )

    def p(
        self, r: Run, port: int, prompt: str, label: str, *flags: str, stdin: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        argv = [self.bin, "-p", *flags]
        if prompt:
            argv.append(prompt)
        return r.run(argv, self.env(r, port), label, stdin=stdin)

    def collect(self, r: Run) -> None:
        r.copy(r.home / ".claude" / "projects", "claude-projects")
        r.copy(r.home / ".claude" / "skills", "claude-skills")
        r.finish()

    ALLOWED = ["--allowedTools=Read,Write,Bash,Skill,Agent,ToolSearch,mcp__vaultkeeper"]

    # 1 ------------------------------------------------------------------------------
    def plain(self) -> None:
        r = self.new("plain")
        rules = [
            {
                "name": "plain-1",
                "when": "VKSCN:plain",
                "reply": [
                    {"text": "Reading the notes first."},
                    {
                        "tool": "Read",
                        "id": "toolu_vk_plain_1",
                        "input": {"file_path": str(r.proj / "notes.md")},
                    },
                ],
            },
            {
                "name": "plain-2",
                "when": "toolu_vk_plain_1",
                "reply": [
                    {"text": "Done. I injected `now` as in [[patterns/registry#pin-test-clock]]."}
                ],
            },
        ]
        port = r.start_mock(rules)
        self.p(
            r,
            port,
            "VKSCN:plain Fix the date test; the person cites "
            "[[patterns/registry#grep-the-config-value]] here (must not count).",
            "claude-p",
            *self.ALLOWED,
        )
        self.collect(r)

    # 2 ------------------------------------------------------------------------------
    def skill(self) -> None:
        r = self.new("skill")
        sk = r.home / ".claude" / "skills" / "pin-test-clock"
        sk.mkdir(parents=True)
        (sk / "SKILL.md").write_text(
            "---\nname: pin-test-clock\ndescription: Inject now into date logic instead of "
            "sleeping in tests.\n---\n\nInject `now` into date logic; never sleep in tests.\n"
        )
        rules = [
            {
                "name": "skill-1",
                "when": "VKSCN:skill",
                "reply": [
                    {
                        "tool": "Skill",
                        "id": "toolu_vk_skill_1",
                        "input": {"skill": "pin-test-clock"},
                    }
                ],
            },
            {
                "name": "skill-2",
                "when": "toolu_vk_skill_1",
                "reply": [{"text": "Applied the pin-test-clock skill."}],
            },
        ]
        port = r.start_mock(rules)
        self.p(r, port, "VKSCN:skill make the clock test deterministic", "claude-p", *self.ALLOWED)
        self.collect(r)

    # 3 ------------------------------------------------------------------------------
    def mcp(self) -> None:
        r = self.new("mcp")
        rules = [
            {
                "name": "mcp-0",
                "when": "VKSCN:mcp",
                "reply": [
                    {
                        "tool": "ToolSearch",
                        "id": "toolu_vk_mcp_0",
                        "input": {
                            "query": "select:mcp__vaultkeeper__recall,mcp__vaultkeeper__read,"
                            "mcp__vaultkeeper__cite,mcp__vaultkeeper__apply_prune"
                        },
                    }
                ],
            },
            {
                "name": "mcp-1",
                "when": "toolu_vk_mcp_0",
                "reply": [{"tool": "mcp:recall", "id": "toolu_vk_mcp_1", "input": {}}],
            },
            {
                "name": "mcp-2",
                "when": "toolu_vk_mcp_1",
                "reply": [
                    {
                        "tool": "mcp:read",
                        "id": "toolu_vk_mcp_2",
                        "input": {"path": "patterns/registry.md"},
                    }
                ],
            },  # noqa: E501
            {
                "name": "mcp-3",
                "when": "toolu_vk_mcp_2",
                "reply": [
                    {
                        "tool": "mcp:cite",
                        "id": "toolu_vk_mcp_3",
                        "input": {"name": "pin-test-clock", "evidence": "tests/test_clock.py:12"},
                    }
                ],
            },
            {
                "name": "mcp-4",
                "when": "toolu_vk_mcp_3",
                "reply": [
                    {
                        "tool": "mcp:apply_prune",
                        "id": "toolu_vk_mcp_4",
                        "input": {"target": "yaml-anchor-templates"},
                    }
                ],
            },
            {
                "name": "mcp-5",
                "when": "toolu_vk_mcp_4",
                "reply": [{"text": "Cited [[patterns/registry#pin-test-clock]]; asked to prune."}],
            },
        ]
        port = r.start_mock(rules)
        self.p(r, port, "VKSCN:mcp use the vault", "claude-p", *self.ALLOWED)
        self.collect(r)

    # 4 ------------------------------------------------------------------------------
    def subagent(self) -> None:
        r = self.new("subagent")
        rules = [
            {
                "name": "sub-child",
                "when": "VKSUB:child",
                "reply": [
                    {
                        "text": "Child: bisected first, per [[patterns/registry#bisect-before-reading-diffs]]."  # noqa: E501
                    }
                ],
            },  # noqa: E501
            {
                "name": "sub-1",
                "when": "VKSCN:subagent",
                "reply": [
                    {
                        "tool": "Agent",
                        "id": "toolu_vk_sub_1",
                        "input": {
                            "description": "Find the regression",
                            "subagent_type": "general-purpose",
                            "prompt": "VKSUB:child find the commit that broke the date test",
                        },
                    }
                ],
            },
            {
                "name": "sub-2",
                "when": "toolu_vk_sub_1",
                "reply": [{"text": "The sub-agent found it."}],
            },
        ]
        port = r.start_mock(rules)
        self.p(r, port, "VKSCN:subagent find the regression", "claude-p", *self.ALLOWED)
        self.collect(r)

    # 5 ------------------------------------------------------------------------------
    def resume_fork(self) -> None:
        r = self.new("resume-fork")
        rules = [
            {
                "name": "r1",
                "when": "VKSCN:first",
                "reply": [{"text": "First turn, per [[patterns/registry#pin-test-clock]]."}],
            },
            {
                "name": "r2",
                "when": "VKSCN:resumed",
                "reply": [
                    {"text": "Resumed turn, per [[patterns/registry#grep-the-config-value]]."}
                ],
            },
            {
                "name": "r3",
                "when": "VKSCN:forked",
                "reply": [
                    {"text": "Forked turn, per [[patterns/registry#bisect-before-reading-diffs]]."}
                ],
            },
        ]
        port = r.start_mock(rules)
        sid = str(uuid.uuid4())
        r.notes.append(f"first session id (given with --session-id): {sid}")
        self.p(r, port, "VKSCN:first", "1-first", "--session-id", sid)
        self.p(r, port, "VKSCN:resumed", "2-resume", "--resume", sid)
        self.p(r, port, "VKSCN:forked", "3-fork", "--resume", sid, "--fork-session")
        self.collect(r)

    # 6 ------------------------------------------------------------------------------
    def stream_json(self) -> None:
        r = self.new("stream-json")
        rules = [
            {
                "name": "sj",
                "when": "VKSCN:stream",
                "reply": [{"text": "Continuing; as before, [[patterns/registry#pin-test-clock]]."}],
            }
        ]
        port = r.start_mock(rules)
        lines = [
            {"type": "user", "message": {"role": "user", "content": "VKHIST: earlier question"}},
            {
                "type": "assistant",
                "message": {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "text",
                            "text": "Injected history: I used "
                            "[[patterns/registry#bisect-before-reading-diffs]] (must not count).",
                        }
                    ],
                },
            },
            {"type": "user", "message": {"role": "user", "content": "VKSCN:stream go on"}},
        ]
        stdin = "".join(json.dumps(x) + "\n" for x in lines)
        r.save_text("stdin.jsonl", stdin)
        self.p(
            r,
            port,
            "",
            "claude-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
            stdin=stdin,
        )
        self.collect(r)

    # 7 ------------------------------------------------------------------------------
    def mcp_list(self) -> None:
        r = self.new("mcp-list")
        port = r.start_mock([])
        r.run([self.bin, "mcp", "list"], self.env(r, port), "claude-mcp-list")
        self.collect(r)

    # 8 ------------------------------------------------------------------------------
    def auto_memory(self) -> None:
        r = self.new("auto-memory")
        san = re.sub(r"[^A-Za-z0-9]", "-", str(r.proj))
        mem = r.home / ".claude" / "projects" / san / "memory"
        rules = [
            {
                "name": "m1",
                "when": "VKSCN:remember",
                "reply": [
                    {
                        "tool": "Write",
                        "id": "toolu_vk_mem_1",
                        "input": {
                            "file_path": str(mem / "pin-clock.md"),
                            "content": "---\nname: pin-clock\ndescription: tests pin the clock\n"
                            "type: feedback\n---\n\nInject `now`; see "
                            "[[patterns/registry#pin-test-clock]].\n",
                        },
                    }
                ],
            },
            {
                "name": "m2",
                "when": "toolu_vk_mem_1",
                "reply": [
                    {
                        "tool": "Write",
                        "id": "toolu_vk_mem_2",
                        "input": {
                            "file_path": str(mem / "MEMORY.md"),
                            "content": "- [pin-clock](pin-clock.md) - tests pin the clock\n",
                        },
                    }
                ],
            },
            {"name": "m3", "when": "toolu_vk_mem_2", "reply": [{"text": "Remembered."}]},
            {
                "name": "m4",
                "when": "VKSCN:recall",
                "reply": [
                    {
                        "text": '<cc-memory filenames="pin-clock.md">tests pin the clock</cc-memory> '  # noqa: E501
                        "Checking the memory file."
                    },
                    {
                        "tool": "Read",
                        "id": "toolu_vk_mem_4",
                        "input": {"file_path": str(mem / "pin-clock.md")},
                    },
                ],
            },
            {"name": "m5", "when": "toolu_vk_mem_4", "reply": [{"text": "Pinned the clock."}]},
        ]
        port = r.start_mock(rules)
        self.p(r, port, "VKSCN:remember that tests pin the clock", "1-write-memory", *self.ALLOWED)
        self.p(r, port, "VKSCN:recall fix the clock test", "2-use-memory", *self.ALLOWED)
        self.collect(r)

    # 9 ------------------------------------------------------------------------------
    def hook_context(self) -> None:
        # the two forms the hooks page allows for UserPromptSubmit: JSON additionalContext
        # (dump_hook.py --context) and plain stdout on exit 0
        r = self.new(
            "hook-context",
            extra_hooks={
                "UserPromptSubmit": [
                    {
                        "hooks": [
                            {
                                "type": "command",
                                "command": r_dump_placeholder("UserPromptSubmit", CONTEXT_TEXT),
                            }
                        ]
                    },
                    {"hooks": [{"type": "command", "command": f"echo '{PLAIN_CONTEXT_TEXT}'"}]},
                ]
            },
        )
        rules = [
            {
                "name": "c1",
                "when": "VKSCN:context",
                "reply": [
                    {
                        "tool": "Bash",
                        "id": "toolu_vk_ctx_1",
                        "input": {"command": "cat notes.md", "description": "Show notes"},
                    }
                ],
            },
            {"name": "c2", "when": "toolu_vk_ctx_1", "reply": [{"text": "Seen the context."}]},
        ]
        port = r.start_mock(rules)
        self.p(r, port, "VKSCN:context hello", "claude-p", *self.ALLOWED)
        self.collect(r)

    # 10 -----------------------------------------------------------------------------
    def recall(self) -> None:
        """The point-of-use recall: the prompt's lesson, then the file's, in the requests."""
        r = self.new("recall")
        r.recall_setup("claude-code")
        rules = [
            {
                "name": "r1",
                "when": "VKSCN:recall",
                "reply": [
                    {
                        "tool": "Read",
                        "id": "toolu_vk_recall_1",
                        "input": {"file_path": str(r.proj / "src" / "billing" / "cart.py")},
                    }
                ],
            },
            {"name": "r2", "when": "toolu_vk_recall_1", "reply": [{"text": "Rounded once."}]},
        ]
        port = r.start_mock(rules)
        self.p(r, port, "VKSCN:recall fix the cart totals rounding", "claude-p", *self.ALLOWED)
        r.copy(r.vault / "state" / "uses.jsonl", "vault-uses.jsonl")
        r.copy(r.vault / "state" / "hooks.log", "vault-hook.log")
        self.collect(r)

    # 11 -----------------------------------------------------------------------------
    def recall_interactive(self) -> None:
        """The recall in the interactive TUI (tmux): two prompts in one session, each naming
        a lesson, the first followed by a Read; then /exit."""
        r = self.new("recall-interactive")
        r.recall_setup("claude-code", RECALL_TUI_LESSONS)
        # the dialog "Detected a custom API key ... use this API key?" is answered ahead,
        # as the TUI itself records a yes: the key's last 20 characters
        cj = r.home / ".claude.json"
        conf = json.loads(cj.read_text())
        key = self.env(r, 0)["ANTHROPIC_API_KEY"]
        conf["customApiKeyResponses"] = {"approved": [key[-20:]], "rejected": []}
        cj.write_text(json.dumps(conf, indent=2))
        r.copy(cj, "config/claude.json")
        rules = [
            {
                "name": "t1",
                "when": "VKSCN:tui1",
                "reply": [
                    {
                        "tool": "Read",
                        "id": "toolu_vk_tui_1",
                        "input": {"file_path": str(r.proj / "src" / "billing" / "cart.py")},
                    }
                ],
            },
            {"name": "t2", "when": "toolu_vk_tui_1", "reply": [{"text": "Rounded once."}]},
            {
                "name": "t3",
                "when": "VKSCN:tui2",
                "reply": [{"text": "Retries keyed by invoice id."}],
            },
        ]
        port = r.start_mock(rules)
        out = r.home / ".vkhooks" / "out"

        def fired(event: str, n: int) -> Callable[[], bool]:
            return lambda: len(list(out.glob(f"*-{event}.json"))) >= n

        argv = [self.bin, *self.ALLOWED]
        r.cmdlog.append("[tui] " + " ".join(argv) + "   (in tmux, 160x50)")
        t0 = time.time()
        with Tui(argv, self.env(r, port), r.proj, "claude") as tui:
            try:
                tui.wait(fired("SessionStart", 1), "SessionStart")
                tui.wait_screen("shift+tab to cycle", "for shortcuts")
                tui.shot("started")
                for n, prompt, reply in (
                    (1, "VKSCN:tui1 fix the cart totals rounding", "Rounded once."),
                    (
                        2,
                        "VKSCN:tui2 make the invoice job retry safely",
                        "Retries keyed by invoice id.",
                    ),
                ):
                    tui.type_line(prompt)
                    tui.wait(fired("Stop", n), f"turn {n}'s Stop hook")
                    tui.wait_screen(reply)
                    tui.shot(f"turn {n} done")
                tui.type_line("/exit")
                tui.wait(fired("SessionEnd", 1), "SessionEnd")
                tui.wait(lambda: not tui.alive(), "the TUI to exit")
            finally:
                r.save_text("tui-screens.txt", "\n".join(tui.shots))
        r.cmdlog.append(f"[tui] exited after {time.time() - t0:.1f}s")
        r.copy(r.vault / "state" / "uses.jsonl", "vault-uses.jsonl")
        r.copy(r.vault / "state" / "hooks.log", "vault-hook.log")
        self.collect(r)


def r_dump_placeholder(event: str, context: str | None = None) -> str:
    c = f'python3 "$HOME/.vkhooks/dump_hook.py" {event}-ctx'
    if context:
        c = f"python3 \"$HOME/.vkhooks/dump_hook.py\" {event} --context '{context}'"
    return c


# --------------------------------------------------------------------------------------
# Codex
# --------------------------------------------------------------------------------------
class Codex:
    MCP_TOOLS = ["recall", "read", "cite", "apply_prune"]

    def __init__(self, binp: Path, version: str, out: Path, vk: str):
        self.bin = str(binp)
        self.version = version
        self.out = out
        self.vk = vk

    def new(
        self,
        scenario: str,
        port_holder: dict[str, int],
        approve: bool = True,
        context_hook: bool = False,
        sdk_alone: bool = False,
    ) -> Run:
        r = Run("codex", scenario, self.out, self.vk)
        r.make_vault()
        port = r.start_mock([])
        port_holder["port"] = port
        ch = r.home / ".codex"
        ch.mkdir()
        (ch / "config.toml").write_text(
            'model = "gpt-5.5"\nmodel_provider = "mock"\ncheck_for_update_on_startup = false\n\n'
            "[model_providers.mock]\n"
            'name = "mock"\n'
            f'base_url = "http://127.0.0.1:{port}/v1"\n'
            'wire_api = "responses"\n'
            'env_key = "OPENAI_API_KEY"\n'
            "request_max_retries = 0\nstream_max_retries = 0\n"
            f'\n[projects."{r.proj}"]\ntrust_level = "trusted"\n'
            "\n[analytics]\nenabled = false\n"
            "\n[features]\nplugins = false\nremote_plugin = false\napps = false\n"
        )
        r.install_out = r.vk_install("codex")
        # wrap the MCP server in the tee
        cmd, args = r.mcp_wrapped()
        text = (ch / "config.toml").read_text()
        block = (
            "[mcp_servers.vaultkeeper]\ncommand = "
            + json.dumps(cmd)
            + "\nargs = "
            + json.dumps(args)
            + "\n"
        )
        if sdk_alone:  # the server without its front (start.py), to compare
            block += 'env = { VAULTKEEPER_MCP_PLAIN = "1" }\n'
        text = re.sub(r"\[mcp_servers\.vaultkeeper\]\ncommand = .*\nargs = .*\n", block, text)
        # `hooks install codex --mcp` approves the tools an agent may run alone; the
        # scenarios that call apply_prune approve it too, and an unapproved run takes
        # every approval out again
        approved = set(re.findall(r"^\[mcp_servers\.vaultkeeper\.tools\.(\w+)\]", text, re.M))
        if approve:
            for t in self.MCP_TOOLS:
                if t not in approved:
                    text += f'\n[mcp_servers.vaultkeeper.tools.{t}]\napproval_mode = "approve"\n'
        else:
            text = re.sub(
                r"\n*\[mcp_servers\.vaultkeeper\.tools\.\w+\]\n(?:[^\[\n].*(?:\n|$))*", "\n", text
            )
            assert "mcp_servers.vaultkeeper.tools." not in text, text
        (ch / "config.toml").write_text(text)
        hj = ch / "hooks.json"
        hooks = json.loads(hj.read_text())
        for ev in CODEX_DUMP_EVENTS:
            hooks["hooks"].setdefault(ev, []).append(
                {"hooks": [{"type": "command", "command": r.dump_cmd(ev)}]}
            )
        if context_hook:
            hooks["hooks"]["UserPromptSubmit"].append(
                {
                    "hooks": [
                        {"type": "command", "command": r.dump_cmd("UserPromptSubmit", CONTEXT_TEXT)}
                    ]
                }
            )
            hooks["hooks"]["PreToolUse"].append(
                {
                    "hooks": [
                        {
                            "type": "command",
                            "command": r.dump_cmd("PreToolUse", CONTEXT_TEXT + " (PreToolUse)"),
                        }
                    ]
                }
            )
        hj.write_text(json.dumps(hooks, indent=2))
        r.copy(ch / "config.toml", "config/config.toml")
        r.copy(hj, "config/hooks.json")
        return r

    def env(self, r: Run) -> dict[str, str]:
        return r.env(
            CODEX_HOME=str(r.home / ".codex"), OPENAI_API_KEY="sk-dummy-offline", RUST_LOG="warn"
        )

    def exec(
        self, r: Run, prompt: str, label: str, *flags: str, bypass_trust: bool = True
    ) -> subprocess.CompletedProcess[str]:
        argv = [self.bin, "exec", "--skip-git-repo-check"]
        if bypass_trust:
            argv.append("--dangerously-bypass-hook-trust")
        argv += [*flags, prompt]
        return r.run(argv, self.env(r), label)

    def collect(self, r: Run) -> None:
        r.copy(r.home / ".codex" / "sessions", "codex-sessions")
        r.copy(r.home / ".codex" / "config.toml", "config/config.after.toml")
        r.finish()

    # 1 ------------------------------------------------------------------------------
    def plain(self) -> None:
        ph: dict[str, int] = {}
        r = self.new("plain", ph)
        assert r.mock
        r.mock.set_rules(
            [
                {
                    "name": "plain-1",
                    "when": "VKSCN:plain",
                    "reply": [
                        {"text": "Reading the notes first."},
                        {
                            "tool": "exec_command",
                            "id": "call_vk_plain_1",
                            "input": {"cmd": "cat notes.md", "workdir": str(r.proj)},
                        },
                    ],
                },
                {
                    "name": "plain-2",
                    "when": "call_vk_plain_1",
                    "reply": [
                        {
                            "text": "Done. I injected `now` as in [[patterns/registry#pin-test-clock]]."  # noqa: E501
                        }
                    ],
                },
            ]
        )
        self.exec(
            r,
            "VKSCN:plain Fix the date test; the person cites "
            "[[patterns/registry#grep-the-config-value]] here (must not count).",
            "codex-exec",
        )
        self.collect(r)

    # 3 ------------------------------------------------------------------------------
    def mcp(self, scenario: str = "mcp", sdk_alone: bool = False) -> None:
        ph: dict[str, int] = {}
        r = self.new(scenario, ph, sdk_alone=sdk_alone)
        assert r.mock
        r.mock.set_rules(
            [
                {
                    "name": "mcp-0",
                    "when": "VKSCN:mcp",
                    "wait_for": r.tools_listed(),
                    "reply": [
                        {
                            "tool_search": "vaultkeeper recall read cite apply_prune",
                            "id": "call_vk_mcp_0",
                        }
                    ],
                },  # noqa: E501
                {
                    "name": "mcp-1",
                    "when": "call_vk_mcp_0",
                    "reply": [{"tool": "mcp:recall", "id": "call_vk_mcp_1", "input": {}}],
                },
                {
                    "name": "mcp-2",
                    "when": "call_vk_mcp_1",
                    "reply": [
                        {
                            "tool": "mcp:read",
                            "id": "call_vk_mcp_2",
                            "input": {"path": "patterns/registry.md"},
                        }
                    ],
                },  # noqa: E501
                {
                    "name": "mcp-3",
                    "when": "call_vk_mcp_2",
                    "reply": [
                        {
                            "tool": "mcp:cite",
                            "id": "call_vk_mcp_3",
                            "input": {
                                "name": "pin-test-clock",
                                "evidence": "tests/test_clock.py:12",
                            },
                        }
                    ],
                },
                {
                    "name": "mcp-4",
                    "when": "call_vk_mcp_3",
                    "reply": [
                        {
                            "tool": "mcp:apply_prune",
                            "id": "call_vk_mcp_4",
                            "input": {"target": "yaml-anchor-templates"},
                        }
                    ],
                },
                {
                    "name": "mcp-5",
                    "when": "call_vk_mcp_4",
                    "reply": [
                        {"text": "Cited [[patterns/registry#pin-test-clock]]; asked to prune."}
                    ],
                },
            ]
        )
        self.exec(r, "VKSCN:mcp use the vault", "codex-exec")
        self.collect(r)

    def mcp_sdk_alone(self) -> None:
        """The same with the server's front off (VAULTKEEPER_MCP_PLAIN=1 in the server's env):
        the SDK alone answers initialize, after its import."""
        self.mcp("mcp-sdk-alone", sdk_alone=True)

    def mcp_unapproved(self) -> None:
        ph: dict[str, int] = {}
        r = self.new("mcp-unapproved", ph, approve=False)
        assert r.mock
        r.mock.set_rules(
            [
                {
                    "name": "u-0",
                    "when": "VKSCN:mcp",
                    "wait_for": r.tools_listed(),
                    "reply": [{"tool_search": "vaultkeeper cite", "id": "call_vk_u_0"}],
                },
                {
                    "name": "u-1",
                    "when": "call_vk_u_0",
                    "reply": [
                        {
                            "tool": "mcp:cite",
                            "id": "call_vk_u_1",
                            "input": {
                                "name": "pin-test-clock",
                                "evidence": "tests/test_clock.py:12",
                            },
                        }
                    ],
                },
                {"name": "u-2", "when": "call_vk_u_1", "reply": [{"text": "Tried to cite."}]},
            ]
        )
        self.exec(r, "VKSCN:mcp cite without approval config", "codex-exec")
        self.collect(r)

    # 4 ------------------------------------------------------------------------------
    def subagent(self) -> None:
        ph: dict[str, int] = {}
        r = self.new("subagent", ph)
        assert r.mock
        r.mock.set_rules(
            [
                {
                    "name": "child",
                    "when": "VKSUB:child",
                    "reply": [
                        {
                            "text": "Child: bisected first, per [[patterns/registry#bisect-before-reading-diffs]]."  # noqa: E501
                        }
                    ],
                },  # noqa: E501
                {
                    "name": "sub-1",
                    "when": "VKSCN:subagent",
                    "reply": [
                        {
                            "tool": "spawn_agent",
                            "namespace": "collaboration",
                            "id": "call_vk_sub_1",
                            "input": {
                                "task_name": "find_regression",
                                "fork_turns": "none",
                                "message": "VKSUB:child find the commit that broke the date test",
                            },
                        }
                    ],
                },
                {
                    "name": "sub-2",
                    "when": "call_vk_sub_1",
                    "reply": [
                        {
                            "tool": "wait_agent",
                            "namespace": "collaboration",
                            "id": "call_vk_sub_2",
                            "input": {"timeout_ms": 20000},
                        }
                    ],
                },
                {
                    "name": "sub-3",
                    "when": "call_vk_sub_2",
                    "reply": [{"text": "The sub-agent found it."}],
                },
            ]
        )
        self.exec(
            r, "VKSCN:subagent find the regression", "codex-exec", "--enable", "multi_agent_v2"
        )
        self.collect(r)

    # 9 ------------------------------------------------------------------------------
    def hook_context(self) -> None:
        ph: dict[str, int] = {}
        r = self.new("hook-context", ph, context_hook=True)
        assert r.mock
        r.mock.set_rules(
            [
                {
                    "name": "c1",
                    "when": "VKSCN:context",
                    "reply": [
                        {
                            "tool": "exec_command",
                            "id": "call_vk_ctx_1",
                            "input": {"cmd": "cat notes.md", "workdir": str(r.proj)},
                        }
                    ],
                },
                {"name": "c2", "when": "call_vk_ctx_1", "reply": [{"text": "Seen the context."}]},
            ]
        )
        self.exec(r, "VKSCN:context hello", "codex-exec")
        self.collect(r)

    # 11 -----------------------------------------------------------------------------
    def recall(self) -> None:
        """The point-of-use recall: the prompt's lesson, then the file's, in the requests."""
        ph: dict[str, int] = {}
        r = self.new("recall", ph, approve=False)  # no MCP tool is called
        r.recall_setup("codex")
        assert r.mock
        r.mock.set_rules(
            [
                {
                    "name": "r1",
                    "when": "VKSCN:recall",
                    "reply": [
                        {
                            "tool": "exec_command",
                            "id": "call_vk_recall_1",
                            "input": {"cmd": "cat src/billing/cart.py", "workdir": str(r.proj)},
                        }
                    ],
                },
                {"name": "r2", "when": "call_vk_recall_1", "reply": [{"text": "Rounded once."}]},
            ]
        )
        self.exec(r, "VKSCN:recall fix the cart totals rounding", "codex-exec")
        r.copy(r.vault / "state" / "uses.jsonl", "vault-uses.jsonl")
        r.copy(r.vault / "state" / "hooks.log", "vault-hook.log")
        self.collect(r)

    # 10 -----------------------------------------------------------------------------
    def hook_trust(self) -> None:
        ph: dict[str, int] = {}
        r = self.new("hook-trust", ph)
        assert r.mock
        r.mock.set_rules([{"name": "t", "when": "VKSCN:trust", "reply": [{"text": "ok"}]}])
        # 1. without trust: hooks are skipped
        self.exec(r, "VKSCN:trust before", "1-exec-untrusted", bypass_trust=False)
        before = len(list((r.home / ".vkhooks" / "out").glob("*.json")))
        r.notes.append(f"hook payloads written by the untrusted run: {before}")
        # 2. trust them in the TUI: /hooks, then t
        tui_trust(self.bin, r, self.env(r))
        r.copy(r.home / ".codex" / "config.toml", "config/config.trusted.toml")
        # 3. without bypass again: hooks run now
        self.exec(r, "VKSCN:trust after", "3-exec-trusted", bypass_trust=False)
        after = len(list((r.home / ".vkhooks" / "out").glob("*.json")))
        r.notes.append(f"hook payloads after the trusted run: {after}")
        check_trust_hashes(r)
        self.collect(r)


def tui_trust(binp: str, r: Run, env: dict[str, str]) -> None:
    """Drive the interactive Codex TUI under tmux: /hooks, then t (trust all)."""
    sock = f"vkhosts-{os.getpid()}"
    sess = "codex"
    envargs: list[str] = []
    for k, v in env.items():
        envargs += ["-e", f"{k}={v}"]
    tm = ["tmux", "-L", sock]
    shots: list[str] = []

    def shot(tag: str) -> str:
        s = sh([*tm, "capture-pane", "-p", "-t", sess]).stdout
        shots.append(f"===== {tag} =====\n{s}")
        return s

    def keys(*k: str) -> None:
        sh([*tm, "send-keys", "-t", sess, *k])

    sh(
        [
            *tm,
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            sess,
            "-x",
            "160",
            "-y",
            "50",
            "-c",
            str(r.proj),
            *envargs,
            binp,
            "--no-alt-screen",
        ]
    )

    def wait_for(*needles: str, tries: int = 30) -> str:
        s = ""
        for _ in range(tries):
            time.sleep(0.5)
            s = sh([*tm, "capture-pane", "-p", "-t", sess]).stdout
            if any(n in s for n in needles):
                return s
        return s

    try:
        time.sleep(3)  # the review dialog comes a moment after the prompt shows
        typed = False
        for step in range(40):
            s = sh([*tm, "capture-pane", "-p", "-t", sess]).stdout
            if "t trust all" in s:
                break
            if "Hooks need review" in s:
                shot("startup dialog (answered: 1. Review hooks)")
                keys("Enter")
            elif "Use existing model" in s:
                shot("model announcement (answered: 2. Use existing model)")
                keys("Down", "Enter")
            elif ("for shortcuts" in s or "Ask Codex" in s) and not typed and step > 4:
                shot("prompt (typing /hooks)")
                keys("/hooks")
                time.sleep(0.5)
                keys("Enter")
                typed = True
            time.sleep(1)
        shot("/hooks view")
        keys("t")
        time.sleep(2)
        shot("after t (trust all)")
        keys("Escape")
        time.sleep(1)
        keys("/hooks")
        time.sleep(0.5)
        keys("Enter")
        time.sleep(2)
        shot("/hooks again")
        keys("Escape")
        time.sleep(1)
        keys("C-c")
        time.sleep(1)
        keys("C-c")
        time.sleep(2)
    finally:
        sh([*tm, "kill-server"])
    r.save_text("tui-screens.txt", "\n".join(shots))


def check_trust_hashes(r: Run) -> None:
    """Recompute every hook's trusted_hash with hook_hash.py and compare with Codex's."""
    import tomllib
    from hook_hash import codex_hook_hash, hook_keys

    conf = tomllib.loads((r.home / ".codex" / "config.toml").read_text())
    state = conf.get("hooks", {}).get("state", {})
    hj = r.home / ".codex" / "hooks.json"
    results = []
    for key, event, group, handler in hook_keys(hj, json.loads(hj.read_text())):
        mine = codex_hook_hash(event, group, handler)
        theirs = state.get(key, {}).get("trusted_hash")
        results.append({"key": key, "codex": theirs, "hook_hash.py": mine, "match": mine == theirs})
    r.save_text("trust-hash-check.json", json.dumps(results, indent=2) + "\n")
    r.notes.append(
        f"trusted_hash recomputed: {sum(x['match'] for x in results)}/{len(results)} match"
    )  # noqa: E501


# --------------------------------------------------------------------------------------
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--claude-version", default=DEFAULT_CLAUDE)
    ap.add_argument("--codex-version", default=DEFAULT_CODEX)
    ap.add_argument(
        "--only",
        nargs="*",
        default=[],
        help="scenarios to record, as host:scenario or scenario (default: all)",
    )
    ap.add_argument("--skip-claude", action="store_true")
    ap.add_argument("--skip-codex", action="store_true")
    ap.add_argument(
        "--vaultkeeper",
        default=shutil.which("vaultkeeper") or str(Path(sys.executable).parent / "vaultkeeper"),
    )
    ap.add_argument("--out", type=Path, default=FIXTURES)
    a = ap.parse_args()
    if not Path(a.vaultkeeper).exists():
        sys.exit("no vaultkeeper command: pip install -e '.[mcp]' into this Python's venv")
    plan: list[tuple[str, str, Callable[[], None]]] = []
    if not a.skip_claude:
        binp = ensure_host(
            "@anthropic-ai/claude-code", a.claude_version, NPM_PREFIX / f"claude-{a.claude_version}"
        )
        c = Claude(binp, a.claude_version, a.out / f"claude-code-{a.claude_version}", a.vaultkeeper)
        for name in (
            "plain",
            "skill",
            "mcp",
            "subagent",
            "resume_fork",
            "stream_json",
            "mcp_list",
            "auto_memory",
            "hook_context",
            "recall",
            "recall_interactive",
        ):
            plan.append(("claude-code", name.replace("_", "-"), getattr(c, name)))
    if not a.skip_codex:
        binp = ensure_host(
            "@openai/codex", a.codex_version, NPM_PREFIX / f"codex-{a.codex_version}"
        )
        x = Codex(binp, a.codex_version, a.out / f"codex-{a.codex_version}", a.vaultkeeper)
        for name in (
            "plain",
            "mcp",
            "mcp_sdk_alone",
            "mcp_unapproved",
            "subagent",
            "hook_context",
            "hook_trust",
            "recall",
        ):
            plan.append(("codex", name.replace("_", "-"), getattr(x, name)))
    for host, scen, fn in plan:
        if a.only and scen not in a.only and f"{host}:{scen}" not in a.only:
            continue
        print(f"{host}: {scen} ...", flush=True)
        dest = (
            a.out
            / (
                f"claude-code-{a.claude_version}"
                if host == "claude-code"
                else f"codex-{a.codex_version}"
            )
            / scen
        )
        if dest.exists():
            shutil.rmtree(dest)
        fn()
    return 0


if __name__ == "__main__":
    sys.exit(main())
