"""Whether ``apply_prune`` may ask in the host's dialog, and whose dialog it was.

What the hosts really do with MCP elicitation (issue 34, docs/hosts.md): Codex 0.169.0
and 0.171.0 answer it with cancel within milliseconds and show nothing; ``claude -p``
answers cancel itself; a Claude Code ``Elicitation`` hook can answer accept for the
person. So a deletion through MCP is queued for ``vaultkeeper review`` unless the person
turned the dialog on (``hooks install claude-code --mcp --dialog``, which records it in
the server's registration: ``VAULTKEEPER_MCP_DIALOG=1`` in its env), and even then it is
refused, and queued, while the host is Codex or any Claude Code settings file
configures a hook that could answer it, now or when the server started (Claude Code keeps
the hooks it started with: ``remember``; hosts/elicitation.py). ``refusal`` says why in
one line; a yes given in the dialog is journaled as "accepted in <host>'s dialog", which
is what vaultkeeper knows, never as a person's.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from vaultkeeper.hosts.elicitation import DIALOG_ENV, Answerer, answering
from vaultkeeper.search.hits import inert

# The clientInfo names the recorded hosts sent (tools/hosts/NOTES.md), and what to call them.
HOSTS = {"claude-code": "Claude Code", "codex-mcp-client": "Codex"}
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
    if isinstance(name, str) and name in HOSTS:
        return HOSTS[name]
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
    found = (*now, *(a for a in _AT_START if a not in now))
    if not found:
        return None
    first = found[0]
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    return (
        f"the host's dialog is refused while a Claude Code hook could answer it in the "
        f"person's place: {inert(first.line())}{more}"
    )


def accepted(host: str) -> str:
    """The journal's words for a yes given in the host's dialog."""
    return f"accepted in {host}'s dialog"
