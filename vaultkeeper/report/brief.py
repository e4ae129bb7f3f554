"""The brief: the last report as the next session's start hook serves it to the agent.

Each candidate's line from the Report, the wording, and the layout that fits everything
into the character limit (``render_brief``); what the brief shows of each lesson of the
session's project (``fields``), kept by the scan in each memory file's row
(``scan_memory.served``) and used by the brief (``Saved``) while the file's stat key is
the row's; the registry's most-used patterns (``top``), kept in each registry file's
report row (scan/reportrow.py) as the scan or a patch read it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shlex
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vaultkeeper import config
from vaultkeeper.registry.blocks import first_paragraph
from vaultkeeper.report.candidates import (
    HELD_OUT,
    PROMOTE,
    PRUNE,
    Report,
    age_text,
    iso,
    one_lines,
)
from vaultkeeper.store.secrets import strip_controls

if TYPE_CHECKING:
    from vaultkeeper.registry.keptheads import Head

Fields = list[Any]  # [name or None (the file's stem), description, status or None]

ITEM_MAX = 300  # one item's line in the brief, so one long value cannot crowd out the rest


def cut_lines(lines: list[str]) -> list[str]:
    """Each line one_line (one check for them all: a multi-line YAML value must not forge
    brief lines), a long one cut."""
    return [x if len(x) <= ITEM_MAX else x[: ITEM_MAX - 3] + "..." for x in one_lines(lines)]


def command(vault: str) -> str:
    """The command line prefix every hint in the brief uses."""
    return f"vaultkeeper --vault {shlex.quote(vault)}"


def intros(vk: str) -> tuple[str, str, str]:
    """The promote, prune and held-out sections' headings, each with its command."""
    return (
        (
            f"Promote eligible (success count >= {config.PROMOTE_MIN_COUNT}, not yet promoted). "
            "Promotion needs an evidence receipt (a URL or path:line, or the latest receipt "
            "shown, recorded from a session) and writes a skill:\n"
            f"  {vk} apply promote NAME --evidence RECEIPT"
        ),
        (
            f"Prune candidates (success count 0, last used more than {config.PRUNE_IDLE_DAYS} "
            "days ago). Deletion happens only on a person's explicit yes at a terminal; "
            "from an agent's shell the request waits in a queue for `vaultkeeper review`:\n"
            f"  {vk} apply prune NAME"
        ),
        (
            "Held-out due (holdout_until has passed). Each is re-checked against its "
            "falsification_condition; --pass sets status active, --fail sets status archived:\n"
            f"  {vk} apply revalidate PATH --pass|--fail --evidence RECEIPT"
        ),
    )


def layout(
    summary: str,
    vault: str,
    generated_at: dt.datetime,
    now: dt.datetime,
    problems: int,
    sections: list[tuple[str, list[str]]],
    extra: list[str],
    limit: int,
) -> str:
    """The brief's text from its parts (see brief.render_brief): at most ``limit`` characters."""
    vk = command(vault)
    head = [
        summary,
        f"Last scan of the memory vault {strip_controls(vault)}: "
        f"{iso(generated_at)} "
        f"({age_text(generated_at, now)}). "
        "The scanner lists candidates; it changes nothing.",
    ]
    if problems:
        head.append(
            f"Problems (unreadable files, blocks or dates): {problems}; `{vk} report` lists them."
        )
    tail = (
        [
            f"Leaving a candidate alone is recorded with: {vk} apply skip NAME --reason TEXT",
            "Each candidate's hash is in `report --json`; `--expect-hash HASH` on an apply "
            "command refuses an entry that changed since this report.",
        ]
        if sections
        else ["Nothing is waiting."]
    )
    more = "  ... and {} more (`{} report --json` lists every one)"
    fixed = sum(len(x) + 1 for x in head + tail) + sum(
        len(intro) + 2 + len(more.format(len(items), vk)) + 1 for intro, items in sections
    )
    budget = limit - fixed
    kept: dict[int, list[str]] = {}
    # smallest lists first, so what one list leaves unused goes to the longer ones
    order = sorted(range(len(sections)), key=lambda i: sum(len(x) + 1 for x in sections[i][1]))
    for n, i in enumerate(order):
        allowance = budget // (len(order) - n) if budget > 0 else 0
        used, lines = 0, []
        for line in sections[i][1]:
            if used + len(line) + 1 > allowance:
                break
            lines.append(line)
            used += len(line) + 1
        kept[i] = lines
        budget -= used
    out = list(head)
    for i, (intro, items) in enumerate(sections):
        out.extend(["", intro, *kept[i]])
        if len(kept[i]) < len(items):
            out.append(more.format(len(items) - len(kept[i]), vk))
    skip = [f"Leaving one alone is recorded with: {vk} apply skip NAME --reason TEXT"]
    with_extra = "\n".join([*out, *extra, "", *(tail if sections else skip)]) + "\n"
    out.extend(["", *tail])
    text = "\n".join(out) + "\n"
    if extra and len(with_extra) <= limit:
        text = with_extra
    return text if len(text) <= limit else text[: limit - 4] + "...\n"


def _brief_sections(
    report: Report, receipts: Mapping[str, str] | None = None
) -> list[tuple[str, list[str]]]:
    promote, prune, held_out = intros(command(report.vault))
    heading = {PROMOTE: promote, PRUNE: prune, HELD_OUT: held_out}
    out: list[tuple[str, list[str]]] = []
    for kind in (PROMOTE, PRUNE, HELD_OUT):
        items = report.lists()[kind]
        if not items:
            continue
        lines = []
        for c in items:
            if kind == HELD_OUT:  # revalidate takes the path
                line = f"- {c.path}: {c.figures()}"
            else:
                line = f"- {c.name}: {c.figures()} ({c.path}:{c.line})"
            if c.falsification_condition:
                line += f"; falsification_condition: {c.falsification_condition}"
            if kind == PROMOTE and receipts and c.name in receipts:
                line += f"; latest receipt: {receipts[c.name]}"
            lines.append(line)
        out.append((heading[kind], cut_lines(lines)))
    return out


def render_brief(
    report: Report,
    now: dt.datetime,
    limit: int = config.BRIEF_MAX_CHARS,
    receipts: Mapping[str, str] | None = None,
) -> str:
    """Plain text for a coding agent's next session: never more than ``limit`` characters.

    Every kind of candidate keeps its heading and command; when the lists are too long,
    each is cut fairly and ends with an ``... and N more`` line.
    """
    from vaultkeeper.upkeep import sections as upkeep

    sections = _brief_sections(report, receipts)
    # the upkeep sections (duplicates, stale lessons, unused skills) come after the spec's
    # lists and only whole, where they fit: they never take the lists' room. Each item is
    # at least "- " and a character and its newline: past the limit they never fit whole
    extra: list[str] = []
    if 4 * (len(report.duplicates) + len(report.stale) + len(report.skills_unused)) <= limit:
        extra = [x for intro, items in upkeep.brief_sections(report) for x in ("", intro, *items)]
    summary, problems = report.summary(), len(report.problems)
    return layout(summary, report.vault, report.generated_at, now, problems, sections, extra, limit)


# -- the lessons of the session's project --------------------------------------------------


def fields(meta: dict[str, Any] | None) -> Fields | None:
    """What the brief shows of a lesson; None for one it never serves (unreadable,
    archived, superseded)."""
    if meta is None:
        return None
    status = meta.get("status")
    if status == "archived" or meta.get("superseded_by") not in (None, "", []):
        return None
    name = meta.get("name")
    return [
        str(name) if name not in (None, "") else None,
        "" if meta.get("description") is None else str(meta.get("description")),
        None if status is None else str(status),
    ]


def memory_files(vault: Path, project: str) -> list[str]:
    """The project's memory files the brief may serve (none symlinked out of the vault)."""
    from vaultkeeper.store.vault import links_out, walk_files

    folder = vault / config.PROJECTS_DIR / project / config.MEMORY_SUBDIR
    if not folder.is_dir() or folder.is_symlink():
        return []
    root = os.path.realpath(vault)
    return [
        path
        for path in walk_files(vault, folder)
        if path.endswith(".md") and not (os.path.islink(path) and links_out(root, path))
    ]


class Saved:
    """The scan's rows of one project's lessons, read once (one query, no file read)."""

    def __init__(self, vault: Path, project: str) -> None:

        from vaultkeeper.store import db

        self.rows: dict[str, tuple[str, str]] = {}
        prefix = f"{config.PROJECTS_DIR}/{project}/{config.MEMORY_SUBDIR}/"
        with db.existing(vault) as conn:  # none yet (no scan): every lesson is read
            if conn is None:
                return
            try:
                found = conn.execute(
                    "SELECT path, key, served FROM scan_memory WHERE path >= ? AND path < ?",
                    (prefix, prefix[:-1] + chr(ord("/") + 1)),  # the paths under prefix
                ).fetchall()
            except sqlite3.Error:  # a shortcut only: the files are read
                return
        self.rows = {path: (key, served) for path, key, served in found}

    def fields(self, path: str, rel: str) -> Fields | None:
        """The lesson's fields (``fields``): its row's while ``path``'s stat key is the
        row's, else read now (YAML); None for one never served or unreadable."""
        from vaultkeeper.store import model
        from vaultkeeper.store.db import key_text

        row = self.rows.get(rel)
        try:
            st = os.stat(path)
            key = key_text((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
            got = json.loads(row[1]) if row is not None and row[0] == key else ()
        except (OSError, ValueError, RecursionError, TypeError):
            got = ()
        if got is None:
            return None
        if type(got) is list and len(got) == 3:
            name, description, status = got
            ok = (name is None or type(name) is str) and type(description) is str
            if ok and (status is None or type(status) is str):
                return [name, description, status]
        try:
            fm = model.parse_note(Path(path), rel, model.decode(model.read_regular(path)))
        except model.ParseError:
            return None  # the scan and lint report it; the recall just leaves it out
        return fields(None if fm.frontmatter is None else dict(fm.frontmatter.data))


# -- the registry's most-used patterns -----------------------------------------------------

TOP = config.BRIEF_MAX_CHARS // 40  # as many as the brief can show (recall/start.py)


def summary(text: str) -> str:
    """The block's first paragraph of prose (after its heading line), on one line."""
    return first_paragraph(text.partition("\n")[2])


def ranked(heads: Sequence[Any]) -> list[Any]:
    """The readable patterns, most used first (count, then latest use)."""
    readable = [h for h in heads if h.count is not None and h.rel != config.NATIVE_REGISTRY_FILE]
    # descending, stable: equal keys keep the registry's order
    readable.sort(key=lambda h: (h.count or 0, h.last_used or dt.date.min), reverse=True)
    return readable


def _fingerprint(head: Any) -> str | None:
    """The fingerprint of the block's text the scan's rows keep (registry/keptheads.py's)."""
    span = getattr(head, "span", None)
    if span is None:  # a block the cache kept: its fingerprint came with it
        return getattr(head, "fingerprint", None)

    raw = span().encode("utf-8", "surrogatepass")
    return hashlib.blake2b(raw, digest_size=8).hexdigest()


def top(
    vault: Path, heads: Sequence[Head], known: dict[str, str], parse: bool = True
) -> tuple[list[Any], int]:
    """The scan's rows for the brief: ``(rank, name, count, last_used, path, summary,
    fingerprint)`` of the ``TOP`` most-used patterns, and how many there are; ``known``:
    the last scan's summaries by fingerprint (``parse`` False: one not known is None, not
    parsed). Raises OSError, ParseError or ValueError (a registry file changed under the
    scan): the caller then keeps none."""
    best = ranked(heads)
    parsed: dict[str, dict[int, Any]] = {}  # registry files parsed for a missing paragraph
    rows: list[Any] = []
    for rank, head in enumerate(best[:TOP]):
        mark = _fingerprint(head)
        text = getattr(head, "text", None)
        said: str | None
        if text is not None:
            said = summary(text)
        elif mark is not None and mark in known:
            said = known[mark]
        else:
            said = _parsed(vault, head, parsed) if parse else None
        used = head.last_used
        iso = None if used is None else used.isoformat()
        rows.append((rank, head.name, head.count, iso, head.rel, said, mark))
    return rows, len(best)


def _parsed(vault: Path, head: Any, parsed: dict[str, dict[int, Any]]) -> str:
    from vaultkeeper.registry.blocks import parse_heads
    from vaultkeeper.store.model import decode, read_regular

    if head.rel not in parsed:
        text = decode(read_regular(head.path))
        parsed[head.rel] = {h.line: h for h in parse_heads(head.path, head.rel, text)}
    found = parsed[head.rel].get(head.line)
    if found is None or found.name != head.name:
        raise ValueError(f"{head.rel}:{head.line}: not the block the scan read")
    return summary(found.text)
