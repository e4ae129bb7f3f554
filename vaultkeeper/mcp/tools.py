"""What each MCP tool does, as plain functions over one vault: no MCP import here.

The server (mcp/server.py) only checks arguments' types, calls one method and hands the
dict back as the tool's structured output. Every method goes through the same core
function as the matching CLI command (``report --brief``, ``new``, ``apply ...``), with
the same gates and the same journal lines; refusals raise VaultkeeperError, which the
server turns into a tool error carrying the same one line the CLI prints.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vaultkeeper import config
from vaultkeeper.apply.decision import Decision, Outcome
from vaultkeeper.errors import GateRefused, NotFoundError, UsageError
from vaultkeeper.store.model import ParseError, decode, read_regular
from vaultkeeper.store.secrets import needs_serving, served
from vaultkeeper.store.vault import rel, resolve_inside

if TYPE_CHECKING:
    from vaultkeeper.search.rank import Searcher

Now = Callable[[], dt.datetime]
MAX_ANCHORS = 20  # a new entry's anchors through MCP: each one reads a file of the repository
# The result field an agent reads first: what an outcome means for it.
MEANING = {
    "act": "applied",
    "silence": "left alone (or already done); nothing to do",
    "defer": "refused by a gate; nothing changed (the reason says why)",
    "ask": "waiting for a person; do not retry, tell the user to run `vaultkeeper review`",
}


def outcome_dict(outcome: Outcome) -> dict[str, Any]:
    """An applier outcome as the tools return it: the journal's fields plus the meaning."""
    fields = ("outcome", "action", "target", "reason", "id", "exit_code")
    found = {key: getattr(outcome, key) for key in fields}
    return found | {"meaning": MEANING[outcome.outcome], "record": outcome.to_dict()}


class VaultTools:
    """One vault's tools; ``now`` is read once per call (VAULTKEEPER_TODAY honoured).

    ``session`` names this server's uses in the usage log: a pattern cited twice in
    one session counts once, as for an ingested transcript.
    """

    def __init__(self, vault: Path, now: Now, session: str) -> None:
        self.vault = vault
        self.now = now
        self.session = session
        self._searcher: Searcher | None = None

    @property
    def searcher(self) -> Searcher:
        """Built at the first search (its index and ranking modules: not for the start)."""
        if self._searcher is None:
            from vaultkeeper.search.rank import Searcher

            self._searcher = Searcher(self.vault)
        return self._searcher

    # -- reading -------------------------------------------------------------------
    def recall(self, project: str | None = None, cwd: str | None = None) -> dict[str, Any]:
        """What ``report --brief --cwd`` prints: ``project`` names the folder under
        projects/ directly; else ``cwd`` (else the server's own folder) is matched."""
        from vaultkeeper.recall.start import render
        from vaultkeeper.scan.last import derived

        if project is not None:
            folder = resolve_inside(self.vault, f"{config.PROJECTS_DIR}/{project}")
            if "/" in project or not folder.is_dir():
                raise NotFoundError(f"{project}: no folder {config.PROJECTS_DIR}/{project}/")
            where = folder
        else:
            where = Path(cwd).expanduser() if cwd else Path.cwd()
        last = derived(self.vault)
        brief = render(self.vault, last, self.now(), where)
        return {"brief": brief, "available": last is not None, "note": None}

    def search(self, query: str, **options: Any) -> dict[str, Any]:
        """``vaultkeeper search --json``'s hits (search.rank.found takes the options)."""
        from vaultkeeper.scan.last import last_report
        from vaultkeeper.search.rank import found

        hits = found(self.searcher, query, report=lambda: last_report(self.vault), **options)
        return {"hits": hits, "count": len(hits)}

    def entry_path(self, path: str) -> Path:
        """A markdown file inside the vault, not vaultkeeper's own state; escapes refused."""
        if not path.strip() or "\x00" in path:
            raise UsageError("path must be a vault-relative path such as projects/p/memory/x.md")
        full = resolve_inside(self.vault, path)
        relative = rel(self.vault.resolve(), full)
        top = relative.split("/", 1)[0]
        if top in config.EXCLUDED_DIRS or top.startswith("."):
            raise UsageError(f"{relative}: not an entry (state/, .trash/ and hidden folders)")
        if full.suffix != ".md":
            raise UsageError(f"{relative}: not a markdown entry")
        if not full.is_file():
            raise NotFoundError(f"{relative}: no such file in the vault")
        return full

    def text(self, full: Path) -> str:
        """A file of the vault as an agent may see it: credentials masked, control characters
        stripped (line breaks kept, so the line numbers search gives still hold); a file that
        cannot be read is refused."""
        try:
            text = decode(read_regular(full))
        except ParseError as exc:
            raise UsageError(f"{rel(self.vault.resolve(), full)}: {exc.reason}") from None
        return served(text) if needs_serving(text) else text

    def read(self, path: str) -> dict[str, Any]:
        full = self.entry_path(path)
        relative = rel(self.vault.resolve(), full)
        text = self.text(full)
        unterminated = bool(text) and not text.endswith("\n")
        return {"path": relative, "text": text, "lines": text.count("\n") + unterminated}

    def report(self) -> dict[str, Any]:
        from vaultkeeper.report.candidates import iso
        from vaultkeeper.scan.last import last_report

        report = last_report(self.vault)
        if report is None:
            why = "no scan has completed yet: run `vaultkeeper scan`"
            return dict.fromkeys(("summary", "made", "age_seconds", "report"), None) | {
                "available": False,
                "note": why,
            }
        made = report.generated_at
        return {
            "available": True,
            "summary": report.summary(),
            "made": iso(made),
            "age_seconds": int((self.now() - made).total_seconds()),
            "report": report.to_dict(),
            "note": None,
        }

    def status(self) -> dict[str, Any]:
        from vaultkeeper.status.health import vault_status

        return vault_status(self.vault, self.now()).to_dict()

    # -- writing -------------------------------------------------------------------
    def new(
        self,
        kind: str,
        name: str,
        description: str,
        project: str,
        body: str | None,
        falsify: str | None = None,
        anchors: tuple[str, ...] = (),
    ) -> dict[str, Any]:
        """As ``vaultkeeper new KIND NAME -p PROJECT -d DESCRIPTION [--anchor A ...]`` (held
        out if a lesson); anchors resolve in the project's repository when it is tied on
        this machine, else in the repository of the server's folder (the host's project)."""

        from vaultkeeper.anchors.repo import located
        from vaultkeeper.entries.create import check_name, holdout_days_from_env, new_entry

        if len(anchors) > MAX_ANCHORS:
            raise UsageError(f"anchors: at most {MAX_ANCHORS} at once")
        if anchors and project:
            check_name(project)  # before projects/PROJECT/repository.json is read
        repo_dir = located(self.vault, project) if anchors and project else None
        result = new_entry(
            self.vault, kind, name, description, project=project, body=body, falsify=falsify,
            today=self.now().date(), holdout_days=holdout_days_from_env(os.environ),
            anchors=anchors, repo_dir=repo_dir,
        )  # fmt: skip
        # each problem as an object: a Problem is a named tuple, which JSON makes a list
        return {**result.__dict__, "problems": [p.to_dict() for p in result.problems]}

    def cite(
        self,
        name: str,
        evidence: str,
        host: Callable[[], str | None] | None = None,
        tool_use: str | None = None,
    ) -> dict[str, Any]:
        """Record that this session used pattern NAME (or the note at a path), via learn.

        ``host`` finds the host's session of the call (mcp/server.py): the use counts
        there, so the transcript's own mention of the pattern is the same use. A Claude
        Code ``tool_use`` id joins the receipt: ingest finds this line by it."""
        from vaultkeeper.learn.count import record
        from vaultkeeper.store.uses import UseEvent, mcp_receipt

        said = " ".join(evidence.split())[: config.MCP_CITE_EVIDENCE_CHARS]
        if not said:
            raise UsageError("evidence must say where the entry was used (a path:line, a URL)")
        target = name.strip()
        note = "/" in target or target.endswith(".md")
        if note:
            target = rel(self.vault.resolve(), self.entry_path(target))
        now = self.now()
        receipt = mcp_receipt(said, tool_use)
        session = (host() if host is not None else None) or self.session
        event = UseEvent(session, config.MCP_SOURCE, "cite", target, now.date(), receipt)
        result = record(self.vault, [event], now)
        if result.refused:
            raise GateRefused(result.refused[0])
        if result.unknown:
            raise NotFoundError(
                f"{target}: no registry pattern by that name (a note is cited by its path); "
                "use `search` to find the name"
            )
        counted = next((c for c in result.counted if c.name == target), None)
        figures = ("count_before", "count_after", "last_used")
        return {
            "target": target,
            "kind": "note" if note else "pattern",
            "session": session,
            "recorded": bool(result.recorded),
            "counted": counted is not None,
            **{key: getattr(counted, key, None) for key in figures},
            "note": None if result.recorded else "already cited in this session: counted once",
        }

    def prune_plan(self, target: str) -> Any:
        """What a prune of ``target`` would delete, read now (the question's text)."""
        from vaultkeeper.apply.prune import plan

        return plan(self.vault, Decision("prune", target))

    def apply(self, decision: Decision, dry_run: bool = False, confirm: Any = None) -> Outcome:
        """One decision through the applier's single entry point (gated, journaled)."""
        from vaultkeeper.apply.batch import apply_decision

        return apply_decision(self.vault, decision, self.now(), dry_run=dry_run, confirm=confirm)
