"""`ingest`: record what agents used of the vault, from their session transcripts."""

from __future__ import annotations

from pathlib import Path

import click

from vaultkeeper.commands.base import now_utc, usage_error, vault_path, waiting_to_count
from vaultkeeper.output import Shown, show


@click.command()
@click.argument("transcripts", nargs=-1, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object.")
@click.option("--dry-run", is_flag=True, help="Print what would be recorded; write nothing.")
@click.option(
    "--missed-beside",
    type=click.Path(path_type=Path),
    help="Also the transcripts of this transcript's project that no ingest has read as "
    "they are now (the session-start hook: sessions whose end hook never ran).",
)
@click.option("--cwd", help="With --missed-beside: only Codex rollouts of this folder.")
@click.pass_context
def ingest(
    ctx: click.Context,
    transcripts: tuple[Path, ...],
    as_json: bool,
    dry_run: bool,
    missed_beside: Path | None,
    cwd: str | None,
) -> int:
    """Count the reuse in session transcripts (Claude Code or Codex JSONL).

    A pattern counts once per session when the agent cites it in its own
    text as [[patterns/registry#NAME]] (any alias), or calls the skill it
    was promoted into: success count + 1, last used = that day (never moved
    backwards), journaled, with the transcript's path:line as the receipt.
    Reads of vault files and citations of notes are recorded in
    state/uses.jsonl. Replay-safe: the same or a longer transcript counts
    nothing twice. Cited names that are not in the registry are reported,
    never created. Sub-agent transcripts beside a Claude Code transcript are
    read with it. A folder stands for every *.jsonl file under it, at any
    depth (a Claude Code project's folder, ~/.codex/sessions). Exit 1 when a
    file could not be read.

    \b
    Example:
      vaultkeeper ingest ~/.claude/projects/*/*.jsonl
      vaultkeeper ingest ~/.claude/projects/-home-me-src-api
      vaultkeeper ingest --dry-run ~/.codex/sessions/2026/12/01/rollout-*.jsonl
    """
    from vaultkeeper.learn.ingest import ingest as run_ingest
    from vaultkeeper.learn.ingest import missed, remember
    from vaultkeeper.report.candidates import one_line
    from vaultkeeper.store.textsafe import inert

    def clean(text: str) -> str:  # a transcript's text: no escapes, no lone surrogates
        return inert(one_line(text))

    vault = vault_path(ctx)
    if not transcripts and missed_beside is None:
        raise usage_error("name a transcript to ingest (or --missed-beside TRANSCRIPT)")
    if missed_beside is not None:
        transcripts = (*transcripts, *missed(vault, missed_beside.absolute(), cwd))
        if not transcripts:
            nothing = "nothing missed: every transcript of the project was ingested"
            return show(Shown(lines=(nothing,)))
    now = now_utc()
    out = run_ingest(vault, transcripts, now, dry_run=dry_run, waiting=waiting_to_count)
    read = [Path(f.path) for f in out.files if f.error is None]
    if read and not dry_run:  # nothing read (a refusal): nothing written
        remember(vault, read, now)
    failed = [f for f in out.files if f.error is not None]
    notes = (
        *(clean(f"vaultkeeper: error: {f.path}: {f.error}") for f in failed),
        *(clean(f"vaultkeeper: error: {line}") for line in out.result.refused),
        *(clean(f"vaultkeeper: warning: {line}") for line in out.result.damaged),
    )
    if out.suggested:  # a lesson a session wrote, and the code it touched
        from vaultkeeper.report.anchors import accept_command, suggestion_dicts
    data = {"files": [f.__dict__ for f in out.files], **out.result.to_dict()}
    data["suggested_anchors"] = suggestion_dicts(out.suggested) if out.suggested else []
    counted, record = ("would count", "would record") if dry_run else ("counted", "recorded")
    res = out.result
    lines = [
        f"read {f.path}: {f.format} session {f.session}"
        + (f" ({_n(f.lines_skipped, 'unreadable line')} skipped)" if f.lines_skipped else "")
        for f in out.files
        if f.error is None
    ]
    lines += [
        f"{counted} {c.name}: success count {c.count_before} -> {c.count_after}, "
        f"last used {c.last_used} ({c.path}); receipt {c.receipt}"
        for c in res.counted
    ]
    lines += [f"cited {n} through MCP: counted by the server then, not again" for n in res.via_mcp]
    lines += [f"used {n} with `vaultkeeper use`: counted then, not again" for n in res.via_cli]
    lines += [
        f"unknown {e.target}: cited at {e.receipt} but not in the registry "
        "(a typo or a pruned pattern?); not counted"
        for e in res.unknown
    ]
    if res.unknown_more:
        lines.append(f"and {_n(res.unknown_more, 'more unknown name')}; not counted")
    if res.future:
        was = "was" if res.future == 1 else "were"
        today = now.date().isoformat()
        lines.append(f"{_n(res.future, 'use')} dated after today {was} dated today ({today})")
    lines += [
        f"suggested anchors for {sug.name} ({sug.path}): {', '.join(sug.anchors)}; "
        f"accept: {accept_command(sug)}"
        for sug in out.suggested
    ]
    kinds = {k: sum(1 for e in res.recorded if e.kind == k) for k in ("cite", "skill", "read")}
    detail = ", ".join(_n(n, k) for k, n in kinds.items() if n)
    lines.append(
        f"{record} {_n(len(res.recorded), 'new use')}{f' ({detail})' if detail else ''}; "
        f"{res.repeated} already recorded"
    )
    code = 1 if failed or out.result.refused else 0
    return show(Shown(data, tuple(map(clean, lines)), notes, code), as_json)


def _n(count: int, noun: str) -> str:
    """``1 new use``, ``2 new uses``: the count with its noun in the right number."""
    return f"{count} {noun}{'' if count == 1 else 's'}"
