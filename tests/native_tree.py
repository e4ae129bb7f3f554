"""A Claude Code auto-memory tree laid out exactly as Claude Code 2.1.332 lays it.

``~/.claude/projects/<sanitized-cwd>/memory/`` with a ``MEMORY.md`` index (one
``- [title](file.md) - hook`` line a memory) and one file a memory with frontmatter
``name``, ``description`` and ``metadata.type`` (and the host's ``metadata.modified``).
The first project has 230 memories (past the recall's 200), an index past 200 lines,
one file without a description, one past 4,096 bytes, one with a planted token, and an
index line naming a file that is not there; the second is small, with one memory
nobody used for 200 days. Real recorded transcripts are under
tests/fixtures/hosts/claude-code-2.1.332/auto-memory/.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
from pathlib import Path

from click.testing import CliRunner

from vaultkeeper.cli import cli
from vaultkeeper.native.folders import sanitize

API = "/src/api"
WEB = "/src/web"
TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.timezone.utc)


def memory_text(name: str, description: str | None, body: str, kind: str = "feedback") -> str:
    desc = "" if description is None else f"description: {description}\n"
    return f"---\nname: {name}\n{desc}metadata:\n  type: {kind}\n---\n\n{body}\n"


def folder(home: Path, cwd: str) -> Path:
    return home / ".claude" / "projects" / sanitize(cwd) / "memory"


def _write(path: Path, text: str, day: dt.datetime) -> None:
    path.write_text(text, encoding="utf-8")
    stamp = day.timestamp()
    os.utime(path, (stamp, stamp))


def build(home: Path) -> dict[str, Path]:
    api, web = folder(home, API), folder(home, WEB)
    api.mkdir(parents=True)
    web.mkdir(parents=True)
    index = ["# Memory index", ""]
    for n in range(230):
        name = f"note-{n:03d}.md"
        body = f"Fact number {n} about topic{n} and area{n * 7}."
        _write(
            api / name,
            memory_text(f"note {n}", f"fact {n} on topic{n}", body),
            NOW - dt.timedelta(days=n % 60, hours=n),
        )
        index.append(f"- [note {n}]({name}) - topic{n}")
    _write(api / "no-desc.md", "---\nname: no desc\nmetadata:\n  type: user\n---\n\nx\n", NOW)
    _write(api / "big.md", memory_text("big", "a long one", "word " * 1200), NOW)
    _write(api / "token.md", memory_text("token", "the ci token", f"token={TOKEN}\n"), NOW)
    index += ["- [no desc](no-desc.md) - x", "- [big](big.md) - y", "- [gone](gone.md) - z"]
    _write(api / "MEMORY.md", "\n".join(index) + "\n", NOW)
    _write(web / "use-pnpm.md", memory_text("use pnpm", "use pnpm, not npm", "pnpm i"), NOW)
    _write(
        web / "old-port.md",
        memory_text("old port", "dev server on 3000", "3000"),
        NOW - dt.timedelta(days=200),
    )
    web_index = "- [use pnpm](use-pnpm.md) - pnpm\n- [old port](old-port.md) - port\n"
    _write(web / "MEMORY.md", web_index, NOW)
    return {"api": api, "web": web}


def hashes(home: Path) -> dict[str, str]:
    """Every native file's digest (and its mtime), to show nothing changed them."""
    top = home / ".claude" / "projects"
    out = {}
    for p in sorted(top.rglob("*")):
        if p.is_file():
            digest = hashlib.sha256(p.read_bytes()).hexdigest()
            out[str(p.relative_to(top))] = f"{digest}@{p.stat().st_mtime_ns}"
    return out


def vk(vault: Path, *args: str) -> tuple[int, str, str]:
    """``vaultkeeper --vault VAULT ARGS``: exit code, stdout, stderr (exceptions raised)."""
    done = CliRunner().invoke(cli, ["--vault", str(vault), *args], catch_exceptions=False)
    return done.exit_code, done.stdout, done.stderr
