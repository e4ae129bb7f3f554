"""Lint codes, the Finding they produce, and ruff-style rule selection."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from vaultkeeper.errors import UsageError

ERROR = "error"
WARNING = "warning"

# code -> (severity, what it finds); the README's table lists exactly these.
CODES: dict[str, tuple[str, str]] = {
    "VK001": (
        ERROR,
        "file cannot be read (a symlink out of the vault is never read) or its frontmatter "
        "cannot be parsed",
    ),
    "VK101": (ERROR, "non-ASCII character (names the character and the spec's replacement)"),
    "VK102": (ERROR, "fenced code block without a language tag"),
    "VK103": (ERROR, "unbalanced fence: an opened block is never closed"),
    "VK104": (ERROR, "mermaid rule broken: diagram type, unquoted label with > < == (, or <br/>"),
    "VK105": (ERROR, "control character (escape sequence, bidi override) a terminal acts on"),
    "VK106": (ERROR, "conflict markers a merge left (<<<<<<< ... ======= ... >>>>>>>)"),
    "VK201": (ERROR, "required frontmatter key missing (name, description, type, label)"),
    "VK202": (ERROR, "value outside its set (status, label)"),
    "VK203": (ERROR, "holdout_until is not a quoted ISO date"),
    "VK204": (WARNING, "frontmatter key the spec does not define"),
    "VK205": (
        WARNING,
        "held-out entry with an empty falsification_condition (nothing to re-check)",
    ),
    "VK206": (ERROR, "anchors: item unusable (at PATH[::NAME] | 'PATH: TEXT', digest, commit)"),
    "VK207": (ERROR, "paths: is not a list of relative globs (the recall matches files by it)"),
    "VK301": (ERROR, "broken wikilink: no file has that name or path"),
    "VK302": (ERROR, "ambiguous wikilink: two or more files could be meant"),
    "VK303": (WARNING, "orphan: an entry not reachable from _index.md by links"),
    "VK304": (WARNING, "_index.md over its load budget (lines or bytes)"),
    "VK305": (ERROR, "broken heading or block link: the note has no such #heading or ^block id"),
    "VK401": (
        ERROR,
        "registry block malformed (count not a whole number, date not ISO, counter missing)",
    ),
    "VK402": (ERROR, "two registry blocks with one name, or one link target (a:b, a b, a^b)"),
    "VK501": (ERROR, "private key block (the value is never printed)"),
    "VK502": (ERROR, "token with a known shape: AWS, GitHub, OpenAI, Anthropic, Slack"),
    "VK503": (ERROR, "password, secret, token or api_key assigned a credential-like value"),
    "VK601": (ERROR, "supersession chain loops (a superseded by b ... superseded by a)"),
    "VK602": (ERROR, "superseded_by points at no entry (or at several)"),
    "VK603": (WARNING, "a live entry links to a superseded one (names the newer entry)"),
}

# Off on a vault not laid out as ours unless selected explicitly: those notes never
# promised our format (ASCII only, tagged fences, the spec's mermaid diagram types).
OURS_ONLY = ("VK101", "VK102", "VK104", "VK2", "VK4")
# Warnings, not errors, on a vault not laid out as ours: Obsidian shows a link to a note
# (or heading) not written yet as an ordinary link, not as a fault in the file.
SOFT_ELSEWHERE = ("VK301", "VK305")


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    col: int
    code: str
    message: str
    fixable: bool = False
    soft: bool = False  # a warning whatever the code's own severity (see SOFT_ELSEWHERE)

    @property
    def severity(self) -> str:
        return WARNING if self.soft else CODES[self.code][0]

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.code} {self.message}"

    def to_dict(self) -> dict[str, Any]:
        keys = ("path", "line", "col", "code", "message", "severity", "fixable")
        return {key: getattr(self, key) for key in keys}


def _normalise(prefixes: Iterable[str]) -> tuple[str, ...]:
    out: list[str] = []
    for raw in prefixes:
        for part in raw.split(","):
            prefix = part.strip().upper()
            if not prefix:
                continue
            if prefix != "ALL" and not any(code.startswith(prefix) for code in CODES):
                raise UsageError(
                    f"{part.strip()!r}: no lint code starts with this (see `lint --help`)"
                )
            out.append("" if prefix == "ALL" else prefix)
    return tuple(out)


@dataclass(frozen=True)
class Selection:
    """Which codes run. As in ruff, the longest matching prefix decides; a tie ignores."""

    select: tuple[str, ...] | None
    ignore: tuple[str, ...]
    ours: bool

    @classmethod
    def parse(cls, select: Iterable[str] | None, ignore: Iterable[str], *, ours: bool) -> Selection:
        chosen = _normalise(select) if select is not None else None
        return cls(chosen or None, _normalise(ignore), ours)

    def enabled(self, code: str) -> bool:
        if self.select is None:
            selected = 0 if not self.ours and code.startswith(OURS_ONLY) else len("VK")
        else:
            selected = max((len(p) for p in self.select if code.startswith(p)), default=-1)
            if selected == 0:  # ALL
                selected = 1
        ignored = max((len(p) for p in self.ignore if code.startswith(p)), default=-1)
        return selected > 0 and selected > ignored

    def codes(self) -> tuple[str, ...]:
        return tuple(code for code in CODES if self.enabled(code))
