"""``index``: regenerate the section of ``_index.md`` between the vaultkeeper markers.

One line per entry, grouped by folder, sorted, deterministic::

    ## projects/api/memory
    - [[projects/api/memory/flaky-ci-retries]] - Retry a flaky CI job once -- keywords: ci, retry

The description comes from the entry's frontmatter (a registry block's first paragraph),
served as to an agent (credentials masked, control characters stripped: agents load
the index first); a superseded entry's line starts ``(superseded by [[newer]])``.
keywords are a person's: whatever follows `` -- keywords: `` on an entry's line survives
regeneration. Notes in Obsidian's templates folder are not entries. Text outside the
markers is kept byte for byte. When the root index would pass the load budget, it links
one sub-index per top-level folder instead
(``_index/_index-<folder>.md``: one folder of their own, so the vault's root holds the
spec's layout and no more), each regenerated the same way. Sub-indexes an older version
left at the root are moved into ``_index/`` by the next write (one atomic rename each;
the links, ``[[_index-<folder>]]``, resolve by basename and stay as they are).

This module plans and writes; what is listed is vaultkeeper.index.rows' and the
index files' own text (markers, keywords, budget) vaultkeeper.index.files'.
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple

from vaultkeeper import config
from vaultkeeper.index.files import (
    Keywords,
    bom_of,
    check_markers,
    is_index_file,
    is_over_budget,
    is_subindex_name,
    keywords_of,
    measure,
    read_index,
    subindex_line,
    subindex_name,
    subindex_preamble,
    with_section,
)
from vaultkeeper.index.linknames import keep_names
from vaultkeeper.index.rows import (
    Entry,
    Row,
    Rows,
    Stamp,
    collect_entries,
    held_lines,
    is_md,
    is_racy,
    read_by_index,
    record,
    rels_of,
    render_entries,
    row_of,
    sha,
    stat_key,
)
from vaultkeeper.index.rows import check as check_stamp
from vaultkeeper.store.fsio import atomic_write, move, writer_lock
from vaultkeeper.store.links import Resolver
from vaultkeeper.store.model import ParseError, Problem, decode, outside_problems, read_regular
from vaultkeeper.store.templates import render
from vaultkeeper.store.vault import in_folder, resolve_inside, templates_folder, walk_files


@dataclass(frozen=True)
class IndexResult:
    entries: int
    split: bool  # the root index links sub-indexes instead of entries
    files: tuple[str, ...]  # every index file the vault should have
    changed: tuple[str, ...]  # files whose content is (or, with check, would be) different
    missing: tuple[str, ...]  # of those, the files that did not exist (created, or to be)
    written: bool
    root_lines: int
    root_bytes: int
    over_budget: tuple[str, ...]  # index files still over the budget
    unused: tuple[str, ...]  # old sub-index files no longer linked (left for a person)
    problems: tuple[Problem, ...] = ()  # files listed without a description: unreadable
    # of those, the files that could not be read (not a symlink out): their lines kept
    # as the index held them, and the command fails saying so
    unreadable: tuple[Problem, ...] = ()
    moved: tuple[str, ...] = ()  # root sub-indexes of an older version moved into _index/
    left: tuple[str, ...] = ()  # ones that could not be moved, each with the reason


def build_index(
    vault: Path, *, check: bool = False, keep: Keywords | None = None, stamped: bool = True
) -> IndexResult:
    """Regenerate the index (and sub-indexes when over budget); ``check`` writes nothing.

    ``keep``: keywords for entries the index does not list now (a restored entry's,
    kept in .trash/ when it was pruned); what the index holds wins. When the index stamp
    (vaultkeeper.index.rows) shows the index up to date, no note is read; ``stamped``
    False: the caller found it does not.
    """
    with contextlib.nullcontext() if check else writer_lock(vault):  # a check writes nothing
        moved, left = move_root_subindexes(vault, write=not check)
        stamp = stamped and not keep and _as_stamped(vault, moved, left)
        result = stamp or _build(vault, write=not check, keep=keep)
    unused = tuple(n for n in result.unused if n not in moved)  # a check: to be moved
    return replace(result, moved=moved, left=left, unused=unused)


def _as_stamped(vault: Path, moved: tuple[str, ...], left: tuple[str, ...]) -> IndexResult | None:
    """What a regeneration would find when the stamp holds: every index file as it
    would write it, each read once for its measure; None when the stamp does not hold
    (or when the walk left symlinks out: their problems come in the walk's order)."""
    if moved or left:
        return None
    found = check_stamp(vault)
    if found is None or found.outside:
        return None
    texts = {}
    for name in found.files:
        text = read_index(vault / name)
        if text is None:
            return None
        texts[name] = text
    return _result(
        found.entries, found.split, texts, changed=(), missing=(), written=False, unused=()
    )


def move_root_subindexes(
    vault: Path, *, write: bool = True
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Move each sub-index an older version wrote at the vault's root into ``_index/``.

    One atomic rename each; the links to it are basenames and still resolve. Left where
    it is, with the reason: a symlink (its relative target would change meaning), or a
    name ``_index/`` already holds (which of the two is right is a person's call).
    Returns (moved, left), vault-relative; ``write=False`` moves nothing and returns
    what it would move.
    """
    try:
        names = sorted(e.name for e in os.scandir(vault) if is_subindex_name(e.name))
    except OSError:
        return (), ()
    if write and names:  # refuse what the regeneration would refuse before any move
        check_markers(config.INDEX_FILE, read_index(vault / config.INDEX_FILE) or "")
        for name in names:
            read_index(vault / name)
    moved: list[str] = []
    left: list[str] = []
    for name in names:
        source = vault / name
        target = subindex_name(name[len(config.SUBINDEX_PREFIX) : -3])
        if source.is_symlink() or not source.is_file():
            left.append(f"{name}: not a regular file; move it into {config.SUBINDEX_DIR}/ by hand")
            continue
        if os.path.lexists(vault / target):
            left.append(f"{name}: {target} exists too; keep one of them by hand")
            continue
        check_folder(vault)
        if write:
            (vault / config.SUBINDEX_DIR).mkdir(exist_ok=True)
            move(source, resolve_inside(vault, target))
        moved.append(name)
    return tuple(moved), tuple(left)


def check_folder(vault: Path) -> None:
    """Refuse, writing nothing, when the sub-indexes' folder cannot hold them."""
    from vaultkeeper.errors import VaultkeeperError

    folder = vault / config.SUBINDEX_DIR
    if os.path.lexists(folder) and (folder.is_symlink() or not folder.is_dir()):
        raise VaultkeeperError(
            f"{folder}: exists and is not a folder; sub-indexes go there (move it away, "
            "then run `vaultkeeper index`); nothing was changed"
        )


def generate(vault: Path) -> dict[str, str]:
    """Every index file's text as ``build_index`` would write it (BOM aside); reads only."""
    return _plan(vault).wanted


class _Plan(NamedTuple):
    current: dict[str, str | None]
    wanted: dict[str, str]
    entries: int
    split: bool
    problems: list[Problem]  # files that could not be read (listed without a description)
    unreadable: list[Problem]  # of those, the ones read and refused (not symlinks out)
    rows: dict[str, Row]  # every walked file's row (vaultkeeper.index.rows)
    found: dict[str, Row] | None  # the rows held before
    stamp: Stamp | None  # what the index depends on, when all of it can be vouched for
    names: list[tuple[str, str, str]]  # the link_names rows of the settled notes read


def _plan(vault: Path, keep: Keywords | None = None) -> _Plan:
    """(current text, wanted text) of each index file, the entry count, the split, the
    files that could not be read (listed without a description), and the rows."""
    outside: list[str] = []  # symlinks out of the vault: never read, never listed
    files = list(walk_files(vault, outside=outside))  # strings: a Path each costs more
    rels = rels_of(vault, files)
    resolver = Resolver(rels)
    templates = templates_folder(vault)  # Obsidian's templates are not entries
    md = (f for f, r in zip(files, rels, strict=True) if is_md(r) and not in_folder(r, templates))
    rows = Rows(vault)
    seen = {r: stat_key(f) for f, r in zip(files, rels, strict=True) if is_index_file(r)}
    current: dict[str, str | None] = {r: read_index(vault / r) for r in rels if is_index_file(r)}
    current.setdefault(config.INDEX_FILE, None)
    entries, problems, unreadable = collect_entries(
        vault, md, rows, lambda: held_lines(current, resolver)
    )
    vouchable = not problems  # a file that could not be parsed: no stamp vouches for it
    problems = [*problems, *outside_problems(vault, outside)]
    keywords = keywords_of(current, resolver)
    for key, words in (keep or {}).items():
        keywords.setdefault(key, words)
    root_text = current[config.INDEX_FILE]
    if root_text is None:
        root_text = render("index.md", {})
    check_markers(config.INDEX_FILE, root_text)
    wanted = {config.INDEX_FILE: with_section(root_text, render_entries(entries, keywords))}
    split = is_over_budget(wanted[config.INDEX_FILE])
    unsplit = measure(wanted[config.INDEX_FILE])
    if split:
        by_top: dict[str, list[Entry]] = {}
        root_entries: list[Entry] = []
        for entry in entries:
            top = entry.folder.split("/")[0]
            (by_top.setdefault(top, []) if top else root_entries).append(entry)
        lines = render_entries(root_entries, keywords)
        if by_top:
            lines.append("## sub-indexes")
        for top in sorted(by_top, key=lambda t: (t.casefold(), t)):
            name = subindex_name(top)
            lines.append(subindex_line(top))
            base = current.get(name) or subindex_preamble(top)
            check_markers(name, base)
            wanted[name] = with_section(base, render_entries(by_top[top], keywords))
        wanted[config.INDEX_FILE] = with_section(root_text, lines)
    state = {
        r: (seen[r] if r in seen else rows.seen.get(f)) if read_by_index(r, templates) else None
        for f, r in zip(files, rels, strict=True)
    }
    found = None
    if (
        vouchable
        and not rows.racy
        and set(current) == set(wanted)
        and all(state[r] is not None for r in rels if read_by_index(r, templates))
    ):
        outs = sorted(r for r in rels_of(vault, outside))
        found = Stamp(state, outs, templates, split, sorted(wanted), unsplit, {}, len(entries))
    kept = {r: rows.rows.get(r) or row_of(r, k, rows.kept.get(r)) for r, k in state.items()}
    count = len(entries)
    return _Plan(
        current, wanted, count, split, problems, unreadable, kept, rows.found, found, rows.names
    )


def _build(vault: Path, *, write: bool, keep: Keywords | None = None) -> IndexResult:
    plan = _plan(vault, keep)
    current, wanted, found = plan.current, plan.wanted, plan.stamp
    changed = tuple(sorted(n for n, t in wanted.items() if current.get(n) != t))
    # a symlinked index file: its target is written and the link stays a link; a link
    # leading out of the vault is refused, by --check too (new checks before it writes)
    targets = {name: resolve_inside(vault, name) for name in wanted}
    if write and any(n != config.INDEX_FILE and n not in current for n in changed):
        check_folder(vault)
    rows = plan.rows
    if write:
        for name in changed:
            data = bom_of(vault / name) + wanted[name].encode("utf-8")  # outside the markers
            atomic_write(targets[name], data)
            key = stat_key(os.path.join(vault, name))
            rows[name] = row_of(name, key, None)
            if found is not None:
                found.state[name], found.racy[name] = key, sha(data)
    if write or not changed:  # a check keeps its stamp in this process only
        stamp = None if found is None else _vouched(vault, found, current)
        record(vault, stamp, rows, write=write, found=plan.found)
    if write:
        keep_names(vault, plan.names, set())  # what a merge asks of the notes just read
    return _result(
        plan.entries, plan.split, wanted, changed=changed, written=write and bool(changed),
        missing=tuple(n for n in changed if current.get(n) is None),
        unused=tuple(sorted(n for n in current if n not in wanted)),
        problems=tuple(p for p in plan.problems if not is_index_file(p.path)),
        unreadable=tuple(p for p in plan.unreadable if not is_index_file(p.path)),
    )  # fmt: skip


def _result(entries: int, split: bool, wanted: dict[str, str], **rest: Any) -> IndexResult:
    """The result for the index files ``wanted`` (as they are, or as they are written)."""
    lines, size = measure(wanted[config.INDEX_FILE])
    over = tuple(sorted(n for n, t in wanted.items() if is_over_budget(t)))
    files = tuple(sorted(wanted))
    return IndexResult(
        entries, split, files, root_lines=lines, root_bytes=size, over_budget=over, **rest
    )


def _vouched(vault: Path, found: Stamp, current: dict[str, str | None]) -> Stamp | None:
    """``found`` with the digest of each index file changed within the racy window (as
    read now, when that is still the text the plan read), or None."""
    now = time.time_ns()
    for name, key in found.state.items():
        if is_index_file(name) and name not in found.racy and is_racy(key, now):
            try:
                raw = read_regular(vault / name)
            except ParseError:
                return None
            if current.get(name) != decode(raw):
                return None
            found.racy[name] = sha(raw)
    return found
