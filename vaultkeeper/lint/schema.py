"""What a file must hold. VK2xx: every entry carries the spec's one frontmatter schema,
and nothing else. VK4xx: registry blocks whose counters the scanner can trust, one block
per name."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator

from vaultkeeper import config
from vaultkeeper.index.files import is_index_file
from vaultkeeper.index.headings import heading_key
from vaultkeeper.lint.codes import Finding
from vaultkeeper.registry.blocks import RegistryBlock, name_key
from vaultkeeper.store.edit import get_frontmatter_raw
from vaultkeeper.store.globs import problem as glob_problem
from vaultkeeper.store.model import Frontmatter, Note, parse_date

_QUOTED_DATE = re.compile(r"""^(["'])(\d{4}-\d{2}-\d{2})\1$""")
_BARE_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def bare_date(raw: str) -> bool:
    """An unquoted real ISO date: what ``lint --fix`` quotes."""
    return _BARE_DATE.match(raw) is not None and parse_date(raw) is not None


def schema_applies(rel: str) -> bool:
    """Entries only: not an index, not a registry file, not a promoted skill."""
    top = rel.split("/", 1)[0]
    if is_index_file(rel):
        return False
    return top not in (config.PATTERNS_DIR, config.SKILLS_DIR)


Said = Iterator[tuple[int, int, str, bool]]  # line, column, message, fixable


def check_schema(note: Note, enabled: Callable[[str], bool]) -> Iterator[Finding]:
    """Each enabled VK2xx rule on ``note``'s frontmatter."""
    fm = note.frontmatter
    if fm is None:
        why = f"no frontmatter: an entry needs {', '.join(config.REQUIRED_KEYS)}"
        if enabled("VK201"):
            yield Finding(note.rel, 1, 1, "VK201", why)
        return
    for code, rule in _RULES:
        for line, col, why, fixable in rule(note, fm) if enabled(code) else ():
            yield Finding(note.rel, line, col, code, why, fixable=fixable)


def _required(note: Note, fm: Frontmatter) -> Said:
    for key in config.REQUIRED_KEYS:
        if key not in fm.data:
            yield fm.end_line, 1, f"required key {key!r} missing", False
        elif fm.data[key] is None or str(fm.data[key]).strip() == "":
            yield fm.key_lines.get(key, fm.end_line), 1, f"required key {key!r} is empty", False


def _in_set(note: Note, fm: Frontmatter) -> Said:
    for key, allowed in (("status", config.STATUSES), ("label", config.LABELS)):
        value = fm.data.get(key)
        if value is not None and str(value).strip() and str(value) not in allowed:
            why = f"{key} {str(value)!r} is not one of {' | '.join(allowed)}"
            yield fm.key_lines.get(key, 1), len(key) + 3, why, False


def _unknown(note: Note, fm: Frontmatter) -> Said:
    for key in map(str, fm.data):
        if key not in config.SCHEMA_KEYS and key not in config.OPTIONAL_KEYS:
            why = f"frontmatter key {key!r} is not in the spec's schema (no ad-hoc fields)"
            yield fm.key_lines.get(key, 1), 1, why, False


def _holdout(note: Note, fm: Frontmatter) -> Said:
    key = "holdout_until"
    if fm.data.get(key) in (None, ""):
        return
    raw = get_frontmatter_raw(note.text, key) or ""
    m = _QUOTED_DATE.match(raw)
    if m and parse_date(m.group(2)) is not None:
        return
    valid = bare_date(raw)
    reason = "is not quoted" if valid else "is not a quoted ISO date (YYYY-MM-DD)"
    why = f'holdout_until {raw} {reason}; write it as "YYYY-MM-DD" (the scanner needs the quotes)'
    yield fm.key_lines.get(key, 1), len(key) + 3, why, valid


def _no_condition(note: Note, fm: Frontmatter) -> Said:
    """A held-out lesson is re-validated against its condition: an empty one checks nothing."""
    status, until = fm.data.get("status"), fm.data.get("holdout_until")
    held_out = status == "held_out" or (status is None and until not in (None, ""))
    condition = fm.data.get("falsification_condition")
    if not held_out or (condition is not None and str(condition).strip()):
        return
    key = "falsification_condition"
    line = next((fm.key_lines[k] for k in (key, "status", "holdout_until") if k in fm.key_lines), 1)
    why = f"held-out entry with an empty {key}: re-validation has nothing to check it against; "
    yield line, 1, why + "say what would prove it wrong", False


def _anchors(note: Note, fm: Frontmatter) -> Said:
    """VK206: each anchors: item a usable {at, digest, commit} (vaultkeeper/anchors/format.py)."""
    from vaultkeeper.anchors.format import parse_items

    line = fm.key_lines.get(config.ANCHORS_KEY, 1)
    if config.ANCHORS_KEY in fm.data:
        for problem in parse_items(fm.data.get(config.ANCHORS_KEY))[1]:
            yield line, 1, problem, False


def _paths(note: Note, fm: Frontmatter) -> Said:
    """``paths:`` (Claude Code's ``.claude/rules`` convention): one glob or a list of them,
    each relative to the repository's top level; the recall hook serves the lesson
    before a matching file is touched."""
    if config.PATHS_KEY not in fm.data:
        return
    value = fm.data.get(config.PATHS_KEY)
    globs = [value] if isinstance(value, str) else value
    line = fm.key_lines.get(config.PATHS_KEY, 1)
    if not isinstance(globs, list) or not globs:
        why = "is not a glob or a list of globs"
    else:
        bad = [g for g in globs if not isinstance(g, str) or not g.strip()]
        bad += [
            g for g in globs if isinstance(g, str) and (g.startswith("/") or ".." in g.split("/"))
        ]
        slow = [
            (g, slow_why) for g in globs if isinstance(g, str) and (slow_why := glob_problem(g))
        ]
        if not bad and not slow:
            return
        if bad:
            why = f"holds {bad[0]!r}: each glob must be a non-empty path relative to the repository"
        else:
            shown = slow[0][0] if len(slow[0][0]) <= 60 else slow[0][0][:57] + "..."
            why = f"holds {shown!r}, which {slow[0][1]}: it cannot be matched quickly"
    yield line, 1, f'paths {why} (e.g. paths: ["src/**/*.py"])', False


_RULES: tuple[tuple[str, Callable[[Note, Frontmatter], Said]], ...] = (
    ("VK201", _required),
    ("VK202", _in_set),
    ("VK203", _holdout),
    ("VK205", _no_condition),
    ("VK206", _anchors),
    ("VK207", _paths),
    ("VK204", _unknown),
)


def check_registry(
    blocks: Iterable[RegistryBlock], enabled: Callable[[str], bool]
) -> Iterator[Finding]:
    first: dict[str, RegistryBlock] = {}
    targets: dict[tuple[str, str], RegistryBlock] = {}  # (file, link target) -> first block
    for block in blocks:
        if enabled("VK401"):
            for problem in block.problems():
                yield Finding(block.rel, problem.line or block.line, 1, "VK401", problem.reason)
        key = name_key(block.name)
        target = targets.setdefault((block.rel, heading_key(block.name)), block)
        if target is not block and name_key(target.name) != key and enabled("VK402"):
            why = f"### {block.name}: links to it and to ### {target.name} (line {target.line}) "
            why += f"are one link target ({block.rel[:-3]}#{heading_key(block.name)}); rename one"
            yield Finding(block.rel, block.line, 1, "VK402", why)
        if key not in first:
            first[key] = block
        elif enabled("VK402"):
            at = f"{first[key].rel}:{first[key].line}"
            why = f"### {block.name}: a second block with this name (first at {at}); merge them"
            yield Finding(block.rel, block.line, 1, "VK402", why)
