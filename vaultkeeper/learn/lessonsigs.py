"""What a session did that ties a lesson to code: the lesson it wrote, the files it edited.

The lesson: ``vaultkeeper new memory|decision NAME -p P`` run from the agent's shell, or
the vault's MCP ``new_lesson``/``new_decision`` (``name``, ``project``); its entry is
``projects/P/memory/NAME.md``. The files edited: Claude Code's ``Edit``, ``Write``,
``MultiEdit`` (``file_path``) and ``NotebookEdit`` (``notebook_path``); Codex's
``apply_patch`` (a ``custom_tool_call`` whose input is the patch, or a call or shell
command carrying it), whose ``*** Update File:``/``*** Add File:`` lines name them.
Files read come as the ``file`` signals transcripts.py yields already. ingest's
suggestions (learn/anchoring.py) turn these into anchors an agent may accept.
"""

from __future__ import annotations

import re
from typing import Any

from vaultkeeper.learn.hostlines import vault_tool
from vaultkeeper.learn.shellwords import shell_news

EDIT_TOOLS = {"Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path",
              "NotebookEdit": "notebook_path"}  # fmt: skip
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add) File: (.+?)\s*$", re.M)
_NAME = re.compile(r"[\w.-]+\Z")
MAX_PATCH_CHARS = 2_000_000  # a larger patch is not looked into

Found = tuple[str, str, "str | None"]  # kind ("edit" | "new"), value, the vault it names


def entry_of(kind: object, name: object, project: object) -> str | None:
    """``projects/P/memory/NAME.md`` of a new memory or decision; None for anything else."""
    if kind not in ("memory", "decision") or not isinstance(name, str):
        return None
    if not isinstance(project, str) or not _NAME.match(name) or not _NAME.match(project):
        return None
    if name.startswith(".") or project.startswith("."):
        return None
    return f"projects/{project}/memory/{name}.md"


def patched(text: object) -> list[str]:
    """The files an apply_patch text updates or adds."""
    if not isinstance(text, str) or "*** " not in text or len(text) > MAX_PATCH_CHARS:
        return []
    return _PATCH_FILE.findall(text)


def _news(command: object) -> list[Found]:
    out: list[Found] = []
    for kind, name, project, vault in shell_news(command):
        rel = entry_of(kind, name, project)
        out += [("new", rel, vault)] if rel else []
    return out


def claude(name: str, args: dict[str, Any]) -> list[Found]:
    """A Claude Code tool call's edits and new lessons."""
    key = EDIT_TOOLS.get(name)
    if key is not None:
        path = args.get(key)
        return [("edit", path, None)] if isinstance(path, str) and path else []
    if name == "Bash":
        return _news(args.get("command"))
    return _tool(name, args)


def _tool(name: str, args: dict[str, Any]) -> list[Found]:
    if "new_" not in name:  # most calls: no regex for them
        return []
    tool = vault_tool(name)
    if tool in ("new_lesson", "new_decision"):
        kind = "memory" if tool == "new_lesson" else "decision"
        rel = entry_of(kind, args.get("name"), args.get("project"))
        return [("new", rel, None)] if rel else []
    return []


def codex(name: object, args: object) -> list[Found]:
    """A Codex call's edits and new lessons: ``args`` its arguments (a dict), or the
    input of a custom tool call (apply_patch's patch text)."""
    if isinstance(args, str):
        return [("edit", p, None) for p in patched(args)] if name == "apply_patch" else []
    if not isinstance(args, dict):
        return []
    if isinstance(name, str) and vault_tool(name) is not None:
        return _tool(name, args)
    out: list[Found] = []
    for value in args.values():
        out += [("edit", p, None) for p in patched(value)]
    command = args.get("command", args.get("cmd"))
    if isinstance(command, list):
        out += [("edit", p, None) for w in command for p in patched(w)]
    return out + _news(command)
