"""The MCP server's apply tools, and ``run``: how every tool calls the core.

Each apply tool builds one Decision and hands it to the applier's single entry point
(``apply_decision``, via VaultTools.apply): the same gates, outcomes and journal line as
``vaultkeeper apply ...``. ``apply_prune`` (prune_tool.py) passes a confirm callback
that asks the person in the host's dialog (prune.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypeVar, cast

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from vaultkeeper.apply.decision import Decision
from vaultkeeper.errors import explain
from vaultkeeper.mcp.shapes import (
    WRITES,
    DryRun,
    Entry,
    Evidence,
    ExpectHash,
    OutcomeOut,
    Result,
    Target,
    arg,
)
from vaultkeeper.mcp.stop import guarded
from vaultkeeper.mcp.tools import VaultTools, outcome_dict

T = TypeVar("T")


async def run(shape: type[T], call: Callable[[], Any]) -> T:
    """Run a blocking core call off the event loop; refusals become tool errors.

    ``shape`` is the tool's output type: the dict the core call builds has its keys.
    """
    try:
        return cast(T, await anyio.to_thread.run_sync(guarded(call)))  # Ctrl-C waits
    except Exception as exc:  # a refusal, an OS error, a bug: one line, as at the CLI
        raise ToolError(explain(exc)[0]) from None


async def apply(tools: VaultTools, decision: Decision, dry_run: bool = False) -> OutcomeOut:
    """One decision through the applier, as the tool's structured outcome."""
    return await run(OutcomeOut, lambda: outcome_dict(tools.apply(decision, dry_run)))


def register(app: MCPServer, tools: VaultTools) -> None:
    """Four apply tools, each one Decision through the applier's single entry point
    (the fifth, apply_prune, is prune_tool.py's)."""

    @app.tool(
        name="apply_promote",
        annotations=WRITES,
        description="Promote registry pattern NAME into skills/NAME/SKILL.md (or merge into "
        "an existing skill). Gate: success count >= 2 read now, a real receipt as evidence, "
        "not promoted yet. Outcome act = promoted, silence = already done, defer = refused "
        "(the reason says which gate), as `vaultkeeper apply promote`; always journaled.",
    )
    async def apply_promote(
        name: Annotated[str, arg("The registry pattern's NAME (its ### heading).")],
        evidence: Evidence,
        expect_hash: ExpectHash = None,
        dry_run: DryRun = False,
    ) -> OutcomeOut:
        decision = Decision("promote", name, evidence, expect_hash=expect_hash)
        return await apply(tools, decision, dry_run)

    @app.tool(
        name="apply_revalidate",
        annotations=WRITES,
        description="Record the re-check of a held_out entry against its "
        "falsification_condition once its holdout_until has passed: result pass -> active "
        "(the receipt joins provenance), fail -> archived. Failing a validated-override "
        "entry becomes ask (a person decides). Outcomes as `vaultkeeper apply revalidate`.",
    )
    async def apply_revalidate(
        path: Entry,
        result: Annotated[Result, arg("pass (the condition held off) or fail (falsified).")],
        evidence: Evidence,
        expect_hash: ExpectHash = None,
        dry_run: DryRun = False,
    ) -> OutcomeOut:
        decision = Decision("revalidate", path, evidence, result, expect_hash=expect_hash)
        return await apply(tools, decision, dry_run)

    @app.tool(
        name="apply_reactivate",
        annotations=WRITES,
        description="Bring an archived entry back to active on new evidence, whatever its "
        "label; the receipt joins its provenance. An entry in any other status is refused "
        "(defer, with the reason). Outcomes as `vaultkeeper apply reactivate`.",
    )
    async def apply_reactivate(
        path: Entry, evidence: Evidence, expect_hash: ExpectHash = None, dry_run: DryRun = False
    ) -> OutcomeOut:
        decision = Decision("reactivate", path, evidence, expect_hash=expect_hash)
        return await apply(tools, decision, dry_run)

    @app.tool(
        name="apply_skip",
        annotations=WRITES,
        description="Leave a candidate (pattern NAME or entry path) alone on purpose, saying "
        "why; the choice is journaled (outcome silence) so the next session sees it was "
        "considered, not forgotten.",
    )
    async def apply_skip(
        target: Target, reason: Annotated[str, arg("Why it is left alone, in a sentence.")]
    ) -> OutcomeOut:
        decision = Decision("skip", target, reason=reason)
        return await apply(tools, decision)
