"""The SDK's answers shipped with vaultkeeper (vaultkeeper/mcp/opening.json): what the
installed SDK answers today, used only with the SDK's minor version they were made with;
and the hand-over's check of them (start.py)."""

from __future__ import annotations

import importlib.util
import json
import os
import threading
from pathlib import Path

import pytest

from vaultkeeper.mcp import start
from vaultkeeper.mcp.start import Drop

pytest.importorskip("mcp")
REPO = Path(__file__).resolve().parent.parent


def _maker():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("mcp_opening", REPO / "tools/mcp_opening.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_shipped_answers_are_what_the_installed_sdk_answers() -> None:
    """After a change to a tool, an instruction or the SDK: python tools/mcp_opening.py."""
    maker = _maker()
    assert start.FILE.read_text(encoding="utf-8") == maker.text(maker.build()), (
        "vaultkeeper/mcp/opening.json is out of date: run python tools/mcp_opening.py"
    )


def test_they_are_used_with_the_sdk_version_they_were_made_with_only(tmp_path: Path) -> None:
    made_with = json.loads(start.FILE.read_text())["sdk"]
    assert made_with == "mcp-2.3."
    found = start.load(sdk="mcp-2.3.7")
    assert found is not None and "tools" in found.result("tools/list", "2025-06-18")
    assert found.result("tools/list", "2099-01-01") is None
    assert start.load(sdk="mcp-2.4.0") is None and start.load(sdk="mcp-3.0.0") is None
    assert start.installed_sdk() is not None
    assert start.load() is not None  # the installed SDK is the one they were made with


@pytest.mark.parametrize(
    "text", ["", "{", "[]", '{"format": 1}', '{"format": 2, "sdk": "mcp-2.3.", '
             '"answers": {}, "values": []}', '{"format": 1, "sdk": "mcp-2.3.", '
             '"answers": {"a": 5}, "values": []}'],
)  # fmt: skip
def test_a_damaged_file_gives_no_answers(tmp_path: Path, text: str) -> None:
    file = tmp_path / "opening.json"
    file.write_text(text)
    assert start.load(file, sdk="mcp-2.3.0") is None


def _copied(lines: list[bytes], drops: list[Drop]) -> tuple[bytes, str]:
    """What the hand-over's copy passes on of the SDK's lines, and what it said on stderr."""
    read_sdk, write_sdk = os.pipe()
    read_host, write_host = os.pipe()
    end = b"vaultkeeper-end-test\n"
    for line in [*lines, end]:
        os.write(write_sdk, line)
    os.close(write_sdk)
    errors: list[str] = []
    real = start.sys.stderr
    start.sys.stderr = type("Err", (), {"write": errors.append, "flush": lambda self: None})()
    try:
        worker = threading.Thread(target=start._copy, args=(read_sdk, write_host, drops, end))
        worker.start()
        worker.join()
    finally:
        start.sys.stderr = real
    os.close(write_host)
    with open(read_host, "rb") as got:
        return got.read(), "".join(errors)


ACK = "notifications/subscriptions/acknowledged"


def test_the_sdks_repeats_of_the_fronts_answers_are_dropped() -> None:
    meta = {"io.modelcontextprotocol/subscriptionId": "listen:0"}
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": "vaultkeeper-front-1", "result": {"a": 1}}).encode()
        + b"\n",
        json.dumps({"jsonrpc": "2.0", "method": ACK, "params": {"_meta": meta}}).encode() + b"\n",
        b'{"jsonrpc": "2.0", "id": 1, "result": {}}\n',
        json.dumps({"jsonrpc": "2.0", "method": ACK, "params": {"_meta": meta}}).encode() + b"\n",
    ]
    drops = [Drop("response", "vaultkeeper-front-1", {"a": 1}),
             Drop("ack", "listen:0", {"_meta": meta})]  # fmt: skip
    out, err = _copied(lines, drops)
    assert out == lines[2] + lines[3] and err == ""  # a second ack is the SDK's own


def test_an_sdk_answering_otherwise_is_said_once_on_stderr() -> None:
    line = b'{"jsonrpc": "2.0", "id": "vaultkeeper-front-1", "result": {"a": 2}}\n'
    out, err = _copied([line], [Drop("response", "vaultkeeper-front-1", {"a": 1})])
    assert out == b""
    assert err.count("\n") == 1 and "mcp/opening.json" in err
