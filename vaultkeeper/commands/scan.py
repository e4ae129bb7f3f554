"""`scan` and `report`: classify the vault, and show the last classification."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from vaultkeeper import config
from vaultkeeper.commands.base import now_utc, usage_error, vault_path
from vaultkeeper.output import Shown, show
from vaultkeeper.store.secrets import served

if TYPE_CHECKING:
    from vaultkeeper.store.adherence import Adherence


@click.command()
@click.option(
    "--force",
    is_flag=True,
    help=f"Skip the cooldown (like {config.ENV_FORCE}=1); never the lock or the re-entry guard.",
)
@click.option("--strict", is_flag=True, help="Exit 1 when problems were found.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@click.option(
    "--fresh",
    is_flag=True,
    help="Read every file again instead of using the scan's rows (which are then rebuilt).",
)
@click.option(
    "--as-of",
    "as_of",
    metavar="DATE",
    help="Show what would be due on DATE (YYYY-MM-DD); unthrottled, writes nothing.",
)
@click.pass_context
def scan(
    ctx: click.Context, force: bool, strict: bool, as_json: bool, fresh: bool, as_of: str | None
) -> int:
    """Classify the vault into prune / promote / held-out candidates; change nothing.

    Prints `SELF-MAINTAIN: prune candidates N | promote eligible N | held-out
    due N`, then one line per candidate; unreadable entries go to stderr as
    `path[:line]: reason`. `vaultkeeper report` shows the last completed scan's
    report again, as the files now say. Throttled: inside the cooldown (1 hour since the
    last completed scan, or $SELF_MAINTAIN_COOLDOWN_MS), or while another scan
    runs, it prints nothing and exits 0. Only state/ is ever written: there,
    the derived store state/vaultkeeper.db keeps what was read of each file, so
    the next scan reads only files whose size, times or inode changed (--fresh:
    read all).
    --as-of DATE is a preview: the report as it would be on DATE, neither
    throttled nor saved (nothing at all is written).

    \b
    Example:
      vaultkeeper scan
      vaultkeeper scan --force --json
      vaultkeeper scan --as-of 2027-03-01
      SELF_MAINTAIN_FORCE=1 vaultkeeper --vault ~/memory scan --strict
    """
    # One implementation for both paths: entry.py runs this same function without click
    # for the hook's no-op, and test_entry.py proves the two give the same bytes.
    from vaultkeeper.scan.classify import ScanArgs, run

    vault = vault_path(ctx)
    if as_of is None:
        return run(vault, ScanArgs(None, force, strict, as_json, fresh))
    from vaultkeeper.clock import parse_day
    from vaultkeeper.report.candidates import shown_report
    from vaultkeeper.scan.classify import classify

    day = parse_day(as_of, "--as-of")
    now = now_utc()
    report = classify(vault, now.replace(year=day.year, month=day.month, day=day.day))
    shown = shown_report(report, as_json)
    return show(shown._replace(code=int(strict and bool(report.problems))), as_json)


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@click.option("--brief", is_flag=True, help="Short plain text for an agent's next session.")
@click.option(
    "--cwd",
    type=click.Path(path_type=Path),
    help="With --brief: the session's folder, naming its project (default: here).",
)
@click.pass_context
def report(ctx: click.Context, as_json: bool, brief: bool, cwd: Path | None) -> int:
    """Print the last completed scan's report, with when it was made.

    A session-end hook's output is lost; the next session reads the report
    here. --brief is what a session-start hook prints into the agent's
    context, under 10,000 characters: how to use the vault and cite a
    pattern; the lessons of the session's project (the folder under
    projects/ named as the git repository or folder of --cwd), active
    first; the registry's patterns, most used first; then the candidates
    (each promote candidate with its latest recorded receipt) and the
    requests waiting in the review queue. Archived and superseded entries
    are never served.

    \b
    Example:
      vaultkeeper report
      vaultkeeper report --json
      vaultkeeper --vault ~/memory report --brief --cwd ~/src/api
    """
    from vaultkeeper.report.candidates import age_text, iso, one_lines, shown_report
    from vaultkeeper.scan.last import derived
    from vaultkeeper.store.adherence import adherence

    if as_json and brief:
        raise usage_error("--json and --brief are two different outputs; choose one")
    if cwd is not None and not brief:
        raise usage_error("--cwd goes with --brief (it names the session's project)")
    vault = vault_path(ctx)
    last = derived(vault)
    now = now_utc()
    if brief:
        from vaultkeeper.recall.start import render

        text = render(vault, last, now, Path.cwd() if cwd is None else cwd)
        return show(Shown(None, (text.removesuffix("\n"),)))  # every brief ends with one
    if last is None:
        why = f"no report yet: no scan has completed in {vault}; run `vaultkeeper scan`"
        return show(Shown(_empty(vault, now, why), (why,)), as_json)
    made = last.report.generated_at
    followed = adherence(vault)  # read now from the usage log, as status reads it
    shown = shown_report(last.report, as_json, f"report made {iso(made)} ({age_text(made, now)})")
    recall = {"age_seconds": int((now - made).total_seconds()), "recall": _recall_dict(followed)}
    data = shown.data and {**shown.data, **recall}
    notes = () if as_json else shown.notes  # under --json the problems are in the JSON only
    lines = (*shown.lines, *one_lines(_recall_lines(followed)))
    return show(Shown(data, lines, notes), as_json)


def _empty(vault: Path, now: dt.datetime, why: str) -> dict[str, object]:
    """``report --json`` before any scan: a report with no candidates, made never."""
    from vaultkeeper.report.candidates import Report

    data: dict[str, object] = Report(str(vault), now, (), (), (), ()).to_dict()
    data.update(generated_at=None, duration_ms=None, age_seconds=None, note=why)
    return data


def _recall_dict(found: Adherence) -> dict[str, Any]:
    """``recall`` in ``report --json``: whether the lessons the point-of-use recall served
    were then used (store/adherence.py): lessons (most shown first), noise, missed."""
    return {
        "lessons": [
            {
                "path": served(s.target),
                "shown": s.shown,
                "cited_after": s.cited,
                "read_after": s.read,
                "noise": s.noise,
            }
            for s in found.lessons
        ],
        "noise": [served(s.target) for s in found.noise],
        "missed": [{"path": served(t), "sessions": n} for t, n in found.missed],
    }


def _recall_lines(found: Adherence) -> list[str]:
    """The section's lines for ``report``; none while nothing was shown."""
    if not found.lessons:
        return []
    shown = sum(s.shown for s in found.lessons)
    cited = sum(s.cited for s in found.lessons)
    out = [
        f"recall: {shown} showings of {len(found.lessons)} lessons, {cited} followed by a "
        f"citation; {len(found.noise)} noise, {len(found.missed)} missed"
    ]
    for s in found.lessons:
        flag = (
            f" -- noise: shown {config.MOMENT_NOISE_MIN_SHOWN}+ times, never used after; "
            "narrow its paths: or reword it"
            if s.noise
            else ""
        )
        out.append(
            f"shown     {s.target} -- shown {s.shown}, then cited {s.cited}, read {s.read}{flag}"
        )
    for target, sessions in found.missed:
        out.append(
            f"missed    {target} -- cited in {sessions} session{'s' if sessions != 1 else ''} "
            "where the recall served other lessons"
        )
    return out
