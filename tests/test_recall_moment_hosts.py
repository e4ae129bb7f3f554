"""What the real hosts sent to the model after the recall hook (vaultkeeper/recall/moment.py)
added its context: the model requests tools/hosts/record.py captured from Claude Code
2.1.332 (``-p`` and the interactive TUI) and Codex 0.169.0, in
tests/fixtures/hosts/*/recall*/model-requests.jsonl.

Each check finds the hook's text in the request where the host put it, and holds it to
what the hook promises: the header line, each lesson fenced as data, the planted token
masked, and the whole within the budget.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from host_fixtures import CLAUDE, CODEX

from vaultkeeper import config
from vaultkeeper.recall.moment import HEADER

FENCE = '<vault-memory path="projects/proj/memory/{}.md" status="active">'
MASKED = "[redacted: github token]"


def _requests(folder: Path) -> list[dict[str, Any]]:
    lines = (folder / "model-requests.jsonl").read_text(encoding="utf-8").splitlines()
    return [r["body"] for r in map(json.loads, lines) if isinstance(r.get("body"), dict)]


def _texts(message: dict[str, Any]) -> list[str]:
    content = message["content"]
    if isinstance(content, str):
        return [content]
    return [c["text"] for c in content if c.get("type") == "text"]


def _hook_context(text: str, label: str) -> str | None:
    """The context a Claude Code system message carries for hook ``label`` (say
    ``UserPromptSubmit``): the header and the fenced lessons after "LABEL hook additional
    context: ", up to the last fence's end (the host may merge more text after it)."""
    marker = f"{label} hook additional context: "
    if marker not in text:
        return None
    rest = text[text.index(marker) + len(marker) :]
    assert rest.startswith(HEADER + "\n<vault-memory "), rest[:200]
    end = len(HEADER)
    while rest.startswith("\n<vault-memory ", end):
        end = rest.index("</vault-memory>", end) + len("</vault-memory>")
    return rest[:end]


def _claude_contexts(body: dict[str, Any]) -> list[tuple[int, str, str]]:
    """(message index, hook label, context) of every recall context in a request."""
    found = []
    for at, message in enumerate(body["messages"]):
        for text in _texts(message) if message["role"] == "system" else []:
            for label in ("UserPromptSubmit", "PreToolUse:Read"):
                if (context := _hook_context(text, label)) is not None:
                    found.append((at, label, context))
    return found


def _prompt_at(body: dict[str, Any], prompt: str) -> int:
    return next(i for i, m in enumerate(body["messages"]) if prompt in _texts(m))


def _lessons(context: str) -> list[str]:
    return [part.split('.md"', 1)[0] for part in context.split(FENCE.split("{}")[0])[1:]]


def test_claude_print_mode_sends_the_prompt_moment_in_the_system_message_after_the_prompt() -> None:
    """``claude -p`` (record.py ``recall``): the UserPromptSubmit context reaches the model as
    part of the ``role: "system"`` message right after the prompt, merged there after the
    SessionStart output; the Read's PreToolUse context as its own system message after the
    tool result. Every later request carries both again."""
    first, second = _requests(CLAUDE / "recall")
    prompt = _prompt_at(first, "VKSCN:recall fix the cart totals rounding")
    assert [(at, label, _lessons(c)) for at, label, c in _claude_contexts(first)] == [
        (prompt + 1, "UserPromptSubmit", ["cart-rounding"])
    ]
    merged = _texts(first["messages"][prompt + 1])[0]
    assert merged.startswith("SessionStart:startup hook success: ")
    found = _claude_contexts(second)
    assert [(at - prompt, label) for at, label, _ in found] == [
        (1, "UserPromptSubmit"),
        (4, "PreToolUse:Read"),  # prompt, system, tool_use, tool_result, system
    ]
    (_, _, prompt_context), (_, _, file_context) = found
    assert _lessons(prompt_context) == ["cart-rounding"]
    assert _lessons(file_context) == ["billing-decimal"] and MASKED in file_context
    assert all(len(c) <= config.MOMENT_MAX_CHARS for _, _, c in found)
    assert "ghp_" not in (CLAUDE / "recall" / "model-requests.jsonl").read_text(encoding="utf-8")


def test_claude_interactive_sends_each_prompts_moment_right_after_that_prompt() -> None:
    """The interactive TUI under tmux (record.py ``recall-interactive``): turn 1's prompt
    context in the system message after it (merged with the SessionStart output), the
    Read's after the tool result, and turn 2's in the system message right after turn 2's
    prompt; its lesson's planted token masked, every context within the budget."""
    folder = CLAUDE / "recall-interactive"
    last = _requests(folder)[-1]
    turn1 = _prompt_at(last, "VKSCN:tui1 fix the cart totals rounding")
    turn2 = _prompt_at(last, "VKSCN:tui2 make the invoice job retry safely")
    found = _claude_contexts(last)
    assert [(at, label, _lessons(c)) for at, label, c in found] == [
        (turn1 + 1, "UserPromptSubmit", ["cart-rounding"]),
        (turn1 + 4, "PreToolUse:Read", ["billing-decimal"]),
        (turn2 + 1, "UserPromptSubmit", ["invoice-retry"]),
    ]
    assert all(last["messages"][at]["role"] == "system" for at, _, _ in found)
    assert MASKED in found[1][2] and MASKED in found[2][2]
    assert all(len(c) <= config.MOMENT_MAX_CHARS for _, _, c in found)
    assert "ghp_" not in (folder / "model-requests.jsonl").read_text(encoding="utf-8")
    # each one served once, as the usage log says, under the prompt ids the host sent
    hooks = sorted((folder / "hooks").glob("*-UserPromptSubmit.json"))
    ids = [json.loads(h.read_text(encoding="utf-8"))["prompt_id"] for h in hooks]
    uses = (folder / "vault-uses.jsonl").read_text(encoding="utf-8").splitlines()
    receipts = [json.loads(line)["receipt"] for line in uses]
    assert receipts == [f"recall:prompt:{ids[0]}", "recall:file:toolu_vk_tui_1",
                        f"recall:prompt:{ids[1]}"]  # fmt: skip


def test_claude_sends_json_context_and_plain_stdout_alike() -> None:
    """Why the hook keeps printing ``hookSpecificOutput.additionalContext`` for Claude Code:
    in record.py's ``hook-context`` run (``-p``) a UserPromptSubmit hook's JSON context and
    another's plain stdout both reached the model, in the system message after the prompt
    ("... hook additional context: ..." and "... hook success: ...")."""
    first = _requests(CLAUDE / "hook-context")[0]
    message = first["messages"][_prompt_at(first, "VKSCN:context hello") + 1]
    after = _texts(message)[0]
    assert message["role"] == "system"
    assert "UserPromptSubmit hook additional context: VKCTX: " in after
    assert "UserPromptSubmit hook success: VKPLAIN: " in after


def test_codex_recorded_run_sends_both_moments_fenced_and_masked_to_the_model() -> None:
    """record.py's recall scenario, Codex: the prompt's lesson as a developer
    message right after the prompt, the file's right after the function call."""
    last = _requests(CODEX / "recall")[-1]["input"]
    texts = [
        (item.get("type"), item.get("role"), " ".join(c.get("text", "") for c in item["content"]))
        if item.get("type") == "message"
        else (item.get("type"), None, item.get("call_id", ""))
        for item in last
    ]
    at = texts.index(("message", "user", "VKSCN:recall fix the cart totals rounding"))
    kind, role, prompt_context = texts[at + 1]
    assert (kind, role) == ("message", "developer")
    assert prompt_context.startswith(HEADER + "\n" + FENCE.format("cart-rounding"))
    assert prompt_context.endswith("</vault-memory>")
    assert texts[at + 2] == ("function_call", None, "call_vk_recall_1")
    kind, role, file_context = texts[at + 3]
    assert (kind, role) == ("message", "developer")
    assert FENCE.format("billing-decimal") in file_context
    assert MASKED in file_context and "ghp_" not in file_context
    assert max(len(prompt_context), len(file_context)) <= config.MOMENT_MAX_CHARS
