"""VK2xx: every entry carries the spec's one frontmatter schema, and nothing else."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from vaultkeeper import config
from vaultkeeper.index.files import is_index_file
from vaultkeeper.lint.codes import Finding
from vaultkeeper.store.edit import get_frontmatter_raw
from vaultkeeper.store.globs import problem as glob_problem
from vaultkeeper.store.model import Note, parse_date

_QUOTED_DATE = re.compile(r"""^(["'])(\d{4}-\d{2}-\d{2})\1$""")
_BARE_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_SETS = {"status": config.STATUSES, "label": config.LABELS}


def schema_applies(rel: str) -> bool:
    """Entries only: not an index, not a registry file, not a promoted skill."""
    top = rel.split("/", 1)[0]
    if is_index_file(rel):
        return False
    return top not in (config.PATTERNS_DIR, config.SKILLS_DIR)


def check_schema(note: Note, enabled: Callable[[str], bool]) -> Iterator[Finding]:
    fm = note.frontmatter
    required = ", ".join(config.REQUIRED_KEYS)
    if fm is None:
        if enabled("VK201"):
            yield Finding(note.rel, 1, 1, "VK201", f"no frontmatter: an entry needs {required}")
        return
    data = fm.data
    if enabled("VK201"):
        for key in config.REQUIRED_KEYS:
            if key not in data:
                yield Finding(note.rel, fm.end_line, 1, "VK201", f"required key {key!r} missing")
            elif data[key] is None or str(data[key]).strip() == "":
                line = fm.key_lines.get(key, fm.end_line)
                yield Finding(note.rel, line, 1, "VK201", f"required key {key!r} is empty")
    if enabled("VK202"):
        for key, allowed in _SETS.items():
            value = data.get(key)
            if value is not None and str(value).strip() and str(value) not in allowed:
                yield Finding(
                    note.rel,
                    fm.key_lines.get(key, 1),
                    len(key) + 3,
                    "VK202",
                    f"{key} {str(value)!r} is not one of {' | '.join(allowed)}",
                )
    if enabled("VK203"):
        yield from _holdout(note)
    if enabled("VK205"):
        yield from _no_condition(note)
    if enabled("VK206") and config.ANCHORS_KEY in data:
        yield from _anchors(note)
    if enabled("VK207") and config.PATHS_KEY in data:
        yield from _paths(note)
    if enabled("VK204"):
        for key in data:
            if str(key) not in config.SCHEMA_KEYS and str(key) not in config.OPTIONAL_KEYS:
                yield Finding(
                    note.rel,
                    fm.key_lines.get(str(key), 1),
                    1,
                    "VK204",
                    f"frontmatter key {str(key)!r} is not in the spec's schema (no ad-hoc fields)",
                )


def _holdout(note: Note) -> Iterator[Finding]:
    fm = note.frontmatter
    key = "holdout_until"
    if fm is None or fm.data.get(key) in (None, ""):
        return
    raw = get_frontmatter_raw(note.text, key) or ""
    m = _QUOTED_DATE.match(raw)
    if m and parse_date(m.group(2)) is not None:
        return
    valid = _BARE_DATE.match(raw) is not None and parse_date(raw) is not None
    reason = "is not quoted" if valid else "is not a quoted ISO date (YYYY-MM-DD)"
    yield Finding(
        note.rel,
        fm.key_lines.get(key, 1),
        len(key) + 3,
        "VK203",
        f'holdout_until {raw} {reason}; write it as "YYYY-MM-DD" (the scanner needs the quotes)',
        fixable=valid,
    )


def _no_condition(note: Note) -> Iterator[Finding]:
    """A held-out lesson is re-validated against its condition: an empty one checks nothing."""
    fm = note.frontmatter
    if fm is None:
        return
    status, until = fm.data.get("status"), fm.data.get("holdout_until")
    held_out = status == "held_out" or (status is None and until not in (None, ""))
    condition = fm.data.get("falsification_condition")
    if not held_out or (condition is not None and str(condition).strip()):
        return
    key = "falsification_condition"
    line = next((fm.key_lines[k] for k in (key, "status", "holdout_until") if k in fm.key_lines), 1)
    yield Finding(
        note.rel,
        line,
        1,
        "VK205",
        f"held-out entry with an empty {key}: re-validation has nothing to check it against; "
        "say what would prove it wrong",
    )


def _anchors(note: Note) -> Iterator[Finding]:
    """VK206: each anchors: item a usable {at, digest, commit} (vaultkeeper/anchors/format.py)."""
    from vaultkeeper.anchors.format import parse_items

    fm = note.frontmatter
    assert fm is not None
    line = fm.key_lines.get(config.ANCHORS_KEY, 1)
    for problem in parse_items(fm.data.get(config.ANCHORS_KEY))[1]:
        yield Finding(note.rel, line, 1, "VK206", problem)


def _paths(note: Note) -> Iterator[Finding]:
    """``paths:`` (Claude Code's ``.claude/rules`` convention): one glob or a list of them,
    each relative to the repository's top level; the recall hook serves the lesson
    before a matching file is touched."""
    fm = note.frontmatter
    if fm is None:
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
    yield Finding(note.rel, line, 1, "VK207", f'paths {why} (e.g. paths: ["src/**/*.py"])')
