"""`status`: the vault's health signals, each with its figure, bound and verdict."""

from __future__ import annotations

import sys

import click

from vaultkeeper.commands.base import now_utc, vault_path
from vaultkeeper.output import Shown, show


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the signals as one JSON object.")
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> int:
    """Show the vault's health signals: each figure, its healthy bound, a verdict.

    Candidates waiting (from the last report), held-out entries overdue by
    more than a week, decisions waiting for a person, lint errors, broken
    links and orphans (as the last `vaultkeeper lint` of the whole vault
    found them, with its age; a vault without state/ is linted here), the
    age of the last completed scan (older than two
    days: the session-end hook probably never fires), the journal's size
    and _index.md against its load budget. Exit 1 when a signal fails; what
    has not happened yet (a vault fresh from init) is `not yet`, exit 0.

    \b
    Example:
      vaultkeeper status
      vaultkeeper status --json
    """
    from vaultkeeper.status.health import FAIL, STEPS, vault_status

    vault = vault_path(ctx, require=False)  # read-only; works on any Obsidian vault
    if as_json or not sys.stderr.isatty():
        result = vault_status(vault, now_utc())
    else:
        with click.progressbar(
            length=len(STEPS), label="checking", file=sys.stderr, item_show_func=lambda s: s
        ) as bar:

            def step(name: str) -> None:  # the bar counts the steps already done
                bar.update(STEPS.index(name) - bar.pos, name)

            result = vault_status(vault, now_utc(), step)
    rows = [("", "signal", "figure", "healthy", "")]
    rows += [(s.verdict, s.label, s.shown, s.bound, s.detail) for s in result.signals]
    lines = (
        f"vault {result.vault} at {result.generated_at}",
        *table(rows, _width()),
        f"overall: {result.verdict}",
    )
    return show(Shown(result.to_dict(), lines, code=int(result.verdict == FAIL)), as_json)


def _width() -> int | None:
    """The terminal's width ($COLUMNS first, as shutil reads it); None when stdout is no
    terminal and $COLUMNS is unset: a pipe or a file gets one line per signal."""
    import os
    import shutil

    if os.environ.get("COLUMNS", "").isdigit() or sys.stdout.isatty():
        return max(40, shutil.get_terminal_size().columns)
    return None


def table(rows: list[tuple[str, str, str, str, str]], width: int | None) -> list[str]:
    """The signals' table (``rows[0]`` its header): one line per signal where it fits
    ``width``, else the detail on lines of its own under the signal's name; where even the
    four columns do not fit, each signal as its name, then what it measured and its bound,
    then the detail. No line is wider than ``width`` (None: no limit)."""
    import textwrap

    widths = [max(4, *(len(r[i]) for r in rows)) for i in range(4)]  # ok ... not yet
    indent = " " * (widths[0] + 2)

    def wrapped(text: str) -> list[str]:
        return textwrap.wrap(
            text, width or len(text) + len(indent), initial_indent=indent,
            subsequent_indent=indent + "  ", break_on_hyphens=False, break_long_words=True,
        )  # fmt: skip

    cells = ["  ".join(c.ljust(w) for c, w in zip(r[:4], widths, strict=True)) for r in rows]
    lines: list[str] = []
    if width is None or max(len(c.rstrip()) for c in cells) <= width:
        for row, four in zip(rows, cells, strict=True):
            whole = f"{four}  {row[4]}".rstrip()
            if width is None or len(whole) <= width:
                lines.append(whole)
            else:
                lines.append(four.rstrip())
                lines.extend(wrapped(row[4]))
        return lines
    for verdict, label, shown, bound, detail in rows[1:]:  # stacked: no header
        lines.extend(
            textwrap.wrap(f"{verdict.ljust(widths[0])}  {label}", width, subsequent_indent=indent)
        )
        lines.extend(wrapped(f"{shown} (healthy: {bound})"))
        if detail:
            lines.extend(wrapped(detail))
    return lines
