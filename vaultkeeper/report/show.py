"""A report on the standard streams: its problems to stderr, its text or JSON to stdout."""

from __future__ import annotations

from vaultkeeper.output import echo, print_json
from vaultkeeper.report.candidates import Report, render_problems, render_text


def print_report(report: Report, as_json: bool, made: str | None = None) -> None:
    """Problems to stderr; the report (with ``made``, when given, as its second line)."""
    if report.problems:
        echo("\n".join(render_problems(report)), err=True)
    if as_json:
        print_json(report.to_dict())
        return
    lines = render_text(report)
    if made is not None:
        lines.insert(1, made)
    echo("\n".join(lines))
