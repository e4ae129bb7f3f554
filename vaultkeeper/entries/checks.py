"""The checks ``new`` runs on what it is given: names, descriptions, conditions, days.

Split from vaultkeeper.entries.create (which re-exports these names): each check turns bad
input into a one-line UsageError before anything is written, and they read the
same whether the text came from the command line or an agent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from vaultkeeper import config
from vaultkeeper.errors import UsageError
from vaultkeeper.store import secrets

_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._-]*$")


def check_name(name: str) -> None:
    # fullmatch: ``$`` would let a name end in a line break
    if not name or not _SAFE_NAME.fullmatch(name) or ".." in name or name.endswith((".", " ")):
        raise UsageError(
            f"{name!r}: unsafe name; use letters, digits, spaces, '.', '_' and '-' "
            "(no path separators, no '..')"
        )
    if len(name) > config.NAME_MAX_CHARS:
        raise UsageError(f"{name[:20]!r}...: name longer than {config.NAME_MAX_CHARS} characters")
    if name.lower().endswith(".md"):
        raise UsageError(f"{name!r}: give the name without .md (it is added)")


def clean_description(text: str) -> str:
    """One line of pure ASCII, or a UsageError saying which character is not.

    The spec's typographic glyphs (em dash, arrow, ...) become their ASCII spelling;
    anything else non-ASCII is refused rather than written into the vault.
    """
    description = _ascii_line(text, "--description")
    if not description:
        raise UsageError("--description must not be empty: it is the entry's recall summary")
    if config.INDEX_START in description or config.INDEX_END in description:
        raise UsageError("--description must not contain the index markers")
    found = secrets.find(description)
    if found:
        raise UsageError(
            f"--description holds what looks like a {found[0].kind} at column {found[0].col}; "
            "credentials stay out of the vault (the spec's content rules)"
        )
    return description


def clean_condition(text: str) -> str:
    """``--falsify``: what would prove the lesson wrong, one ASCII line, as a description."""
    condition = _ascii_line(text, "--falsify")
    if not condition:
        raise UsageError("--falsify must not be empty: say what would prove the lesson wrong")
    return condition


def _ascii_line(text: str, option: str) -> str:
    line = " ".join(text.split())
    for glyph, ascii_text in config.ASCII_REPLACEMENTS.items():
        line = line.replace(glyph, ascii_text)
    for column, char in enumerate(line, start=1):
        if ord(char) < 0x20 or ord(char) == 0x7F:  # ESC, BEL, DEL: would act on a terminal
            raise UsageError(
                f"{option}: control character U+{ord(char):04X} at column {column}; "
                "write plain text"
            )
        if ord(char) > 127:
            raise UsageError(
                f"{option}: non-ASCII character {char!r} (U+{ord(char):04X}) at column "
                f"{column}; the vault is pure ASCII"
            )
    return line


def holdout_days_from_env(env: Mapping[str, str]) -> int:
    """``$VAULTKEEPER_HOLDOUT_DAYS`` (a whole number of days), else the default."""
    raw = env.get(config.ENV_HOLDOUT_DAYS, "").strip()
    if not raw:
        return config.HOLDOUT_DAYS
    try:
        days = int(raw)
    except ValueError:
        raise UsageError(
            f"{config.ENV_HOLDOUT_DAYS}={raw!r}: must be a whole number of days"
        ) from None
    check_holdout_days(days, f"{config.ENV_HOLDOUT_DAYS}={raw}")
    return days


def check_holdout_days(days: int, where: str) -> None:
    if not 0 <= days <= config.HOLDOUT_MAX_DAYS:
        raise UsageError(f"{where}: hold-out window must be 0..{config.HOLDOUT_MAX_DAYS} days")
