#!/usr/bin/env python3
"""A scripted, offline stand-in for the model APIs the coding-agent hosts talk to.

Standard library only. Listens on 127.0.0.1 only, answers

* ``POST .../messages``  -- Anthropic Messages API (Claude Code), SSE or plain JSON;
* ``POST .../responses`` -- OpenAI Responses API (Codex), SSE;
* ``POST .../count_tokens``, ``GET .../models`` and anything else with small canned bodies,

and logs every request (path, headers it cares about, body) as one JSON line.

What it answers comes from a *script*: a list of rules. Each request's *tail*
(everything after the model's last output: the new prompt, or the tool results) is
serialized to JSON and the first rule whose ``when`` substring occurs in it (and whose
``tools`` requirement holds) gives the reply. The rules key on markers the scripts put in
prompts (``VKSCN:plain``) and on the tool-call ids the mock itself hands out
(``toolu_vk_plain_1`` / ``call_vk_plain_1``): the host echoes them back in the tool result,
so a multi-step exchange needs no state in the mock. A request no rule matches (Claude
Code's title / topic side requests, say) gets a short plain reply.

A reply is a list of blocks::

    {"text": "..."}                              assistant text
    {"tool": "Write", "input": {...}}            a tool call (Anthropic tool_use /
                                                 OpenAI function_call), id from "id"
    {"tool": "mcp:cite", "input": {...}}         resolved against the request's tool
                                                 list (and, for Codex, the tools its
                                                 tool_search returned): the vaultkeeper
                                                 MCP tool "cite", namespaced if need be
    A rule's "wait_for": [FILE, TEXT] holds its answer until TEXT is in FILE (at most
    WAIT_BOUND seconds): Codex starts MCP servers in the background, so a tool_search
    answered before the server has listed its tools finds none. The recorder waits for
    the server's tools/list answer in the MCP traffic log (the request that came in is
    what the host sent, whatever the wait).
    {"tool_search": "vaultkeeper cite"}          OpenAI only: a client tool_search call
                                                 (Codex defers MCP tools behind it)

The server stops by itself after ``--max-requests`` requests or ``--idle`` seconds
without one; ``stop()`` stops it at once.

Standalone:  python mock_server.py --script rules.json --log requests.jsonl --port 0
(prints the port on its first stdout line).
"""

from __future__ import annotations

import argparse
import http.server
import json
import socketserver
import sys
import threading
import time
from pathlib import Path
from typing import Any

FALLBACK_TEXT = "ok"


def _tool_names_anthropic(body: dict[str, Any]) -> list[str]:
    return [t.get("name", "") for t in body.get("tools") or [] if isinstance(t, dict)]


def _tools_openai(body: dict[str, Any]) -> list[tuple[str | None, str]]:
    """(namespace, name) of every function tool the request offers, namespaces opened."""
    out: list[tuple[str | None, str]] = []
    for t in body.get("tools") or []:
        if not isinstance(t, dict):
            continue
        if t.get("type") == "namespace":
            for sub in t.get("tools") or []:
                if isinstance(sub, dict):
                    out.append((t.get("name"), sub.get("name", "")))
        else:
            out.append((None, t.get("name", "")))
    return out


def _resolve_mcp(wanted: str, candidates: list[tuple[str | None, str]]) -> tuple[str | None, str]:
    """'mcp:cite' -> the (namespace, name) of the vaultkeeper server's cite tool."""
    short = wanted.split(":", 1)[1]
    for ns, name in candidates:
        full = (ns or "") + name
        if "vaultkeeper" in full and (name == short or name.endswith("__" + short)):
            return ns, name
    for ns, name in candidates:
        if name.endswith(short):
            return ns, name
    return None, "mcp__vaultkeeper__" + short


def _tail(items: list[Any], is_model: Any) -> list[Any]:
    """The items after the model's last output: the new prompt or the tool results."""
    for i in range(len(items) - 1, -1, -1):
        if isinstance(items[i], dict) and is_model(items[i]):
            return items[i + 1 :]
    return items


def _is_model_output(item: dict[str, Any]) -> bool:
    if item.get("role") == "assistant":
        return True
    return item.get("type") in (
        "function_call",
        "custom_tool_call",
        "reasoning",
        "local_shell_call",
        "tool_search_call",
    )


WAIT_BOUND = 120.0  # a safety bound on a loaded machine; the wait ends at the event


def _wait_for(file: str, text: str) -> None:
    """Until ``text`` occurs in ``file`` (the MCP traffic log), bounded by WAIT_BOUND."""
    end = time.monotonic() + WAIT_BOUND
    while time.monotonic() < end:
        try:
            if text in Path(file).read_text(encoding="utf-8", errors="replace"):
                return
        except OSError:
            pass
        time.sleep(0.05)


class Script:
    def __init__(self, rules: list[dict[str, Any]]):
        self.rules = rules
        self.lock = threading.Lock()
        self.fired: dict[int, int] = {}

    def pick(self, last_item: str, has_tools: bool, whole: str) -> dict[str, Any] | None:
        with self.lock:
            for i, rule in enumerate(self.rules):
                need_tools = rule.get("tools", True)
                if need_tools is True and not has_tools:
                    continue
                if need_tools is False and has_tools:
                    continue
                hay = whole if rule.get("anywhere") else last_item
                if rule["when"] not in hay:
                    continue
                if "unless" in rule and rule["unless"] in hay:
                    continue
                limit = rule.get("times")
                if limit is not None and self.fired.get(i, 0) >= limit:
                    continue
                self.fired[i] = self.fired.get(i, 0) + 1
                if rule.get("wait_for"):
                    _wait_for(*rule["wait_for"])
                return rule
        return None


class MockServer:
    def __init__(
        self,
        rules: list[dict[str, Any]],
        log_path: Path,
        port: int = 0,
        max_requests: int = 400,
        idle_seconds: float = 600.0,
    ):
        self.script = Script(rules)
        self.log_path = log_path
        self.max_requests = max_requests
        self.idle_seconds = idle_seconds
        self.count = 0
        self.last_activity = time.monotonic()
        self.log_lock = threading.Lock()
        self.seq = 0
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def do_GET(self) -> None:  # noqa: N802
                outer._touch("GET", self.path, self.headers, None)
                if self.path.rstrip("/").endswith("/models") or "/models?" in self.path:
                    body = {"object": "list", "data": [], "models": []}
                else:
                    body = {}
                self._json(200, body)

            def do_HEAD(self) -> None:  # noqa: N802
                outer._touch("HEAD", self.path, self.headers, None)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self) -> None:  # noqa: N802
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                if self.headers.get("Content-Encoding", "") == "zstd":
                    body = None  # not expected; logged raw length only
                else:
                    try:
                        body = json.loads(raw or b"{}")
                    except ValueError:
                        body = None
                seq = outer._touch("POST", self.path, self.headers, body, len(raw))
                path = self.path.split("?", 1)[0]
                if path.endswith("/count_tokens"):
                    self._json(200, {"input_tokens": 100})
                elif path.endswith("/messages"):
                    outer._anthropic(self, body or {}, seq)
                elif path.endswith("/responses"):
                    outer._openai(self, body or {}, seq)
                else:
                    self._json(200, {})

            def _json(self, status: int, obj: Any) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True
            allow_reuse_address = True

        self.httpd = Server(("127.0.0.1", port), Handler)
        self.port = self.httpd.server_address[1]
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._watch = threading.Thread(target=self._watchdog, daemon=True)
        self._stopped = threading.Event()

    # -- lifecycle ---------------------------------------------------------------------
    def start(self) -> MockServer:
        self._thread.start()
        self._watch.start()
        return self

    def stop(self) -> None:
        if not self._stopped.is_set():
            self._stopped.set()
            self.httpd.shutdown()
            self.httpd.server_close()

    def _watchdog(self) -> None:
        while not self._stopped.wait(1.0):
            if time.monotonic() - self.last_activity > self.idle_seconds:
                self.stop()
            if self.count >= self.max_requests:
                self.stop()

    def set_rules(self, rules: list[dict[str, Any]]) -> None:
        self.script = Script(rules)

    # -- logging -----------------------------------------------------------------------
    def _touch(self, method: str, path: str, headers: Any, body: Any, size: int = 0) -> int:
        self.last_activity = time.monotonic()
        with self.log_lock:
            self.count += 1
            self.seq += 1
            seq = self.seq
            keep = {
                k: v
                for k, v in headers.items()
                if k.lower()
                in (
                    "user-agent",
                    "anthropic-version",
                    "anthropic-beta",
                    "x-app",
                    "originator",
                    "session_id",
                    "session-id",
                    "x-claude-code-session-id",
                    "conversation_id",
                    "openai-beta",
                    "version",
                    "accept",
                    "content-type",
                )
            }
            rec = {
                "seq": seq,
                "method": method,
                "path": path,
                "headers": keep,
                "size": size,
                "body": body,
            }
            with self.log_path.open("a", encoding="utf-8") as f:
                f.write(json.dumps(rec) + "\n")
        return seq

    def _log_reply(self, seq: int, rule: dict[str, Any] | None) -> None:
        with self.log_lock, self.log_path.open("a", encoding="utf-8") as f:
            f.write(json.dumps({"seq": seq, "reply_rule": rule and rule.get("name")}) + "\n")

    # -- Anthropic ---------------------------------------------------------------------
    def _anthropic(self, h: Any, body: dict[str, Any], seq: int) -> None:
        msgs = body.get("messages") or []
        last = json.dumps(_tail(msgs, lambda m: m.get("role") == "assistant"))
        has_tools = bool(body.get("tools"))
        rule = self.script.pick(last, has_tools, json.dumps(msgs))
        self._log_reply(seq, rule)
        blocks = rule["reply"] if rule else [{"text": FALLBACK_TEXT}]
        tools = _tool_names_anthropic(body)
        content: list[dict[str, Any]] = []
        for i, b in enumerate(blocks):
            if "text" in b:
                content.append({"type": "text", "text": b["text"]})
            else:
                name = b["tool"]
                if name.startswith("mcp:"):
                    short = name[4:]
                    name = next(
                        (t for t in tools if "vaultkeeper" in t and t.endswith("__" + short)),
                        "mcp__vaultkeeper__" + short,
                    )
                content.append(
                    {
                        "type": "tool_use",
                        "id": b.get("id", f"toolu_vk_{seq}_{i}"),
                        "name": name,
                        "input": b.get("input", {}),
                    }
                )
        stop = "tool_use" if any(c["type"] == "tool_use" for c in content) else "end_turn"
        model = body.get("model", "claude-mock")
        msg_id = f"msg_vk_{seq:04d}"
        usage = {
            "input_tokens": 50,
            "output_tokens": 20,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }
        if not body.get("stream"):
            h._json(
                200,
                {
                    "id": msg_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": content,
                    "stop_reason": stop,
                    "stop_sequence": None,
                    "usage": usage,
                },
            )
            return
        events: list[tuple[str, dict[str, Any]]] = [
            (
                "message_start",
                {
                    "type": "message_start",
                    "message": {
                        "id": msg_id,
                        "type": "message",
                        "role": "assistant",
                        "model": model,
                        "content": [],
                        "stop_reason": None,
                        "stop_sequence": None,
                        "usage": {**usage, "output_tokens": 1},
                    },
                },
            ),
        ]
        for i, c in enumerate(content):
            if c["type"] == "text":
                events.append(
                    (
                        "content_block_start",
                        {
                            "type": "content_block_start",
                            "index": i,
                            "content_block": {"type": "text", "text": ""},
                        },
                    )
                )
                events.append(
                    (
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": i,
                            "delta": {"type": "text_delta", "text": c["text"]},
                        },
                    )
                )
            else:
                events.append(
                    (
                        "content_block_start",
                        {
                            "type": "content_block_start",
                            "index": i,
                            "content_block": {
                                "type": "tool_use",
                                "id": c["id"],
                                "name": c["name"],
                                "input": {},
                            },
                        },
                    )
                )
                events.append(
                    (
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": i,
                            "delta": {
                                "type": "input_json_delta",
                                "partial_json": json.dumps(c["input"]),
                            },
                        },
                    )
                )
            events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
        events.append(
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": 20},
                },
            )
        )
        events.append(("message_stop", {"type": "message_stop"}))
        self._sse(h, events)

    # -- OpenAI Responses --------------------------------------------------------------
    def _openai(self, h: Any, body: dict[str, Any], seq: int) -> None:
        items = body.get("input") or []
        last = json.dumps(_tail(items, _is_model_output))
        has_tools = bool(body.get("tools"))
        rule = self.script.pick(last, has_tools, json.dumps(items))
        self._log_reply(seq, rule)
        blocks = rule["reply"] if rule else [{"text": FALLBACK_TEXT}]
        tools = _tools_openai(body) + _tools_openai(
            {
                "tools": [
                    t
                    for it in items
                    if isinstance(it, dict) and it.get("type") == "tool_search_output"
                    for t in it.get("tools") or []
                ]
            }
        )
        resp_id = f"resp_vk_{seq:04d}"
        events: list[tuple[str, dict[str, Any]]] = [
            ("response.created", {"type": "response.created", "response": {"id": resp_id}}),
        ]
        for i, b in enumerate(blocks):
            if "text" in b:
                item_id = f"msg_vk_{seq:04d}_{i}"
                item = {
                    "type": "message",
                    "role": "assistant",
                    "id": item_id,
                    "content": [{"type": "output_text", "text": b["text"]}],
                }
                events.append(
                    (
                        "response.output_item.added",
                        {
                            "type": "response.output_item.added",
                            "output_index": i,
                            "item": {**item, "content": []},
                        },
                    )
                )
                events.append(
                    (
                        "response.output_text.delta",
                        {
                            "type": "response.output_text.delta",
                            "item_id": item_id,
                            "output_index": i,
                            "content_index": 0,
                            "delta": b["text"],
                        },
                    )
                )
                events.append(
                    (
                        "response.output_item.done",
                        {"type": "response.output_item.done", "output_index": i, "item": item},
                    )
                )
            elif "tool_search" in b:
                item = {
                    "type": "tool_search_call",
                    "id": f"ts_vk_{seq:04d}_{i}",
                    "call_id": b.get("id", f"call_vk_{seq}_{i}"),
                    "execution": "client",
                    "status": "completed",
                    "arguments": {"query": b["tool_search"], "limit": 8},
                }
                events.append(
                    (
                        "response.output_item.done",
                        {"type": "response.output_item.done", "output_index": i, "item": item},
                    )
                )
            else:
                name = b["tool"]
                ns = b.get("namespace")
                if name.startswith("mcp:"):
                    ns, name = _resolve_mcp(name, tools)
                item = {
                    "type": "function_call",
                    "id": f"fc_vk_{seq:04d}_{i}",
                    "call_id": b.get("id", f"call_vk_{seq}_{i}"),
                    "name": name,
                    "arguments": json.dumps(b.get("input", {})),
                }
                if ns:
                    item["namespace"] = ns
                events.append(
                    (
                        "response.output_item.done",
                        {"type": "response.output_item.done", "output_index": i, "item": item},
                    )
                )
        events.append(
            (
                "response.completed",
                {
                    "type": "response.completed",
                    "response": {
                        "id": resp_id,
                        "usage": {
                            "input_tokens": 50,
                            "input_tokens_details": None,
                            "output_tokens": 20,
                            "output_tokens_details": None,
                            "total_tokens": 70,
                        },
                    },
                },
            )
        )
        self._sse(h, events)

    @staticmethod
    def _sse(h: Any, events: list[tuple[str, dict[str, Any]]]) -> None:
        data = "".join(f"event: {k}\ndata: {json.dumps(v)}\n\n" for k, v in events).encode()
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Cache-Control", "no-cache")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)
        h.wfile.flush()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--script", type=Path, required=True, help="JSON list of rules")
    ap.add_argument("--log", type=Path, required=True, help="request log (JSON lines)")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--max-requests", type=int, default=400)
    ap.add_argument("--idle", type=float, default=600.0)
    a = ap.parse_args(argv)
    srv = MockServer(json.loads(a.script.read_text()), a.log, a.port, a.max_requests, a.idle)
    print(srv.port, flush=True)
    srv.start()
    try:
        while not srv._stopped.wait(1.0):
            pass
    except KeyboardInterrupt:
        srv.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
