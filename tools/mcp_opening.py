#!/usr/bin/env python3
"""Write vaultkeeper/mcp/opening.json: the SDK's own answers to a host's opening requests.

    python tools/mcp_opening.py          # write it (after a change to a tool or the SDK)
    python tools/mcp_opening.py --check  # exit 1 when it differs from what the SDK answers

``vaultkeeper mcp`` answers a host's opening requests (the handshake and the lists) from
this file while the SDK loads (vaultkeeper/mcp/start.py), so it must hold exactly what the
SDK answers. This script asks the SDK: it starts ``vaultkeeper mcp`` with
VAULTKEEPER_MCP_PLAIN=1 (the SDK alone, no front) on a copy of sample_vault/ and sends it,
at every protocol version the SDK serves, the opening a host sends: ``initialize`` and
the lists after it (2024-11-05 .. 2025-11-25); ``server/discover``, the lists and
``subscriptions/listen`` with each combination of the three list-changed flags
(2026-07-28). Each answer is asked twice, with different client capabilities and client
info, and must not differ (the front answers without looking at them). The test
tests/test_mcp_opening.py runs ``--check``'s comparison.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TARGET = REPO / "vaultkeeper" / "mcp" / "opening.json"
HANDSHAKE = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN = ("2026-07-28",)
LISTS = ("tools/list", "prompts/list", "resources/list", "resources/templates/list")
FLAGS = ("toolsListChanged", "promptsListChanged", "resourcesListChanged")
CLIENTS = (
    ({}, {"name": "opening-a", "version": "1"}),
    ({"elicitation": {"form": {}, "url": {}}, "roots": {}}, {"name": "opening-b", "version": "2"}),
)
SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"
PV, CAPS, INFO = (
    "io.modelcontextprotocol/protocolVersion",
    "io.modelcontextprotocol/clientCapabilities",
    "io.modelcontextprotocol/clientInfo",
)


def _program() -> list[str]:
    beside = Path(sys.executable).parent / "vaultkeeper"
    return [str(beside)] if beside.is_file() else [sys.executable, "-m", "vaultkeeper"]


def _talk(messages: list[dict[str, Any]], vault: Path, home: Path) -> list[dict[str, Any]]:
    """Send the messages to a plain server, then end its stdin once every request with an
    id not a listen is answered and every listen acknowledged; its output lines."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / "cache"),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "VAULTKEEPER_MCP_PLAIN": "1",
    }
    proc = subprocess.Popen(
        [*_program(), "mcp", "--vault", str(vault)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    want = {m["id"] for m in messages if "id" in m}
    got: list[dict[str, Any]] = []
    try:
        for message in messages:
            proc.stdin.write((json.dumps(message) + "\n").encode())
        proc.stdin.flush()
        while want:
            line = proc.stdout.readline()
            if not line:
                raise SystemExit(f"the SDK ended early: {proc.stderr.read().decode()}")
            answer = json.loads(line)
            got.append(answer)
            want.discard(answer.get("id"))
            meta = (answer.get("params") or {}).get("_meta") or {}
            want.discard(meta.get(SUBSCRIPTION))
        proc.stdin.close()
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    return got


def _handshake(version: str, caps: dict[str, Any], info: dict[str, Any]) -> list[dict[str, Any]]:
    init = {"protocolVersion": version, "capabilities": caps, "clientInfo": info}
    return [
        {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": init},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        *({"jsonrpc": "2.0", "id": m, "method": m} for m in LISTS),
    ]


def _filters() -> list[dict[str, bool]]:
    return [
        {flag: True for flag, on in zip(FLAGS, ons, strict=True) if on}
        for ons in itertools.product((True, False), repeat=len(FLAGS))
    ]


def _modern(version: str, caps: dict[str, Any], info: dict[str, Any]) -> list[dict[str, Any]]:
    def params(**more: Any) -> dict[str, Any]:
        return {"_meta": {PV: version, CAPS: caps, INFO: info}, **more}

    messages = [{"jsonrpc": "2.0", "id": "discover", "method": "server/discover",
                 "params": params()}]  # fmt: skip
    messages += [{"jsonrpc": "2.0", "id": m, "method": m, "params": params()} for m in LISTS]
    messages += [
        {"jsonrpc": "2.0", "id": f"listen:{n}", "method": "subscriptions/listen",
         "params": params(notifications=wanted)}
        for n, wanted in enumerate(_filters())
    ]  # fmt: skip
    return messages


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def ask(vault: Path, home: Path) -> dict[str, Any]:
    """What the SDK answers, keyed as vaultkeeper/mcp/start.py looks it up."""
    answers: dict[str, Any] = {}
    for version in (*HANDSHAKE, *MODERN):
        seen = []
        for caps, info in CLIENTS:
            modern = version in MODERN
            sent = (_modern if modern else _handshake)(version, caps, info)
            got = _talk(sent, vault, home)
            found: dict[str, Any] = {}
            for answer in got:
                if "error" in answer:
                    raise SystemExit(f"{version}: the SDK refused {answer}")
                if answer.get("method") == "notifications/subscriptions/acknowledged":
                    listen = answer["params"]["_meta"][SUBSCRIPTION]
                    wanted = next(m for m in sent if m.get("id") == listen)
                    filt = _canonical(wanted["params"]["notifications"])
                    params = answer["params"]
                    meta = {k: v for k, v in params["_meta"].items() if k != SUBSCRIPTION}
                    params = (
                        {**params, "_meta": meta}
                        if meta
                        else {k: v for k, v in params.items() if k != "_meta"}
                    )  # the request's own id goes in again when it is answered
                    found[f"subscriptions/listen {version} {filt}"] = params
                elif "id" in answer:
                    method = "initialize" if answer["id"] == "init" else answer["id"]
                    method = "server/discover" if method == "discover" else method
                    found[f"{method} {version}"] = answer["result"]
            seen.append(found)
        if seen[0] != seen[1]:
            raise SystemExit(f"{version}: the SDK's answers depend on the client; not saved")
        answers.update(seen[0])
    return answers


def sdk_version() -> str:
    from importlib.metadata import version

    return version("mcp")


def build() -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="vk-opening-") as tmp:
        vault = Path(tmp) / "vault"
        shutil.copytree(REPO / "sample_vault", vault, symlinks=True)
        answers = ask(vault, Path(tmp) / "home")
    minor = ".".join(sdk_version().split(".")[:2])
    values: list[str] = []  # each distinct answer once: most versions share theirs
    keys: dict[str, int] = {}
    for key, value in sorted(answers.items()):
        made = _canonical(value)
        if made not in values:
            values.append(made)
        keys[key] = values.index(made)
    return {
        "format": 1,
        "sdk": f"mcp-{minor}.",
        "answers": keys,
        "values": [json.loads(v) for v in values],
    }


def text(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    args = parser.parse_args(argv)
    made = text(build())
    if args.check:
        same = TARGET.is_file() and TARGET.read_text(encoding="utf-8") == made
        print(f"{TARGET.relative_to(REPO)}: {'up to date' if same else 'OUT OF DATE'}")
        return 0 if same else 1
    TARGET.write_text(made, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
