"""Find and fill the files under ``templates/`` (shipped inside the wheel as package data)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from vaultkeeper import __version__, config
from vaultkeeper.errors import UsageError, VaultkeeperError
from vaultkeeper.store.model import split_frontmatter


def data_dir(name: str) -> Path:
    """``templates`` or ``hooks``: inside the installed wheel, else beside the package."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "_data" / name, here.parent / name):
        if candidate.is_dir():
            return candidate
    raise VaultkeeperError(f"vaultkeeper's {name}/ folder is missing from the installation")


_TOKEN = re.compile(r"\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}")


def render(name: str, values: Mapping[str, str | None]) -> str:
    """Fill ``{{key}}`` placeholders in one pass (a value holding ``{{...}}`` is text);
    a line whose placeholder's value is None is dropped, unknown ones stay."""
    text = (data_dir("templates") / name).read_text(encoding="utf-8")
    merged = {**config_values(), **values}
    out: list[str] = []
    for line in text.splitlines(keepends=True):
        keys = _TOKEN.findall(line)
        if any(key in merged and merged[key] is None for key in keys):
            continue
        out.append(_TOKEN.sub(lambda m: _fill(m, merged), line))
    return "".join(out)


def _fill(match: re.Match[str], values: Mapping[str, str | None]) -> str:
    value = values.get(match.group(1))
    return match.group(0) if value is None else value


def config_values() -> dict[str, str | None]:
    """The configuration as template values, so the spec never holds a stale copy."""
    rows = "\n".join(
        f"| `{label}` | {config.LABEL_WEIGHTS[label]} | {_LABEL_RULES[label]} |"
        for label in config.LABELS
    )
    values: dict[str, str | None] = {name: str(getattr(config, name)) for name in _AS_IS}
    values.update(
        VERSION=__version__,
        STALE_RUN_MINUTES=str(config.STALE_RUN_MS // 60_000),
        STATUSES=" | ".join(config.STATUSES),
        LABELS=" | ".join(config.LABELS),
        REQUIRED_KEYS=", ".join(f"`{k}`" for k in config.REQUIRED_KEYS),
        LABEL_ROWS=rows,
    )
    return values


# config's names a template shows as they are
_AS_IS = (
    "COOLDOWN_MS", "PRUNE_IDLE_DAYS", "PROMOTE_MIN_COUNT", "HOLDOUT_DAYS", "ENV_COOLDOWN",
    "ENV_FORCE", "LOCK_DIR", "STATE_FILE", "JOURNAL_FILE", "SUMMARY_PREFIX", "INDEX_START",
    "INDEX_END", "INDEX_MAX_LINES", "INDEX_MAX_BYTES",
)  # fmt: skip

_LABEL_RULES = {
    "fact": "observed directly; may become active without a hold-out",
    "inferred": "a new lesson; held out until re-validated",
    "rule": "counts double when weighing reuse",
    "validated-override": "a person's ruling; never demoted automatically",
}


def clean_body(text: str) -> str:
    """A note's body as given, in pure ASCII (glyphs spelled out), or a UsageError."""
    for glyph, ascii_text in config.ASCII_REPLACEMENTS.items():
        text = text.replace(glyph, ascii_text)
    text = text.replace("\r\n", "\n").strip("\n")
    if not text.strip():
        raise UsageError("body must not be empty (leave it out for the template's outline)")
    for number, line in enumerate(text.split("\n"), start=1):
        for column, char in enumerate(line, start=1):
            if ord(char) > 127 or (char < " " and char != "\t"):
                raise UsageError(
                    f"body line {number}, column {column}: character {char!r} "
                    f"(U+{ord(char):04X}); the vault is pure ASCII text"
                )
    return text + "\n"


def with_body(content: str, name: str, body: str) -> str:
    """The rendered template with everything under its frontmatter replaced by the title
    and ``body``."""
    _, _, offset = split_frontmatter(content)
    return f"{content[:offset]}\n# {name}\n\n{body}"
