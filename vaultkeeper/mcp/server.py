"""``vaultkeeper mcp``: the vault as a stdio MCP server (the optional ``mcp`` extra).

Each tool runs one VaultTools method (mcp/tools.py: the CLI's core functions) in a worker
thread through ``run`` and returns its dict as structured output; a refusal is a tool
error carrying the CLI's one line. An apply tool hands one Decision to the applier (the
gates, outcomes and journal of ``vaultkeeper apply``); ``apply_prune`` is mcp/prune.py's.

A ``tools/call``'s host session comes from the ids in ``_meta`` (recorded in
tests/fixtures/hosts/*/mcp/mcp-traffic.jsonl): Codex's ``sessionId`` and ``threadId``;
Claude Code's ``claudecode/toolUseId``, the call's ``tool_use`` id, found in the tail of
one of its newest transcripts under ``~/.claude/projects/<the server's cwd, sanitized>/``.
None when no id says: the server's own session counts then.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, TypeVar, cast

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError

from vaultkeeper import __version__, config
from vaultkeeper.apply.decision import Decision
from vaultkeeper.errors import VaultkeeperError, explain
from vaultkeeper.mcp import prune
from vaultkeeper.mcp.shapes import (
    READ_ONLY,
    WRITES,
    Anchors,
    Body,
    CiteOut,
    Description,
    DryRun,
    Entry,
    Evidence,
    ExpectHash,
    Falsify,
    Kind,
    Name,
    NewOut,
    OutcomeOut,
    Path_,
    Project,
    ReadOut,
    RecallOut,
    ReportOut,
    Result,
    SearchOut,
    StatusOut,
    Target,
    arg,
)
from vaultkeeper.mcp.stop import guarded
from vaultkeeper.mcp.tools import Now, VaultTools, outcome_dict
from vaultkeeper.native.folders import projects_dir, sanitize
from vaultkeeper.store.vault import resolve_inside

T = TypeVar("T")

INSTRUCTIONS = (
    "vaultkeeper keeps this user's markdown memory vault (lessons, decisions, a registry "
    "of reusable patterns). Call `recall` at the start of a task and `search` before "
    "re-deriving something; `read` a hit's path, and `cite` a pattern or note you actually "
    "used. Record what you learn with `new_lesson` (held out until re-checked) or "
    "`new_decision`. `apply_*` tools carry out the scanner's candidates through gates: "
    "outcome act = done, silence = nothing to do, defer = refused (read the reason), "
    "ask = waiting for a person. Deleting (`apply_prune`) needs the person's yes: it is "
    "queued for `vaultkeeper review` (tell the user) unless they turned the host's dialog on."
)


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


NEW_TOOLS = (
    (
        "memory",
        "new_lesson",
        "Record a lesson learned as projects/PROJECT/memory/NAME.md, as `vaultkeeper new "
        "memory` does: it starts held_out (label inferred) until its hold-out date, when it "
        "is re-checked against its falsification_condition with apply_revalidate. Refused if "
        "the name is taken anywhere in the vault. Returns the path and the index line added.",
    ),
    (
        "decision",
        "new_decision",
        "Record a decision (what was decided, why, what was rejected) as "
        "projects/PROJECT/memory/NAME.md with type decision, as `vaultkeeper new decision` "
        "does. Refused if the name is taken. Returns the path and the index line added.",
    ),
)


def build(vault: Path, now: Now, session: str) -> MCPServer:
    """The server for ``vault``; ``session`` names this server's uses in the usage log."""
    tools = VaultTools(vault, now, session)
    app = MCPServer(
        config.MCP_SERVER_NAME, instructions=INSTRUCTIONS, version=__version__, log_level="WARNING"
    )

    # reading
    @app.tool(
        name="recall",
        annotations=READ_ONLY,
        description="What a session should know before it starts, as the session-start "
        "hook serves it: how to use the vault, the lessons of the project (named, or matched "
        "from cwd), the registry's patterns most used first, and what the last scan found "
        "waiting (promote, prune, held-out due) with the command for each. Call it once when "
        "a task starts. `available` is false when no scan has completed yet.",
    )
    async def recall(
        project: Annotated[str | None, arg("The project folder under projects/, if known.")] = None,
        cwd: Annotated[str | None, arg("The agent's working folder (names the project).")] = None,
    ) -> RecallOut:
        return await run(RecallOut, lambda: tools.recall(project, cwd))

    @app.tool(
        name="search",
        annotations=READ_ONLY,
        description="Find entries (lessons, decisions, research, references, registry "
        "patterns) by words in their names, descriptions and bodies; best first. Each hit "
        "gives the path and line to `read`, a snippet, the [[link]] to write in a note and "
        "`cite`, the value to pass to the cite tool. Archived and superseded entries are "
        "left out unless include_archived is true. Cheap: call it freely.",
    )
    async def search(
        query: Annotated[str, arg("Words to look for (any order; more matches rank higher).")],
        kind: Annotated[Kind | None, arg("Only entries of this kind.")] = None,
        project: Annotated[str | None, arg("Only entries under projects/PROJECT/.")] = None,
        limit: Annotated[
            int, arg(f"Most hits returned (1..{config.SEARCH_MAX_LIMIT}).")
        ] = config.SEARCH_DEFAULT_LIMIT,
        include_archived: Annotated[bool, arg("Also archived / superseded entries.")] = False,
    ) -> SearchOut:
        options = dict(kind=kind, project=project, limit=limit, include_archived=include_archived)
        return await run(SearchOut, lambda: tools.search(query, **options))

    @app.tool(
        name="read",
        annotations=READ_ONLY,
        description="One entry's full text (frontmatter and body) by its vault-relative "
        "path, as `search` gives it. Paths outside the vault, and vaultkeeper's own state "
        "files, are refused.",
    )
    async def read(path: Path_) -> ReadOut:
        return await run(ReadOut, lambda: tools.read(path))

    @app.tool(
        name="report",
        annotations=READ_ONLY,
        description="The last completed scan's full report as data: every promote, prune "
        "and held-out candidate with its path, line, figures and hash (pass the hash as "
        "expect_hash to an apply tool), and the problems found.",
    )
    async def report() -> ReportOut:
        return await run(ReportOut, tools.report)

    @app.tool(
        name="status",
        annotations=READ_ONLY,
        description="The vault's health in one verdict (ok, warn, fail) with every signal "
        "behind it: candidates waiting, overdue hold-outs, asks queued for a person, lint "
        "findings, the last scan's age, journal size, index budget; each with what to do.",
    )
    async def status() -> StatusOut:
        return await run(StatusOut, tools.status)

    # writing
    @app.tool(
        name="cite",
        annotations=WRITES,
        description="Record that you used a registry pattern (by NAME) or a note (by its "
        "path) in this session, with evidence of where. A pattern's success count rises "
        "once per session however often it is cited (its last-used date too), which is "
        "what later promotes it; the use is journaled and logged. An unknown name is an "
        "error: `search` first.",
    )
    async def cite(
        name: Annotated[str, arg("A pattern NAME or a note's vault path (a hit's cite).")],
        evidence: Annotated[str, arg("Where it was used: a path:line, a URL or a sentence.")],
        ctx: Context,
    ) -> CiteOut:
        meta = ctx.request_context.meta  # the host's ids of this call (mcp/server.py)
        home, cwd = Path(os.environ.get("HOME") or Path.home()), Path.cwd()
        call = functools.partial(
            tools.cite, name, evidence, lambda: host_session(meta, home, cwd), tool_use(meta)
        )
        return await run(CiteOut, call)

    for kind, tool, doc in NEW_TOOLS:
        _new_tool(app, tools, kind, tool, doc)

    # carrying out the scanner's candidates
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

    prune.register(app, tools, run)

    # resources
    @app.resource(
        "vault://index",
        name="index",
        mime_type="text/markdown",
        description="The vault's _index.md: one line per entry, the map to start from.",
    )
    def index() -> str:  # confined as every read: an _index.md linked out is refused
        return _text(lambda: tools.text(resolve_inside(tools.vault, config.INDEX_FILE)))

    @app.resource(
        "vault://entry/{+path}",
        name="entry",
        mime_type="text/markdown",
        description="One entry by its vault-relative path; paths outside the vault are refused.",
    )
    def entry(path: str) -> str:
        return _text(lambda: tools.read(path)["text"])

    return app


def _new_tool(app: MCPServer, tools: VaultTools, kind: str, tool: str, doc: str) -> None:
    """new_lesson / new_decision: one tool per kind of entry, the same arguments."""

    @app.tool(name=tool, annotations=WRITES, description=doc)
    async def new(
        name: Name,
        description: Description,
        project: Project,
        body: Body = None,
        falsification_condition: Falsify = None,
        anchors: Anchors = None,
    ) -> NewOut:
        call = functools.partial(
            tools.new, kind, name, description, project, body, falsification_condition,
            tuple(anchors or ()),
        )  # fmt: skip
        return await run(NewOut, call)


def _text(read: Callable[[], str]) -> str:
    try:
        return read()
    except VaultkeeperError as exc:
        raise ResourceError(str(exc)) from None


CODEX_KEYS = ("sessionId", "threadId")
CLAUDE_TOOL_USE = "claudecode/toolUseId"
_LOOK_IN = 8  # transcripts, newest first
_TAIL_BYTES = 4 << 20  # the call was just made: it is near the end of its transcript
_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,200}$")


def tool_use(meta: Mapping[str, Any] | None, key: str = CLAUDE_TOOL_USE) -> str | None:
    """The id the host sent under ``key`` in ``_meta`` (Claude Code's tool_use id)."""
    found = (meta or {}).get(key)
    return found if isinstance(found, str) and _ID.match(found) else None


def host_session(meta: Mapping[str, Any] | None, home: Path, cwd: Path) -> str | None:
    """The host's session id of this call, or None when the host said nothing of it."""
    found = next(filter(None, (tool_use(meta, key) for key in CODEX_KEYS)), None)
    call = tool_use(meta)
    return found or (None if call is None else claude_session(call, home, cwd))


def claude_session(call: str, home: Path, cwd: Path) -> str | None:
    """The Claude Code transcript (its file's stem) whose tail holds tool_use ``call``."""
    folder = projects_dir(home) / sanitize(str(cwd))
    try:
        files = sorted(folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return None
    needle = f'"id":"{call}"'.encode()
    for path in files[:_LOOK_IN]:
        try:
            with path.open("rb") as fh:
                size = fh.seek(0, 2)
                fh.seek(max(0, size - _TAIL_BYTES))
                if needle in fh.read():
                    return path.stem
        except OSError:
            continue
    return None
