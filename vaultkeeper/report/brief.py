"""The brief: the saved report as the next session's start hook serves it to the agent.

Its wording and the layout that fits everything into the character limit are
report/brief_layout.py's, on plain values; this module picks each candidate's line from
the Report. Apart from report/candidates.py so that a scan, which never renders a brief,
imports neither.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

from vaultkeeper import config
from vaultkeeper.report.brief_layout import ITEM_MAX, command, layout
from vaultkeeper.report.brief_layout import intros as brief_intros
from vaultkeeper.report.candidates import HELD_OUT, PROMOTE, PRUNE, Report
from vaultkeeper.report.text import one_lines
from vaultkeeper.upkeep import sections as upkeep


def _brief_sections(
    report: Report, receipts: Mapping[str, str] | None = None
) -> list[tuple[str, list[str]]]:
    promote, prune, held_out = brief_intros(command(report.vault))
    intros = {PROMOTE: promote, PRUNE: prune, HELD_OUT: held_out}
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
        out.append((intros[kind], cut))
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
    # lists and only whole, where they fit: they never take the lists' room
    extra = [x for intro, items in upkeep.brief_sections(report) for x in ("", intro, *items)]
    summary, problems = report.summary(), len(report.problems)
    return layout(summary, report.vault, report.generated_at, now, problems, sections, extra, limit)
