"""The SDK's own answers to a host's opening requests, shipped beside this module.

Importing the MCP SDK takes most of a second (its ``__init__`` loads the client, the
generated models of every protocol version, pydantic and asyncio), and a host waits
for the first answer: Codex starts a turn without the tools of a server that answers
late. The answers to the opening requests do not depend on the vault or on anything
the host says beyond the method and the protocol version, so they are made once, by
the SDK itself, and shipped as ``opening.json`` (tools/mcp_opening.py writes it;
tests/test_mcp_opening.py fails when it differs from what the installed SDK answers).
Nothing is saved at run time. With an SDK of another minor version than the one the
file was made with, there are no answers here and the SDK answers everything.

Stdlib only, and cheap: it runs before the SDK is imported.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from importlib.machinery import PathFinder
from pathlib import Path
from typing import Any

FILE = Path(__file__).with_name("opening.json")
FORMAT = 1
LISTS = frozenset({"tools/list", "prompts/list", "resources/list", "resources/templates/list"})
PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
INFO = "io.modelcontextprotocol/clientInfo"
SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"
LISTEN = "subscriptions/listen"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class Opening:
    """The answers, by ``"METHOD VERSION"`` (a listen's also by its filter)."""

    answers: dict[str, Any]

    def result(self, method: str, version: str) -> Any:
        return self.answers.get(f"{method} {version}")

    def ack(self, version: str, notifications: Any) -> dict[str, Any] | None:
        """A listen's acknowledgement (its ``params``) without the subscription's id."""
        found = self.answers.get(f"{LISTEN} {version} {canonical(notifications)}")
        return found if isinstance(found, dict) else None


def installed_sdk() -> str | None:
    """``mcp-X.Y.Z`` of the importable SDK, from its ``.dist-info`` name, not imported."""
    try:
        spec = PathFinder.find_spec("mcp")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or sys.modules.get("mcp", spec) is None:
        return None
    site = Path(spec.origin).parent.parent
    try:
        found = [n for n in os.listdir(site) if n.startswith("mcp-") and n.endswith(".dist-info")]
    except OSError:
        return None
    return found[0][: -len(".dist-info")] if len(found) == 1 else None


def load(file: Path = FILE, sdk: str | None = None) -> Opening | None:
    """The shipped answers, when they were made with the installed SDK's minor version."""
    try:
        data = json.loads(file.read_bytes())
        made_with, keys, values = data["sdk"], data["answers"], data["values"]
        if data["format"] != FORMAT:
            return None
        installed = sdk if sdk is not None else installed_sdk()
        if installed is None or not installed.startswith(made_with):
            return None
        return Opening({key: values[at] for key, at in keys.items()})
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None
