"""The brief: the last report as the next session's start hook serves it to the agent.

Each candidate's line from the Report, the wording, and the layout that fits everything
into the character limit. Apart from report/candidates.py so that a scan, which never
renders a brief, does not import it.
"""

from __future__ import annotations

import datetime as dt
import shlex
from collections.abc import Mapping

from vaultkeeper import config
from vaultkeeper.report.candidates import (
    HELD_OUT,
    PROMOTE,
    PRUNE,
    Report,
    age_text,
    iso,
    one_lines,
)
from vaultkeeper.store.secrets import strip_controls
from vaultkeeper.upkeep import sections as upkeep

ITEM_MAX = 300  # one candidate's line in the brief, so one long value cannot crowd out the rest


def command(vault: str) -> str:
    """The command line prefix every hint in the brief uses."""
    return f"vaultkeeper --vault {shlex.quote(vault)}"


def intros(vk: str) -> tuple[str, str, str]:
    """The promote, prune and held-out sections' headings, each with its command."""
    return (
        (
            f"Promote eligible (success count >= {config.PROMOTE_MIN_COUNT}, not yet promoted). "
            "Promotion needs an evidence receipt (a URL or path:line, or the latest receipt "
            "shown, recorded from a session) and writes a skill:\n"
            f"  {vk} apply promote NAME --evidence RECEIPT"
        ),
        (
            f"Prune candidates (success count 0, last used more than {config.PRUNE_IDLE_DAYS} "
            "days ago). Deletion happens only on a person's explicit yes at a terminal; "
            "from an agent's shell the request waits in a queue for `vaultkeeper review`:\n"
            f"  {vk} apply prune NAME"
        ),
        (
            "Held-out due (holdout_until has passed). Each is re-checked against its "
            "falsification_condition; --pass sets status active, --fail sets status archived:\n"
            f"  {vk} apply revalidate PATH --pass|--fail --evidence RECEIPT"
        ),
    )


def layout(
    summary: str,
    vault: str,
    generated_at: dt.datetime,
    now: dt.datetime,
    problems: int,
    sections: list[tuple[str, list[str]]],
    extra: list[str],
    limit: int,
) -> str:
    """The brief's text from its parts (see brief.render_brief): at most ``limit`` characters."""
    vk = command(vault)
    head = [
        summary,
        f"Last scan of the memory vault {strip_controls(vault)}: "
        f"{iso(generated_at)} "
        f"({age_text(generated_at, now)}). "
        "The scanner lists candidates; it changes nothing.",
    ]
    if problems:
        head.append(
            f"Problems (unreadable files, blocks or dates): {problems}; `{vk} report` lists them."
        )
    tail = (
        [
            f"Leaving a candidate alone is recorded with: {vk} apply skip NAME --reason TEXT",
            "Each candidate's hash is in `report --json`; `--expect-hash HASH` on an apply "
            "command refuses an entry that changed since this report.",
        ]
        if sections
        else ["Nothing is waiting."]
    )
    more = "  ... and {} more (`{} report --json` lists every one)"
    fixed = sum(len(x) + 1 for x in head + tail) + sum(
        len(intro) + 2 + len(more.format(len(items), vk)) + 1 for intro, items in sections
    )
    budget = limit - fixed
    kept: dict[int, list[str]] = {}
    # smallest lists first, so what one list leaves unused goes to the longer ones
    order = sorted(range(len(sections)), key=lambda i: sum(len(x) + 1 for x in sections[i][1]))
    for n, i in enumerate(order):
        allowance = budget // (len(order) - n) if budget > 0 else 0
        used, lines = 0, []
        for line in sections[i][1]:
            if used + len(line) + 1 > allowance:
                break
            lines.append(line)
            used += len(line) + 1
        kept[i] = lines
        budget -= used
    out = list(head)
    for i, (intro, items) in enumerate(sections):
        out.extend(["", intro, *kept[i]])
        if len(kept[i]) < len(items):
            out.append(more.format(len(items) - len(kept[i]), vk))
    skip = [f"Leaving one alone is recorded with: {vk} apply skip NAME --reason TEXT"]
    with_extra = "\n".join([*out, *extra, "", *(tail if sections else skip)]) + "\n"
    out.extend(["", *tail])
    text = "\n".join(out) + "\n"
    if extra and len(with_extra) <= limit:
        text = with_extra
    return text if len(text) <= limit else text[: limit - 4] + "...\n"


def _brief_sections(
    report: Report, receipts: Mapping[str, str] | None = None
) -> list[tuple[str, list[str]]]:
    promote, prune, held_out = intros(command(report.vault))
    heading = {PROMOTE: promote, PRUNE: prune, HELD_OUT: held_out}
    out: list[tuple[str, list[str]]] = []
    for kind in (PROMOTE, PRUNE, HELD_OUT):
        items = report.lists()[kind]
        if not items:
            continue
        lines = []
        for c in items:
            if kind == HELD_OUT:  # revalidate takes the path
                line = f"- {c.path}: {c.figures()}"
            else:
                line = f"- {c.name}: {c.figures()} ({c.path}:{c.line})"
            if c.falsification_condition:
                line += f"; falsification_condition: {c.falsification_condition}"
            if kind == PROMOTE and receipts and c.name in receipts:
                line += f"; latest receipt: {receipts[c.name]}"
            lines.append(line)
        # one_line each (one check for them all): a multi-line YAML value must not forge
        # brief lines
        cut = [x if len(x) <= ITEM_MAX else x[: ITEM_MAX - 3] + "..." for x in one_lines(lines)]
        out.append((heading[kind], cut))
    return out


def render_brief(
    report: Report,
    now: dt.datetime,
    limit: int = config.BRIEF_MAX_CHARS,
    receipts: Mapping[str, str] | None = None,
) -> str:
    """Plain text for a coding agent's next session: never more than ``limit`` characters.

    Every kind of candidate keeps its heading and command; when the lists are too long,
    each is cut fairly and ends with an ``... and N more`` line.
    """
    sections = _brief_sections(report, receipts)
    # the upkeep sections (duplicates, stale lessons, unused skills) come after the spec's
    # lists and only whole, where they fit: they never take the lists' room. Each item is
    # at least "- " and a character and its newline: past the limit they never fit whole
    extra: list[str] = []
    if 4 * (len(report.duplicates) + len(report.stale) + len(report.skills_unused)) <= limit:
        extra = [x for intro, items in upkeep.brief_sections(report) for x in ("", intro, *items)]
    summary, problems = report.summary(), len(report.problems)
    return layout(summary, report.vault, report.generated_at, now, problems, sections, extra, limit)
