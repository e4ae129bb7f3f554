"""``apply_prune`` over MCP: a deletion asked in the host's own dialog, when allowed.

By default a deletion through MCP is queued for ``vaultkeeper review`` and the tool says
so: the hosts do not reliably show the dialog to a person (Codex answers cancel unseen,
``claude -p`` answers cancel itself, a Claude Code ``Elicitation`` hook can answer accept).
The dialog is an opt-in, refused while a hook could answer it (hosts/elicitation.py). When it is
used, MCP elicitation (form mode) puts the question in the host's UI: its first four
lines say what goes (kind and name, a one-line summary, the count, how to answer), as
Claude Code shows four lines before "(+N more lines)"; then exactly the text that goes
(control characters escaped so nothing in a note can redraw the dialog). The one
required field: the entry's name, typed. Only "accept" with that exact name deletes,
through the same prune function as the terminal, journaled as "accepted in <host>'s
dialog" (what is known: that the host's dialog accepted, not who); a wrong name keeps
it (silence: something typed it).

How the question travels depends on the protocol the client speaks:
- 2026-07-28 (Claude Code 2.1.3xx): no back-channel. The tool's ``answer`` parameter is
  filled by the SDK resolver ``asker`` returning ``Elicit(message, TypeTheName)``: the
  first round returns an ``InputRequiredResult`` and the client retries the call with
  the answer (``Answered`` judges it against the plan read again).
- older (Codex 0.169 sends 2025-06-18): ``elicitation/create`` mid-call (``InDialog``,
  with a time limit).
Whatever no person is known to have answered (a decline or cancel, which ``codex exec``
and ``claude -p`` send by themselves; an error; no answer in time; a client that
declared no elicitation; the dialog off or refused) deletes nothing and queues the
request for ``vaultkeeper review`` (outcome ask).

Imports pydantic (an MCP SDK dependency); only mcp/apply.py imports this module.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from vaultkeeper import config
from vaultkeeper.apply.prune import NoAnswer, PrunePlan
from vaultkeeper.hosts.elicitation import accepted
from vaultkeeper.registry.blocks import first_paragraph
from vaultkeeper.search.hits import inert
from vaultkeeper.store.frontmatter import load_yaml, split_frontmatter
from vaultkeeper.store.model import ParseError


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


SUMMARY_CHARS = 160  # the dialog's summary line, cut: one line of the host's dialog


def summary(plan: PrunePlan) -> str:
    """One line on what goes: a block's first paragraph of prose; a file's description
    (else its body's first paragraph)."""
    if plan.kind == "block":
        found = first_paragraph(plan.text.partition("\n")[2])
    else:
        found = ""
        try:
            front, _, body_at = split_frontmatter(plan.text)
            data = load_yaml(front) if front is not None else None
        except ParseError:  # a broken frontmatter: the body's first words say what it is
            front, body_at, data = None, 0, None
        if isinstance(data, dict) and isinstance(data.get("description"), str):
            found = data["description"]
        found = found.strip() or first_paragraph(plan.text[body_at:].lstrip("#").strip())
    line = " ".join(found.split()) or "(no summary)"
    return line if len(line) <= SUMMARY_CHARS else line[: SUMMARY_CHARS - 3] + "..."


def _count(plan: PrunePlan) -> str:
    lines = plan.text.rstrip("\n").count("\n") + 1
    size = f"{lines} line{'s' if lines != 1 else ''} from {plan.where}"
    if plan.kind != "block":
        return f"No success count (an entry file); {size}."
    used = plan.block.last_used if plan.block is not None else None
    count = "unreadable" if plan.count is None else str(plan.count)
    last = f", last used {used.isoformat()}" if used is not None else ""
    return f"Success count {count}{last}; {size}."


def message(plan: PrunePlan) -> str:
    """The question, what goes in its first four lines (Claude Code shows four before
    "(+N more lines)"): kind and name, the summary, the count, how to answer; then the
    details. Every value from the vault made inert."""
    what = "registry block" if plan.kind == "block" else "entry file"
    name = inert(expected_name(plan))
    return "\n".join(
        [
            f"Delete the {what} {inert(plan.target)}?",
            f"What it is: {inert(summary(plan))}",
            inert(_count(plan)),
            f"To delete it, type {name} below and accept; decline or cancel keeps it.",
            f"It moves to {config.TRASH_DIR}/ in the vault; `vaultkeeper restore ID` brings "
            "it back. Exactly this goes:",
            "-" * 40,
            inert(plan.text.rstrip("\n")),
            "-" * 40,
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
    ``confirmed_via`` and ``yes_reason`` go into the journal line of a deletion it said
    yes to: the host's dialog accepted, which is all that is known."""

    elicit: Elicit
    timeout: float
    host: str = "the host"
    confirmed_via: str = config.CONFIRMED_VIA_MCP

    @property
    def yes_reason(self) -> str:
        return accepted(self.host)

    def __call__(self, plan: PrunePlan) -> Verdict:
        import anyio

        return anyio.from_thread.run(ask, self.elicit, plan, self.timeout)


def in_dialog(elicit: Elicit, timeout: float, host: str = "the host") -> InDialog:
    return InDialog(elicit, timeout, host)


@dataclass(frozen=True)
class Answered:
    """The applier's confirm callback for an answer the client sent back (2026-07-28):
    it holds only for the question asked, so an entry that changed since is re-decided."""

    action: str
    typed: str | None
    asked: str
    host: str = "the host"
    confirmed_via: str = config.CONFIRMED_VIA_MCP

    @property
    def yes_reason(self) -> str:
        return accepted(self.host)

    def __call__(self, plan: PrunePlan) -> Verdict:
        if message(plan) != self.asked:
            return NoAnswer("the entry changed after the question was shown")
        return judge(self.action, self.typed, plan)


def answered(result: Any, asked: str, host: str = "the host") -> Answered:
    """An ElicitationResult (accepted, declined or cancelled) as a confirm callback."""
    data = getattr(result, "data", None)
    action = str(getattr(result, "action", ""))
    return Answered(action, getattr(data, "name", None), asked, host)


def can_elicit(capabilities: Any) -> bool:
    """Did the client declare form-mode elicitation? (``elicitation: {}`` means form.)"""
    found = getattr(capabilities, "elicitation", None)
    if found is None:
        return False
    return getattr(found, "form", None) is not None or getattr(found, "url", None) is None


NO_DIALOG = "this host shows no dialog (it declared no form elicitation)"


def no_dialog(plan: PrunePlan) -> NoAnswer:
    """The confirm callback where the client declared no dialog (form elicitation)."""
    return NoAnswer(NO_DIALOG)


@dataclass(frozen=True)
class Queued:
    """The confirm callback where the dialog may not be used (elicitation.refusal): nobody is
    asked, the request is queued for review with the reason."""

    why: str

    def __call__(self, plan: PrunePlan) -> NoAnswer:
        return NoAnswer(self.why)
