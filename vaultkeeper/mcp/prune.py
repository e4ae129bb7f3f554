"""``apply_prune`` over MCP: the person's yes comes through the host's own dialog.

MCP elicitation (form mode) puts a question to the person in the host's UI, where the
model cannot answer for them. The question shows exactly what will go (the text the
applier read, control characters escaped so nothing in a note can redraw the dialog)
and has one required field: the person types the entry's name. Only "accept" with
that exact name deletes, through the same prune function as the terminal; a wrong name
keeps it (silence: a person typed it).

How the question travels depends on the protocol the client speaks:
- 2026-07-28 (Claude Code 2.1.3xx): no back-channel. The tool's ``answer`` parameter is
  filled by the SDK resolver ``asker`` returning ``Elicit(message, TypeTheName)``: the
  first round returns an ``InputRequiredResult`` and the client retries the call with
  the person's answer (``Answered`` judges it against the plan read again).
- older (Codex 0.169 sends 2025-06-18): ``elicitation/create`` mid-call (``InDialog``,
  with a time limit).
Whatever no person is known to have answered (a decline or cancel, which ``codex exec``
sends by itself; an error; no answer in time; a client that declared no elicitation)
deletes nothing and queues the request for ``vaultkeeper review`` (outcome ask).

Imports pydantic (an MCP SDK dependency); only mcp/apply.py imports this module.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from vaultkeeper import config
from vaultkeeper.apply.prune import NoAnswer, PrunePlan
from vaultkeeper.search.hits import inert


class TypeTheName(BaseModel):
    """The form: one required text field."""

    name: str = Field(
        title="Type the name to delete it",
        description="Exactly the name shown above; anything else keeps it.",
    )


def expected_name(plan: PrunePlan) -> str:
    """What the person types: a block's name, or an entry file's name without .md."""
    if plan.kind == "block":
        return plan.target
    return plan.target.rsplit("/", 1)[-1].removesuffix(".md")


def message(plan: PrunePlan) -> str:
    """The question: what goes, from where, and how to undo it; every value made inert."""
    count = "" if plan.count is None else f" (success count {plan.count})"
    what = "registry block" if plan.kind == "block" else "entry file"
    return "\n".join(
        [
            f"vaultkeeper asks: delete the {what} {inert(plan.target)}{count}?",
            f"From {inert(plan.where)}. It moves to {config.TRASH_DIR}/ in the vault; "
            "`vaultkeeper restore ID` brings it back.",
            "Exactly this goes:",
            "-" * 40,
            inert(plan.text.rstrip("\n")),
            "-" * 40,
            f"To delete it, type {inert(expected_name(plan))} below and accept. "
            "Decline or cancel keeps it.",
        ]
    )


Verdict = bool | str | NoAnswer


def judge(action: str, typed: str | None, plan: PrunePlan) -> Verdict:
    """True only for accept with the exact name; a wrong name typed keeps it (a person
    typed it); anything else is no known answer of a person (queued for review)."""
    if action == "decline":  # `codex exec` declines by itself: no person is known
        return NoAnswer("the host declined the dialog (no person's answer is known)")
    if action == "cancel":
        return NoAnswer("the host's dialog was cancelled (no person's answer is known)")
    if action != "accept":
        return NoAnswer(f"the host answered {inert(action)!r}, not accept")
    want = expected_name(plan)
    if (typed or "").strip() != want:
        shown = inert((typed or "")[:80])
        return f"the name typed ({shown!r}) is not {want!r}"
    return True


Elicit = Callable[[str, type[TypeTheName]], Awaitable[Any]]


async def ask(elicit: Elicit, plan: PrunePlan, timeout: float) -> Verdict:
    """Put the question through ``elicit`` (Context.elicit) and judge the answer."""
    import anyio

    try:
        with anyio.fail_after(timeout):
            result = await elicit(message(plan), TypeTheName)
    except TimeoutError:
        return NoAnswer(f"no answer in the host's dialog within {timeout:g} s")
    except Exception as exc:  # an error reply or a malformed answer: never a yes
        why = f"{type(exc).__name__}: {inert(str(exc))[:200]}"
        return NoAnswer(f"the host's dialog failed ({why})")
    data = getattr(result, "data", None)
    return judge(str(getattr(result, "action", "")), getattr(data, "name", None), plan)


@dataclass(frozen=True)
class InDialog:
    """The applier's confirm callback: it runs in the worker thread the server started
    for the tool call, and puts the question on the event loop, where the session is.
    ``confirmed_via`` goes into the journal line of a deletion it said yes to."""

    elicit: Elicit
    timeout: float
    confirmed_via: str = config.CONFIRMED_VIA_MCP

    def __call__(self, plan: PrunePlan) -> Verdict:
        import anyio

        return anyio.from_thread.run(ask, self.elicit, plan, self.timeout)


def in_dialog(elicit: Elicit, timeout: float) -> InDialog:
    return InDialog(elicit, timeout)


@dataclass(frozen=True)
class Answered:
    """The applier's confirm callback for an answer the client sent back (2026-07-28):
    it holds only for the question asked, so an entry that changed since is re-decided."""

    action: str
    typed: str | None
    asked: str
    confirmed_via: str = config.CONFIRMED_VIA_MCP

    def __call__(self, plan: PrunePlan) -> Verdict:
        if message(plan) != self.asked:
            return NoAnswer("the entry changed after the question was shown")
        return judge(self.action, self.typed, plan)


def answered(result: Any, asked: str) -> Answered:
    """An ElicitationResult (accepted, declined or cancelled) as a confirm callback."""
    data = getattr(result, "data", None)
    return Answered(str(getattr(result, "action", "")), getattr(data, "name", None), asked)


def can_elicit(capabilities: Any) -> bool:
    """Did the client declare form-mode elicitation? (``elicitation: {}`` means form.)"""
    found = getattr(capabilities, "elicitation", None)
    if found is None:
        return False
    return getattr(found, "form", None) is not None or getattr(found, "url", None) is None


def no_dialog(plan: PrunePlan) -> NoAnswer:
    """The confirm callback where the client declared no dialog (form elicitation)."""
    return NoAnswer("this host shows no dialog (it declared no form elicitation)")
