"""The MCP tools' input and output shapes: JSON schemas come from these annotations.

Inputs are ``Annotated`` types whose descriptions become each argument's schema text;
outputs are TypedDicts (the structured output's schema); a search hit is the CLI's own.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.types import ToolAnnotations
from pydantic import Field
from typing_extensions import TypedDict  # pydantic needs it on Python < 3.12

from vaultkeeper.search.rank import Hit  # the CLI's hit: its schema is the tool's


class SearchOut(TypedDict):
    hits: list[Hit]
    count: int


class RecallOut(TypedDict):
    brief: str
    available: bool
    note: str | None


class ReadOut(TypedDict):
    path: str
    text: str
    lines: int


class NewOut(TypedDict):
    kind: str
    name: str
    path: str
    line: int
    index_line: str | None
    index_file: str


class CiteOut(TypedDict):
    target: str
    kind: str
    session: str
    recorded: bool
    counted: bool
    count_before: int | None
    count_after: int | None
    last_used: str | None
    note: str | None


class ReportOut(TypedDict):
    available: bool
    summary: str | None
    made: str | None
    age_seconds: int | None
    report: dict[str, Any] | None
    note: str | None


class StatusOut(TypedDict):
    vault: str
    generated_at: str
    verdict: str
    signals: list[dict[str, Any]]


class OutcomeOut(TypedDict):
    outcome: str
    meaning: str
    action: str
    target: str
    reason: str
    id: str | None
    exit_code: int
    record: dict[str, Any]


# The values the CLI accepts (config.ENTRY_KINDS, lifecycle.RESULTS); a test keeps them equal.
Kind = Literal["memory", "decision", "research", "reference", "pattern"]
Result = Literal["pass", "fail"]


def arg(description: str) -> Any:
    return Field(description=description)


Target = Annotated[str, arg("A registry pattern NAME, or an entry's vault-relative path.")]
Path_ = Annotated[str, arg("The entry's vault-relative path, e.g. projects/api/memory/x.md.")]
Entry = Annotated[
    str, arg("The entry's vault-relative path (projects/api/memory/x.md), or its name.")
]
Evidence = Annotated[
    str,
    arg("Receipt: a URL (https://...) or path:line of an existing file (vault-relative or "
         "absolute) showing the evidence."),
]  # fmt: skip
ExpectHash = Annotated[
    str | None,
    arg("Optional sha256 (or its first 8+ hex digits) from the report: refuse if the "
         "target changed since."),
]  # fmt: skip
DryRun = Annotated[bool, arg("Show the diff that would be written; change nothing.")]
Name = Annotated[str, arg("File name of the entry: letters, digits, '.', '_', '-'.")]
Description = Annotated[str, arg("One-line recall summary (pure ASCII), shown in the index.")]
Project = Annotated[str, arg("Project folder under projects/.")]
Body = Annotated[
    str | None, arg("The note's text under its title (pure ASCII); the template if left out.")
]
Falsify = Annotated[
    str | None,
    arg("What would prove it wrong: the re-check when its hold-out ends (pure ASCII)."),
]
Anchors = Annotated[
    list[str] | None,
    arg("Code the entry is about, as `vaultkeeper new --anchor` takes it: a file "
        "(src/billing/cart.py), a definition (src/billing/cart.py::round_cart) or a text "
        "('src/billing/config.py: ROUNDING_MODE = 1'), relative to the repository's top "
        "level; resolved in the project's repository (else the server's folder's)."),
]  # fmt: skip
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False)
