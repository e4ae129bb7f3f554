"""Start the real `vaultkeeper mcp` over stdio and talk to it with the SDK's own client.

Each connection is a fresh server process (the console script beside this interpreter),
with HOME and XDG_* pointing into the test's tmp folder and the day pinned by
VAULTKEEPER_TODAY. Scripted elicitation answers stand in for the person.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp import ClientSession, StdioServerParameters, stdio_client

from vaultkeeper.hosts.elicitation import DIALOG_ENV

TODAY = "2026-12-01"


def program() -> list[str]:
    beside = Path(sys.executable).parent / "vaultkeeper"
    return [str(beside)] if beside.is_file() else [sys.executable, "-m", "vaultkeeper"]


def params(
    vault: Path, home: Path, *, dialog: bool = False, cwd: Path | None = None
) -> StdioServerParameters:
    """The server as a host starts it; ``dialog``: as `hooks install claude-code --mcp
    --dialog` registers it (the host's dialog for a deletion on); ``cwd``: the project
    folder it starts in (default: ``home``)."""
    first, *rest = program()
    env = {
        "HOME": str(home),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "VAULTKEEPER_TODAY": TODAY,
    }
    if dialog:
        env[DIALOG_ENV] = "1"
    args = [*rest, "mcp", "--vault", str(vault)]
    return StdioServerParameters(command=first, args=args, env=env, cwd=cwd or home)


class Person:
    """Answers each elicitation with the next scripted reply, and keeps what it was shown."""

    def __init__(self, *answers: tuple[str, str | None]) -> None:
        self.answers = list(answers)
        self.shown: list[types.ElicitRequestParams] = []

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.shown.append(params)
        action, name = self.answers.pop(0)
        content = None if name is None else {"name": name}
        return types.ElicitResult(action=action, content=content)  # type: ignore[arg-type]


@asynccontextmanager
async def connect(
    vault: Path, home: Path, person: Person | None = None, *, dialog: bool = False
) -> AsyncIterator[Any]:
    """A ready session; with ``person`` the client declares elicitation, else not."""
    home.mkdir(parents=True, exist_ok=True)
    with (home / "server-stderr.log").open("a") as errlog:
        async with (
            stdio_client(params(vault, home, dialog=dialog), errlog=errlog) as (read, write),
            ClientSession(read, write, elicitation_callback=person) as session,
        ):
            await session.initialize()
            yield session


async def call(session: Any, tool: str, **arguments: Any) -> dict[str, Any]:
    """A tool's structured output; a tool error fails the test with its message."""
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, f"{tool}: {result.content}"
    assert isinstance(result.structured_content, dict), f"{tool}: no structured output"
    return dict(result.structured_content)


async def error(session: Any, tool: str, **arguments: Any) -> str:
    """The one-line message of a tool call that must fail."""
    result = await session.call_tool(tool, arguments)
    assert result.is_error, f"{tool} did not fail: {result.structured_content}"
    return " ".join(c.text for c in result.content if hasattr(c, "text"))


def journal(vault: Path) -> list[dict[str, Any]]:
    path = vault / "state" / "journal.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
