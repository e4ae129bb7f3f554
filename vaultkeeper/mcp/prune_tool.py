"""The ``apply_prune`` tool: a deletion asked in the host's dialog (prune.py).

No ``from __future__ import annotations`` here: the SDK reads the tool's and the
resolvers' annotations at registration, and ``Resolve(asker)`` names closures over the
vault's tools, which only exist as values when the function is defined.
"""

from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Context, Elicit, ElicitationResult, MCPServer, Resolve
from mcp.types import ToolAnnotations

from vaultkeeper import config
from vaultkeeper.apply.decision import Decision
from vaultkeeper.mcp import prune as mcp_prune
from vaultkeeper.mcp.apply import run
from vaultkeeper.mcp.shapes import DryRun, ExpectHash, OutcomeOut, Target
from vaultkeeper.mcp.tools import VaultTools, outcome_dict


def register(app: MCPServer, tools: VaultTools) -> None:
    seen, asker = _prune_question(tools)

    @app.tool(
        name="apply_prune",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True),
        description="Ask the person to delete a registry pattern NAME or an entry file "
        "PATH. The host shows them exactly what will go and they must type its name; only "
        "then does it move to .trash/ (restorable). A wrong name keeps it (silence). A "
        "decline, a cancel, no answer, or a host without dialogs queues it for "
        "`vaultkeeper review` (outcome ask): tell the user, do not retry.",
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
        confirm: Any
        if not mcp_prune.can_elicit(ctx.client_capabilities):
            confirm = mcp_prune.no_dialog
        elif _rounds(ctx):  # 2026-07-28: the answer came back with the retried call
            confirm = mcp_prune.no_dialog if shown is None else mcp_prune.answered(answer, shown)
        else:  # older: elicitation/create over the back-channel, mid-call
            confirm = mcp_prune.in_dialog(ctx.elicit, config.MCP_ELICIT_TIMEOUT_SECONDS)
        return await run(OutcomeOut, lambda: outcome_dict(tools.apply(decision, dry_run, confirm)))


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
        try:
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
