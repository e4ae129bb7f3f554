"""``apply_prune`` over MCP: a deletion queued for ``vaultkeeper review``, or asked in the
host's own dialog where the person turned it on and no hook could answer it.

The hosts do not reliably show a dialog to a person (Codex answers cancel unseen,
``claude -p`` cancels itself, a Claude Code ``Elicitation`` hook can answer accept), so the
dialog is an opt-in, refused while a hook could answer it (hosts/elicitation.py). Form
elicitation's first four lines say what goes (Claude Code shows four before "(+N more
lines)"), then exactly the text that goes, made inert; the one field is the entry's name:
only "accept" with that exact name deletes (journaled "accepted in <host>'s dialog"); a
wrong name keeps it (silence); whatever no person is known to have answered queues it.

At 2026-07-28 (Claude Code 2.1.3xx) the ``answer`` parameter is filled by the SDK resolver
``asker`` (an ``InputRequiredResult`` round, judged against the plan read again); older
clients (Codex sends 2025-06-18) get ``elicitation/create`` mid-call, with a time limit.

No ``from __future__ import annotations``: the SDK reads the tool's and the resolvers'
annotations at registration, and ``Resolve(asker)`` names closures that exist only as values.
"""

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Context, Elicit, ElicitationResult, MCPServer, Resolve
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from vaultkeeper import config
from vaultkeeper.apply.decision import Decision
from vaultkeeper.apply.prune import NoAnswer, PrunePlan
from vaultkeeper.hosts import elicitation
from vaultkeeper.mcp.shapes import DryRun, ExpectHash, OutcomeOut, Target
from vaultkeeper.mcp.tools import VaultTools, outcome_dict
from vaultkeeper.registry.blocks import first_paragraph
from vaultkeeper.search.rank import inert
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
    """The question: kind and name, the summary, the count, how to answer; then the
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


Elicit_ = Callable[[str, type[TypeTheName]], Awaitable[Any]]


def judged(result: Any, plan: PrunePlan) -> Verdict:
    """``judge`` of an ElicitationResult (accepted, declined or cancelled)."""
    typed = getattr(getattr(result, "data", None), "name", None)
    return judge(str(getattr(result, "action", "")), typed, plan)


async def ask(elicit: Elicit_, plan: PrunePlan, timeout: float) -> Verdict:
    """Put the question through ``elicit`` (Context.elicit) and judge the answer."""
    try:
        with anyio.fail_after(timeout):
            return judged(await elicit(message(plan), TypeTheName), plan)
    except TimeoutError:
        return NoAnswer(f"no answer in the host's dialog within {timeout:g} s")
    except Exception as exc:  # an error reply or a malformed answer: never a yes
        why = f"{type(exc).__name__}: {inert(str(exc))[:200]}"
        return NoAnswer(f"the host's dialog failed ({why})")


@dataclass(frozen=True)
class InDialog:
    """A confirm callback asking in the host's dialog: mid-call (``elicit``: from the tool
    call's worker thread onto the event loop, where the session is) or, at 2026-07-28, the
    ``answer`` the client sent back for the question ``asked`` (an entry changed since is
    re-decided). ``confirmed_via`` and ``yes_reason`` go into the journal line."""

    elicit: Elicit_ | None
    timeout: float = 0
    host: str = "the host"
    answer: Any = None
    asked: str | None = None
    confirmed_via = config.CONFIRMED_VIA_MCP

    @property
    def yes_reason(self) -> str:
        return f"accepted in {self.host}'s dialog"  # all that is known of the yes

    def __call__(self, plan: PrunePlan) -> Verdict:
        if self.elicit is not None:
            return anyio.from_thread.run(ask, self.elicit, plan, self.timeout)
        if message(plan) != self.asked:
            return NoAnswer("the entry changed after the question was shown")
        return judged(self.answer, plan)


def can_elicit(capabilities: Any) -> bool:
    """Did the client declare form-mode elicitation? (``elicitation: {}`` means form.)"""
    found = getattr(capabilities, "elicitation", None)
    if found is None:
        return False
    return getattr(found, "form", None) is not None or getattr(found, "url", None) is None


NO_DIALOG = "this host shows no dialog (it declared no form elicitation)"


@dataclass(frozen=True)
class Queued:
    """The confirm callback where nobody is asked: queued for review with the reason."""

    why: str

    def __call__(self, plan: PrunePlan) -> NoAnswer:
        return NoAnswer(self.why)


def register(app: MCPServer, tools: VaultTools, run: Callable[..., Awaitable[OutcomeOut]]) -> None:
    """The ``apply_prune`` tool; ``run`` is how every tool calls the core (server.run)."""
    seen, asker = _prune_question(tools)
    elicitation.remember(os.environ, Path.cwd())  # the hooks the session started with

    @app.tool(
        name="apply_prune",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True),
        description="Delete a registry pattern NAME or an entry file PATH, which needs the "
        "person's yes: by default the request is queued for `vaultkeeper review` (outcome "
        "ask: tell the user, do not retry). Where the person turned the host's dialog on, "
        "the host shows them exactly what will go and they must type its name; only then "
        "does it move to .trash/ (restorable). A wrong name keeps it (silence); a decline, "
        "a cancel or no answer queues it.",
    )
    async def apply_prune(
        target: Target,
        ctx: Context,
        answer: Annotated[ElicitationResult[TypeTheName], Resolve(asker)],
        shown: Annotated[str | None, Resolve(seen)],
        expect_hash: ExpectHash = None,
        dry_run: DryRun = False,
    ) -> OutcomeOut:
        decision = Decision("prune", target, expect_hash=expect_hash)
        host, rounds = _host(ctx), _rounds(ctx)
        capable = can_elicit(ctx.client_capabilities)

        def call() -> dict[str, Any]:
            confirm: Any
            why = None if dry_run else _refusal(capable, host)
            if why is not None:  # nobody is asked: queued for review, saying why
                confirm = Queued(why)
            elif rounds:  # 2026-07-28: the answer came back with the retried call
                confirm = (
                    Queued(NO_DIALOG) if shown is None else InDialog(None, 0, host, answer, shown)
                )
            else:  # older: elicitation/create over the back-channel, mid-call
                confirm = InDialog(ctx.elicit, config.MCP_ELICIT_TIMEOUT_SECONDS, host)
            return outcome_dict(tools.apply(decision, dry_run, confirm))

        return await run(OutcomeOut, call)


def _host(ctx: Context) -> str:
    """The host as the journal names it, from the clientInfo it sent (None: "the host")."""
    info = getattr(ctx.session.client_params, "client_info", None)
    return elicitation.host_label(getattr(info, "name", None), getattr(info, "title", None))


def _refusal(capable: bool, host: str) -> str | None:
    """Why nobody is asked in the host's dialog now (read at each call: a hook added
    mid-session counts), or None."""
    if capable or not elicitation.opted_in(os.environ):  # off by default: it says so first
        return elicitation.refusal(host, os.environ, Path.cwd())
    return NO_DIALOG


def _rounds(ctx: Context) -> bool:
    """Does this client take questions as InputRequiredResult rounds (>= 2026-07-28)?"""
    version = ctx.protocol_version  # revisions are dates (YYYY-MM-DD): a later one sorts after
    return version is not None and version >= config.MCP_ROUNDS_VERSION


def _prune_question(tools: VaultTools) -> tuple[Any, Any]:
    """The SDK resolvers of apply_prune's question at 2026-07-28: ``seen`` reads what
    would go (the question's text, or None: no question), ``asker`` asks it. Both re-run
    on every round; the SDK consumes an answer only for the question it was asked."""

    async def seen(
        target: str, ctx: Context, expect_hash: str | None = None, dry_run: bool = False
    ) -> str | None:
        if dry_run or not _rounds(ctx) or not can_elicit(ctx.client_capabilities):
            return None
        host = _host(ctx)
        try:
            if await anyio.to_thread.run_sync(lambda: _refusal(True, host)) is not None:
                return None  # the dialog is off or refused: the tool queues it, saying why
            found = await anyio.to_thread.run_sync(lambda: tools.prune_plan(target))
        except Exception:  # refused or not found: the applier says so, nobody is asked
            return None
        if expect_hash is not None and expect_hash != found.hash:
            return None
        return message(found)

    async def asker(
        shown: Annotated[str | None, Resolve(seen)],
    ) -> Elicit[TypeTheName] | None:
        return None if shown is None else Elicit(shown, TypeTheName)

    return seen, asker
