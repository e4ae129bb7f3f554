"""The last whole-vault lint's figures, saved for ``status`` (``state/lint-summary.json``).

``status`` is a glance, and running every rule over a 10,000-entry vault takes more
than a second; so ``lint`` over the whole vault with its default rules (no PATHS, no
--select or --ignore) saves the counts status shows, with when it ran, and status
shows them with their age. Only a vault that already has a state/ folder gets the file:
a lint of someone's Obsidian vault leaves nothing behind (status lints such a vault
itself). A missing, corrupt or foreign file is never an error: status says "not yet"
or "unreadable" and what to run.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from vaultkeeper import config
from vaultkeeper.lint.codes import ERROR
from vaultkeeper.store.vault import own_dir

if TYPE_CHECKING:
    from vaultkeeper.lint.run import LintResult

FORMAT = 1
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


def _path(vault: Path) -> Path:
    return Path(own_dir(vault, config.STATE_DIR)) / config.LINT_SUMMARY_FILE


def save(vault: Path, result: LintResult, now: dt.datetime) -> bool:
    """Keep ``result``'s figures when the vault has a state/ folder (True if written).
    Never the lint's failure: a state/ that cannot be written keeps the old file."""
    from vaultkeeper.errors import VaultkeeperError
    from vaultkeeper.store.fsio import atomic_write

    try:
        path = _path(vault)
        if not path.parent.is_dir():
            return False  # not vaultkeeper's vault (or no scan yet): leave nothing behind
        found = summarize(result, now, (vault / config.INDEX_FILE).is_file())
        body = {"format": FORMAT, **found._asdict()}
        body["made"] = found.made.strftime("%Y-%m-%dT%H:%M:%SZ")
        atomic_write(path, json.dumps(body) + "\n", fsync_dir=False)
        return True
    except (OSError, VaultkeeperError):
        return False


def current(vault: Path, now: dt.datetime) -> LintSummary:
    """The kept figures while younger than REFRESH_HOURS; else the whole vault linted
    now with the default rules, its figures kept as `vaultkeeper lint` keeps them (where
    state/ takes them). So a vault kept by its hooks and cron alone, where nobody runs
    `lint`, shows figures at most a day old, and a glance lints at most once a day."""
    found, _ = load(vault)
    fresh = dt.timedelta(hours=REFRESH_HOURS)
    if found is not None and dt.timedelta(0) <= now - found.made < fresh:
        return found
    from vaultkeeper.lint.run import lint_vault

    result = lint_vault(vault)
    save(vault, result, now)
    return summarize(result, now, (vault / config.INDEX_FILE).is_file())


def has_state(vault: Path) -> bool:
    """Whether the vault has a state/ folder of its own (where a lint saves its figures)."""
    path = os.path.join(vault, config.STATE_DIR)
    return os.path.isdir(path) and not os.path.islink(path)


def load(vault: Path) -> tuple[LintSummary | None, str | None]:
    """The saved figures, or None and why not (None too when there simply are none)."""
    where = f"{config.STATE_DIR}/{config.LINT_SUMMARY_FILE}"
    from vaultkeeper.store.text import ParseError, read_regular

    try:
        path = _path(vault)
        if not os.path.lexists(path):
            return None, None
        raw = read_regular(path, follow=False)
    except (OSError, ValueError) as exc:  # a folder there, a symlink refused, ...
        why = exc.reason if isinstance(exc, ParseError) else getattr(exc, "strerror", None)
        return None, f"{where}: unreadable ({why or exc})"
    try:
        data = json.loads(raw)
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError("not this version's")
        made = dt.datetime.strptime(data["made"], "%Y-%m-%dT%H:%M:%SZ")
        files, errors, links, link_errors, orphans = (
            data[k] for k in ("files", "errors", "links", "link_errors", "orphans")
        )
        counts = (files, errors, links, link_errors)
        if not all(_count(v) for v in counts) or not (orphans is None or _count(orphans)):
            raise ValueError("not counts")
    except (ValueError, KeyError, TypeError):
        return None, f"{where}: unreadable (not the figures a lint saves)"
    made = made.replace(tzinfo=dt.timezone.utc)
    return LintSummary(made, files, errors, links, link_errors, orphans), None


def _count(value: object) -> bool:
    return type(value) is int and value >= 0
