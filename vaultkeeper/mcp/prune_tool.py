"""The ``apply_prune`` tool: a deletion queued for review, or asked in the host's dialog
where the person turned it on and no hook could answer it (hosts/elicitation.py, prune.py).

No ``from __future__ import annotations`` here: the SDK reads the tool's and the
resolvers' annotations at registration, and ``Resolve(asker)`` names closures over the
vault's tools, which only exist as values when the function is defined.
"""

import os
from pathlib import Path
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Context, Elicit, ElicitationResult, MCPServer, Resolve
from mcp.types import ToolAnnotations

from vaultkeeper import config
from vaultkeeper.apply.decision import Decision
from vaultkeeper.hosts import elicitation
from vaultkeeper.mcp import prune as mcp_prune
from vaultkeeper.mcp.apply import run
from vaultkeeper.mcp.shapes import DryRun, ExpectHash, OutcomeOut, Target
from vaultkeeper.mcp.tools import VaultTools, outcome_dict


def register(app: MCPServer, tools: VaultTools) -> None:
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
        answer: Annotated[ElicitationResult[mcp_prune.TypeTheName], Resolve(asker)],
        shown: Annotated[str | None, Resolve(seen)],
        expect_hash: ExpectHash = None,
        dry_run: DryRun = False,
    ) -> OutcomeOut:
        decision = Decision("prune", target, expect_hash=expect_hash)
        host, rounds = _host(ctx), _rounds(ctx)
        capable = mcp_prune.can_elicit(ctx.client_capabilities)

        def call() -> dict[str, Any]:
            confirm: Any
            why = None if dry_run else _refusal(capable, host)
            if why is not None:  # nobody is asked: queued for review, saying why
                confirm = mcp_prune.Queued(why)
            elif rounds:  # 2026-07-28: the answer came back with the retried call
                confirm = mcp_prune.no_dialog
                if shown is not None:
                    confirm = mcp_prune.answered(answer, shown, host)
            else:  # older: elicitation/create over the back-channel, mid-call
                timeout = config.MCP_ELICIT_TIMEOUT_SECONDS
                confirm = mcp_prune.in_dialog(ctx.elicit, timeout, host)
            return outcome_dict(tools.apply(decision, dry_run, confirm))

        return await run(OutcomeOut, call)


def _host(ctx: Context) -> str:
    """The host as the journal names it, from the clientInfo it sent (None: "the host")."""
    params = ctx.session.client_params
    info = getattr(params, "client_info", None)
    return elicitation.host_label(getattr(info, "name", None), getattr(info, "title", None))


def _refusal(capable: bool, host: str) -> str | None:
    """Why nobody is asked in the host's dialog now (read at each call: a hook added
    mid-session counts), or None."""
    if capable or not elicitation.opted_in(os.environ):  # off by default: it says so first
        return elicitation.refusal(host, os.environ, Path.cwd())
    return mcp_prune.NO_DIALOG


def _rounds(ctx: Context) -> bool:
    """Does this client take questions as InputRequiredResult rounds (>= 2026-07-28)?"""
    version = ctx.protocol_version
    # revisions are named by date (YYYY-MM-DD): a later one sorts after
    return version is not None and version >= config.MCP_ROUNDS_VERSION


def _prune_question(tools: VaultTools) -> tuple[Any, Any]:
    """The SDK resolvers of apply_prune's question at 2026-07-28: ``seen`` reads what
    would go (the question's text, or None: no question), ``asker`` asks it. Both re-run
    on every round; the SDK consumes an answer only for the question it was asked."""

    async def seen(
        target: str, ctx: Context, expect_hash: str | None = None, dry_run: bool = False
    ) -> str | None:
        if dry_run or not _rounds(ctx) or not mcp_prune.can_elicit(ctx.client_capabilities):
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
        return mcp_prune.message(found)

    async def asker(
        shown: Annotated[str | None, Resolve(seen)],
    ) -> Elicit[mcp_prune.TypeTheName] | None:
        return None if shown is None else Elicit(shown, mcp_prune.TypeTheName)

    return seen, asker
