"""The MCP server's saved answers: what the SDK itself answered to a host's opening requests.

Importing the SDK takes most of a second, so ``vaultkeeper mcp`` answers the handshake
and the list requests from these before it has loaded (front.py). Nothing here is
written by hand: the server saves each answer the SDK gives to an opening request
(relay.py), under the key of everything that shapes it -- the SDK's and pydantic's
installed versions, Python's, and the bytes of vaultkeeper's own modules -- and under
the exact messages that led to it (ids aside). A later start with the same key and the
same messages is answered from the file; anything else, from the SDK.

Stdlib only, and cheap: it runs before the SDK is imported.
"""

from __future__ import annotations

import json
import os
import sys
import zlib
from importlib.machinery import PathFinder
from pathlib import Path
from typing import Any

from vaultkeeper import __version__

# Requests whose answer depends only on the server's definition and the messages before
# them: no vault read, no tool run, nothing of the request's own id.
ANSWERED = frozenset(
    {
        "initialize",
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
    }
)
PREFIX_LIMIT = 16  # opening messages looked at; a host's handshake takes fewer than 8
FILE_NAME = "mcp-answers.json"
_FORMAT = 1
_KEYS_KEPT = 4  # installs sharing one cache folder (venvs, versions) each keep theirs
# The hand-over to the SDK (relay.py) uses its stdio transport with a stream of our own
# and its low-level server; both are checked against these SDK versions (the tests).
# Another version serves as before, with no saved answers.
SDK_HANDED_OVER = ("mcp-2.3.",)
_SHAPING = ("mcp", "mcp_types", "pydantic", "pydantic_core")

Saved = dict[str, Any]  # the messages that led to a request (key below) -> its result


def canonical(message: dict[str, Any]) -> str:
    """One message as a key: its JSON value without its id, the members sorted."""
    rest = {k: v for k, v in message.items() if k != "id"}
    return json.dumps(rest, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def prefix_key(seen: list[str]) -> str:
    return "\n".join(seen)


def _dist(name: str) -> str | None:
    """The ``NAME-VERSION.dist-info`` beside an importable top-level package, unimported."""
    try:
        spec = PathFinder.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or sys.modules.get(name, spec) is None:
        return None
    site = Path(spec.origin).parent.parent
    try:
        found = [
            n for n in os.listdir(site) if n.startswith(f"{name}-") and n.endswith(".dist-info")
        ]
    except OSError:
        return None
    return found[0][: -len(".dist-info")] if len(found) == 1 else None


def _own_modules() -> str:
    """A checksum of vaultkeeper's modules: a changed description changes the answers."""
    root = Path(__file__).resolve().parent.parent
    crc = 0
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                crc = zlib.crc32(os.path.relpath(path, root).encode(), crc)
                with open(path, "rb") as fh:
                    crc = zlib.crc32(fh.read(), crc)
    return f"{crc:08x}"


def fingerprint() -> str | None:
    """The saved answers' key for this install; None serves without them (another SDK)."""
    dists = [_dist(name) for name in _SHAPING]
    sdk = dists[0]
    if sdk is None or not sdk.startswith(SDK_HANDED_OVER) or None in dists:
        return None
    try:
        own = _own_modules()
    except OSError:
        return None
    return " ".join([f"vaultkeeper-{__version__}", *map(str, dists), sys.version, own])


def path(env: dict[str, str] | os._Environ[str]) -> Path | None:
    """$XDG_CACHE_HOME/vaultkeeper/mcp-answers.json (~/.cache without it); None without HOME."""
    base = env.get("XDG_CACHE_HOME") or (env.get("HOME") and os.path.join(env["HOME"], ".cache"))
    return Path(base) / "vaultkeeper" / FILE_NAME if base else None


def _read(file: Path) -> dict[str, Any]:
    try:  # no symlink followed: the file's text goes to the host as the server's answers
        fd = os.open(file, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return {}
    try:
        with os.fdopen(fd, "rb") as fh:
            data = json.loads(fh.read())
    except (OSError, ValueError, RecursionError):  # damaged or hostile: as if none
        return {}
    if not isinstance(data, dict) or data.get("format") != _FORMAT:
        return {}
    keys = data.get("keys")
    return keys if isinstance(keys, dict) else {}


def load(file: Path | None, key: str) -> Saved:
    found = _read(file).get(key) if file is not None else None
    return found if isinstance(found, dict) else {}


def save(file: Path | None, key: str, learned: Saved, forget: bool = False) -> None:
    """Add ``learned`` to the answers under ``key`` (``forget``: replace them); best effort."""
    if file is None:
        return
    keys = _read(file)
    found = keys.pop(key, None)
    mine = dict(found) if isinstance(found, dict) and not forget else {}
    mine.update(learned)
    keys.pop(key, None)
    keys[key] = mine  # the newest last: the oldest go first
    while len(keys) > _KEYS_KEPT:
        keys.pop(next(iter(keys)))
    text = json.dumps({"format": _FORMAT, "keys": keys}, ensure_ascii=False)
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        part = file.with_name(f".{file.name}.{os.getpid()}")
        part.write_text(text, encoding="utf-8")
        os.replace(part, file)
    except OSError:
        pass
