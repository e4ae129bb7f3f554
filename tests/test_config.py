"""No stale copy of a configured value in README.md, the docs or the vault-spec template.

Every number the README and the docs pages (outside code fences: those hold real
output) state for the cooldown, the stale-run window, the prune idle days, the promote
count, the hold-out window and the index budget must equal vaultkeeper/config.py. A number counts as
stated for a setting when it carries a unit (ms, s, min, h, days, lines, bytes) or,
for the promote count, a comparison (>= 2, at least 2, 2 or more, a table cell that
is just the number), and the nearest setting keyword on its line is that setting's
(within 80 characters). Write an override example as an assignment
(`SELF_MAINTAIN_COOLDOWN_MS=60000`): assignments are not statements of the default.
Ages ("1 minute old", "3 days ago") are not thresholds, and a paragraph describing a
fixture or an example (it says "fixture", "seeded", "for example" or "e.g.") is skipped.

The spec template may not hold such numbers at all: it uses {{PLACEHOLDERS}}.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from vaultkeeper import config
from vaultkeeper.store.templates import config_values, data_dir, render

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
# the pages that may state a configured value (docs/benchmarks.md is bench/run.py's)
DOCS = [README, *sorted(p for p in (REPO / "docs").glob("*.md") if p.name != "benchmarks.md")]
CONFIG_PAGE = REPO / "docs" / "configuration.md"
SPEC_TEMPLATE = REPO / "templates" / "vault-spec.md"

DAY_MS = 86_400_000
TIME_MS = {
    "ms": 1,
    "millisecond": 1,
    "s": 1000,
    "sec": 1000,
    "second": 1000,
    "min": 60_000,
    "minute": 60_000,
    "h": 3_600_000,
    "hr": 3_600_000,
    "hour": 3_600_000,
    "d": DAY_MS,
    "day": DAY_MS,
}
BYTES = {"b": 1, "byte": 1, "kb": 1000, "kib": 1024, "mb": 1_000_000}


@dataclass(frozen=True)
class Setting:
    name: str
    keywords: str  # regex, matched case-insensitively, not inside an identifier
    kind: str  # time (in ms) | lines | bytes | count
    value: int | None  # None: a neighbouring setting, only there to claim its numbers


SETTINGS = [
    Setting("cooldown", r"cool-?downs?|throttled?", "time", config.COOLDOWN_MS),
    Setting("stale-run window", r"stale", "time", config.STALE_RUN_MS),
    Setting("prune idle days", r"prun\w*|idle", "time", config.PRUNE_IDLE_DAYS * DAY_MS),
    Setting(
        "hold-out window",
        r"hold-?outs?|held[-_ ]out|holdout_until",
        "time",
        config.HOLDOUT_DAYS * DAY_MS,
    ),
    Setting(
        "promote count", r"promot\w*|success count|reuse[sd]?", "count", config.PROMOTE_MIN_COUNT
    ),
    Setting("index lines", r"_?index(?:\.md)?|load budget", "lines", config.INDEX_MAX_LINES),
    Setting("index bytes", r"_?index(?:\.md)?|load budget", "bytes", config.INDEX_MAX_BYTES),
    Setting(
        "decay window", r"stale: re-validate|STALE_DAYS|decay", "time", config.STALE_DAYS * DAY_MS
    ),
    Setting(
        "skill unused window",
        r"skills? unused|SKILL_UNUSED_DAYS|invoked",
        "time",
        config.SKILL_UNUSED_DAYS * DAY_MS,
    ),
    # neighbours: their numbers must not be taken for the settings above
    Setting("overdue", r"overdue", "time", None),
    Setting("scan age", r"last (?:completed )?scan|scan age", "time", None),
    Setting("hook timeouts", r"timeouts?|SessionEnd|SessionStart|hooks?", "time", None),
    Setting("journal size", r"journal", "bytes", None),
]

_NUMBER = r"(?<![\w.=/:#-])(\d{1,3}(?:,\d{3})+|\d[\d_]*(?:\.\d+)?)(?![\w.]*[-/:]\d)"
_UNIT = re.compile(
    _NUMBER
    + r"[ \t]?-?[ \t]?"
    + r"(ms|milliseconds?|s|secs?|seconds?|min|mins|minutes?|h|hrs?|hours?|d|days?"
    + r"|lines?|bytes?|B|KB|kB|KiB|MB)\b"
)
_COMPARE = re.compile(
    r"(?:>=|\u2265|at least|no fewer than)[ \t]*" + _NUMBER + r"|" + _NUMBER + r"\+?[ \t]+or more"
)


def _value(raw: str) -> float:
    return float(raw.replace(",", "").replace("_", ""))


def _unit_kind(unit: str) -> tuple[str, float]:
    u = unit.lower().rstrip("s") if unit not in ("s", "ms") else unit
    u = {"milli": "ms", "millisecond": "ms", "sec": "s", "second": "s", "mins": "min"}.get(u, u)
    if u in ("line",):
        return "lines", 1
    if unit in ("B", "KB", "kB", "KiB", "MB") or u == "byte":
        return "bytes", BYTES["byte" if u == "byte" else unit.lower()]
    return "time", TIME_MS[u]


def _keyword_spans(line: str) -> list[tuple[int, int, Setting]]:
    spans = []
    for setting in SETTINGS:
        pattern = re.compile(
            r"(?<![A-Za-z0-9_])(?:" + setting.keywords + r")(?![A-Za-z0-9_])", re.I
        )
        spans.extend((m.start(), m.end(), setting) for m in pattern.finditer(line))
    return spans


def _nearest(line: str, start: int, end: int, kind: str) -> Setting | None:
    best: tuple[int, Setting] | None = None
    for k_start, k_end, setting in _keyword_spans(line):
        if setting.kind != kind:
            continue
        distance = max(k_start - end, start - k_end, 0)
        if distance <= 80 and (best is None or distance < best[0]):
            best = (distance, setting)
    return None if best is None else best[1]


def _setting_for(line: str, start: int, end: int, kind: str) -> Setting | None:
    """The setting a number at line[start:end] states.

    In a table row the first cell names the setting for the whole row; elsewhere the
    nearest keyword on the line does.
    """
    if line.lstrip().startswith("|"):
        first_start = line.index("|") + 1
        first_end = line.find("|", first_start)
        first_end = len(line) if first_end == -1 else first_end
        cell = line[first_start:first_end]
        if start >= first_end:  # a value cell: measure from the end of the first cell
            start = end = len(cell)
        else:
            start, end = start - first_start, end - first_start
        setting = _nearest(cell, start, end, kind)
        if setting is not None:
            return setting
    return _nearest(line, start, end, kind)


_EXAMPLE = re.compile(r"fixture|seeded|for example|\be\.g\.", re.I)
_AGE = re.compile(r"[ \t]+(?:old|ago)\b")


def _prose_lines(text: str) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    paragraph: list[tuple[int, str]] = []
    fence = None

    def flush() -> None:
        if not any(_EXAMPLE.search(line) for _, line in paragraph):
            out.extend(paragraph)
        paragraph.clear()

    for number, line in enumerate(text.split("\n"), start=1):
        m = re.match(r"^[ \t]{0,3}(`{3,}|~{3,})", line)
        if m:
            flush()
            fence = None if fence and m.group(1)[0] == fence[0] else (fence or m.group(1))
            continue
        if fence is not None:
            continue
        if line.strip():
            paragraph.append((number, line))
        else:
            flush()
    flush()
    return out


def stated_values(text: str, *, prose_only: bool = True) -> list[tuple[int, str, Setting, float]]:
    """(line, the text as written, setting, value in the setting's unit) for each number
    that states a setting."""
    lines = _prose_lines(text) if prose_only else list(enumerate(text.split("\n"), start=1))
    found: list[tuple[int, str, Setting, float]] = []
    for number, line in lines:
        for m in _UNIT.finditer(line):
            if _AGE.match(line, m.end()):
                continue
            kind, factor = _unit_kind(m.group(2))
            setting = _setting_for(line, m.start(), m.end(), kind)
            if setting is not None:
                found.append((number, m.group(0), setting, _value(m.group(1)) * factor))
        for m in _COMPARE.finditer(line):
            setting = _setting_for(line, m.start(), m.end(), "count")
            raw = m.group(1) or m.group(2)
            if setting is not None:
                found.append((number, m.group(0), setting, _value(raw)))
        if line.lstrip().startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            first = cells[0] if cells else ""
            for cell in cells[1:]:
                if re.fullmatch(r"\d+", cell):
                    setting = _nearest(first, 0, 0, "count")
                    if setting is not None:
                        found.append((number, f"| {cell} |", setting, _value(cell)))
    return found


def stale(text: str, *, prose_only: bool = True) -> list[str]:
    return [
        f"line {n}: {written!r} is not the {s.name} in vaultkeeper/config.py"
        for n, written, s, value in stated_values(text, prose_only=prose_only)
        if s.value is not None and value != s.value
    ]


# -- the checker itself can fail --------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "The scanner waits a cooldown of 7200000 ms between runs.",
        "a 2 h cooldown",
        "a cooldown of 3,600,001 ms",
        "| scan cooldown | 3600000 ms (2 hours) since the last completed scan | - |",
        "stale-run recovery after 15 minutes",
        "a 5-minute stale window",
        "prune: count 0 and idle > 60 days",
        "prune candidates: never reused and idle for 30d",
        "promote when the success count >= 3",
        "promoted at 5 or more reuses",
        "| promote: success count at least | 3 | - |",
        "New lessons are held out for 14 days.",
        "the hold-out window is 10 days",
        "the index stays within 150 lines",
        "_index.md budget: 30000 bytes",
    ],
)
def test_checker_catches_a_stale_value(text: str) -> None:
    assert stale(text), text


@pytest.mark.parametrize(
    "text",
    [
        "a fixed 1 h cooldown (3,600,000 ms)",
        "override it: `SELF_MAINTAIN_COOLDOWN_MS=60000 vaultkeeper scan`",
        "stale-run recovery after 10 minutes",
        "prune: count == 0 and idle > 90d",
        "promote at success count >= 2",
        "held out for 7 days",
        "the index stays within 200 lines and 25000 bytes",
        "held-out entries overdue by more than 3 days",  # a neighbour's number
        "| age of the last completed scan | <= 5 days | fail |",
        "re-entry guard (in-progress, live pid, 1 minute old: skips)",
        "a fixture vault: `### bar` count 0 and 100 days idle",
        "| `_index.md` against its load budget | <= 200 lines and <= 25000 bytes | fail |",
        "```text\nSELF-MAINTAIN: cooldown 5 min, idle 653 days\n```",  # output in a fence
    ],
)
def test_checker_accepts_current_values_and_ignores_others(text: str) -> None:
    assert stale(text) == []


# -- the real files ---------------------------------------------------------------------


@pytest.mark.parametrize("page", DOCS, ids=lambda p: p.name)
def test_the_docs_state_no_stale_value(page: Path) -> None:
    assert stale(page.read_text(encoding="utf-8")) == [], page.name


def test_the_configuration_page_states_the_configuration() -> None:
    """The Configuration table exists and names every one of the six settings."""
    found = {s.name for _, _, s, _ in stated_values(CONFIG_PAGE.read_text(encoding="utf-8"))}
    for name in (
        "cooldown",
        "stale-run window",
        "prune idle days",
        "promote count",
        "hold-out window",
        "index lines",
        "index bytes",
    ):
        assert name in found, f"docs/configuration.md states no value for the {name}"


@pytest.mark.parametrize("page", DOCS, ids=lambda p: p.name)
def test_the_docs_name_only_real_environment_variables(page: Path) -> None:
    names = {v for k, v in vars(config).items() if k.startswith("ENV_")}
    text = page.read_text(encoding="utf-8")
    for token in re.findall(r"\b(?:SELF_MAINTAIN|VAULTKEEPER)_[A-Z_]+\b", text):
        assert token in names, f"{page.name} names {token}, which config.py does not define"


def test_spec_template_uses_placeholders_for_every_configured_value() -> None:
    raw = SPEC_TEMPLATE.read_text(encoding="utf-8")
    assert data_dir("templates") / "vault-spec.md" == SPEC_TEMPLATE
    literal = [
        f"line {n}: {written!r} states the {s.name}: use a {{{{PLACEHOLDER}}}}"
        for n, written, s, _ in stated_values(raw, prose_only=False)
        if s.value is not None
    ]
    assert literal == []
    for placeholder in (
        "COOLDOWN_MS",
        "STALE_RUN_MINUTES",
        "PRUNE_IDLE_DAYS",
        "PROMOTE_MIN_COUNT",
        "HOLDOUT_DAYS",
        "INDEX_MAX_LINES",
        "INDEX_MAX_BYTES",
        "ENV_COOLDOWN",
        "ENV_FORCE",
    ):
        assert "{{" + placeholder + "}}" in raw
    for k, v in vars(config).items():
        if k.startswith("ENV_"):
            assert v not in raw, f"templates/vault-spec.md spells {v}: use {{{{{k}}}}}"
    assert "{{" + "SUMMARY_PREFIX}}" in raw and config.SUMMARY_PREFIX not in raw


def test_rendered_spec_agrees_with_config() -> None:
    text = render("vault-spec.md", {})
    assert "{{" not in text
    assert text.isascii()
    assert stale(text, prose_only=False) == []
    assert f"{config.COOLDOWN_MS} ms" in text
    assert f"success count >= {config.PROMOTE_MIN_COUNT}" in text
    assert f"more than {config.PRUNE_IDLE_DAYS} days" in text


def test_every_template_is_ascii_and_every_placeholder_is_known() -> None:
    known = set(config_values()) | {
        "name",
        "description",
        "type",
        "status",
        "label",
        "falsification_condition",
        "holdout_until",
        "title",
        "today",
    }
    for path in sorted(data_dir("templates").iterdir()):
        raw = path.read_bytes()
        assert raw.isascii(), path.name
        for token in re.findall(r"\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}", raw.decode()):
            assert token in known, f"templates/{path.name}: unknown placeholder {token}"
