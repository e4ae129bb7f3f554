"""Transcripts shaped as Claude Code and Codex CLI write them, for the ingest tests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

SESSION = "0b6c1f3e-claude-session"
CODEX_SESSION = "7f2e9a10-codex-session"


def claude(kind: str, content: Any, ts: str = "2026-11-30T10:00:00.000Z", **extra: Any) -> str:
    """One Claude Code transcript line (``kind`` user or assistant)."""
    line = {
        "parentUuid": None,
        "isSidechain": False,
        "type": kind,
        "sessionId": extra.pop("session", SESSION),
        "timestamp": ts,
        "cwd": extra.pop("cwd", "/home/me/src/api"),
        "message": {"role": kind, "content": content},
        **extra,
    }
    return json.dumps(line)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool(name: str, **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_{name}", "name": name, "input": args}


def tool_result(value: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": "toolu_x", "content": value}


def codex(kind: str, payload: dict[str, Any], ts: str = "2026-11-28T08:00:00.000Z") -> str:
    return json.dumps({"timestamp": ts, "type": kind, "payload": payload})


def codex_meta(cwd: str = "/home/me/src/web") -> str:
    return codex(
        "session_meta",
        {"id": CODEX_SESSION, "cwd": cwd, "originator": "codex_cli_rs", "cli_version": "0.63.0"},
    )


def codex_say(role: str, value: str, ts: str = "2026-11-28T08:00:00.000Z") -> str:
    kind = "output_text" if role == "assistant" else "input_text"
    return codex(
        "response_item",
        {"type": "message", "role": role, "content": [{"type": kind, "text": value}]},
        ts,
    )


def codex_shell(command: str, ts: str = "2026-11-28T08:00:00.000Z") -> str:
    args = json.dumps({"command": ["bash", "-lc", command], "workdir": "/home/me/src/web"})
    return codex(
        "response_item",
        {"type": "function_call", "name": "shell", "arguments": args, "call_id": "call_1"},
        ts,
    )


def codex_output(value: str) -> str:
    return codex(
        "response_item",
        {"type": "function_call_output", "call_id": "call_1", "output": value},
    )


def write(path: Path, lines: list[str], tail: str = "") -> Path:
    """The lines, each ending in a newline, then ``tail`` (a half-written last line)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{line}\n" for line in lines) + tail, encoding="utf-8")
    return path


# ingest in a fresh interpreter: what it counted, the lines it skipped, its peak RSS
_WORKER = (
    "import datetime as dt, json, sys\n"
    "from pathlib import Path\n"
    "from vaultkeeper.learn.ingest import ingest\n"
    "now = dt.datetime(2026, 12, 1, tzinfo=dt.timezone.utc)\n"
    "out = ingest(Path(sys.argv[1]), [Path(sys.argv[2])], now)\n"
    "print(json.dumps({'counted': [c.name for c in out.result.counted],\n"
    "  'skipped': out.files[0].lines_skipped}))\n"
)
# A process's peak RSS keeps the high-water mark of the image it was exec'ed from
# (here: pytest, which may just have written 50 MB); a small launcher reads its child's own.
_LAUNCHER = (
    "import json, resource, subprocess, sys\n"
    "out = subprocess.run([sys.executable, '-c', sys.argv[1], *sys.argv[2:]],\n"
    "  capture_output=True, text=True, check=True).stdout\n"
    "got = json.loads(out)\n"
    "got['rss_kb'] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "print(json.dumps(got))\n"
)


def ingest_measured(vault: Path, transcript: Path) -> dict[str, Any]:
    """``{"counted": [names], "skipped": n, "rss_kb": peak}`` of one ingest run alone."""
    proc = subprocess.run(
        [sys.executable, "-c", _LAUNCHER, _WORKER, str(vault), str(transcript)],
        capture_output=True,
        text=True,
        check=True,
    )
    got: dict[str, Any] = json.loads(proc.stdout)
    return got
