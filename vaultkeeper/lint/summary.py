"""The last whole-vault lint's figures, kept for ``status`` (a row of ``state/vaultkeeper.db``).

A whole-vault lint with the default rules takes seconds at 10k; so such a ``lint`` keeps
its counts and time (only where state/ exists) and status shows them with their age. No
row is never an error: status lints the vault then, as the figures are derived.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from vaultkeeper import config
from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.lint.codes import ERROR
from vaultkeeper.store import db

if TYPE_CHECKING:
    from vaultkeeper.lint.run import LintResult

_MADE = "%Y-%m-%dT%H:%M:%SZ"
REFRESH_HOURS = 24  # status lints again when the kept figures are older than this
LINK_CODES = ("VK301", "VK302", "VK305")
ORPHAN_CODE = "VK303"


class LintSummary(NamedTuple):
    made: dt.datetime  # UTC: when the lint ran
    files: int  # markdown files checked
    errors: int  # errors other than links
    links: int  # broken or ambiguous links (VK301, VK302, VK305)
    link_errors: int  # how many of those are errors (a vault vaultkeeper did not make: none)
    orphans: int | None  # VK303; None: no _index.md to be reachable from when it ran


def summarize(result: LintResult, made: dt.datetime, has_index: bool) -> LintSummary:
    findings = result.findings
    links = [f for f in findings if f.code in LINK_CODES]
    return LintSummary(
        made.astimezone(dt.timezone.utc),
        result.files,
        sum(1 for f in findings if f.severity == ERROR and f.code not in LINK_CODES),
        len(links),
        sum(1 for f in links if f.severity == ERROR),
        sum(1 for f in findings if f.code == ORPHAN_CODE) if has_index else None,
    )


def save(vault: Path, result: LintResult, now: dt.datetime) -> LintSummary:
    """``result``'s figures, kept when the vault has a state/ folder of its own (a vault
    without one is left as it is). Never the lint's failure: a database that cannot be
    written keeps the old row."""
    found = summarize(result, now, (vault / config.INDEX_FILE).is_file())
    if has_state(vault):
        row = (found.made.strftime(_MADE), *found[1:])
        errors = (OSError, sqlite3.Error, VaultkeeperError)
        with contextlib.suppress(*errors), db.connect(vault) as conn, db.writing(conn):
            conn.execute("DELETE FROM lint_summary")
            conn.execute("INSERT INTO lint_summary VALUES (?, ?, ?, ?, ?, ?)", row)
    return found


def current(vault: Path, now: dt.datetime) -> LintSummary:
    """The kept figures while younger than REFRESH_HOURS; else the vault linted now with
    the default rules and its figures kept: at most a day old, one lint a day at most."""
    row = None
    with contextlib.suppress(sqlite3.Error), db.existing(vault) as conn:
        row = conn.execute("SELECT * FROM lint_summary").fetchone() if conn else None
    if row is not None:  # none kept, or the database not readable: lint now
        made = dt.datetime.strptime(row[0], _MADE).replace(tzinfo=dt.timezone.utc)
        if dt.timedelta(0) <= now - made < dt.timedelta(hours=REFRESH_HOURS):
            return LintSummary(made, *row[1:])
    from vaultkeeper.lint.run import lint_vault

    return save(vault, lint_vault(vault), now)


def has_state(vault: Path) -> bool:
    """Whether the vault has a state/ folder of its own (where a lint saves its figures)."""
    path = os.path.join(vault, config.STATE_DIR)
    return os.path.isdir(path) and not os.path.islink(path)
