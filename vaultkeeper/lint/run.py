"""``lint``: load the vault once, run the selected rules, optionally fix, return findings.

A file whose frontmatter can't be parsed still has a body to check; in Obsidian's
templates folder, placeholders such as ``created: {{date}}`` (not YAML until the template
is used) are read as strings, so a template's property links still count.
"""

from __future__ import annotations

import functools
import gc
import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.errors import UsageError
from vaultkeeper.index.files import is_index_file
from vaultkeeper.index.headings import AnchorTable
from vaultkeeper.lint.codes import ERROR, SOFT_ELSEWHERE, Finding, Selection
from vaultkeeper.lint.fix import apply_fixes
from vaultkeeper.lint.format import (
    check_ascii,
    check_conflicts,
    check_controls,
    check_fences,
    check_other_files,
    check_secrets,
)
from vaultkeeper.lint.graph import LinkCheck, check_budget, check_orphans, check_supersession
from vaultkeeper.lint.schema import check_registry, check_schema, schema_applies
from vaultkeeper.registry.blocks import RegistryBlock, parse_blocks
from vaultkeeper.store.links import code_lines, extract_links, find_fences, split_lines
from vaultkeeper.store.model import (
    Note,
    ParseError,
    Problem,
    decode,
    outside_problems,
    parse_note,
    read_regular,
    split_frontmatter,
)
from vaultkeeper.store.textsafe import has_controls
from vaultkeeper.store.vault import (
    find_vault,
    in_folder,
    is_ours,
    rel,
    templates_folder,
    walk_files,
)

_MARK = "\n======="  # every conflict hunk has one: most notes are passed over at once


_PLACEHOLDER = re.compile(r"\{\{[^{}\r\n]*\}\}")


def _as_template(path: Path, rel: str, text: str) -> Note | None:
    yaml_text, _, body_offset = split_frontmatter(text)
    if yaml_text is None or "{{" not in yaml_text:
        return None
    head = _PLACEHOLDER.sub(lambda m: json.dumps(m.group()), text[:body_offset])
    try:
        note = parse_note(path, rel, head + text[body_offset:])
    except ParseError:
        return None
    return note._replace(text=text)


Loaded = tuple[list[Note], list[Problem], set[str], set[str]]


def load(vault: Path, paths: Iterable[Path], *, meta: bool = True) -> Loaded:
    """The notes at ``paths``, the problems met (VK001), the notes whose frontmatter
    failed (only their body is checked) and those not UTF-8 (read with U+FFFD for each bad
    byte: only their links are checked, so a rename leaves no broken link there unsaid).
    ``meta=False`` (only the link rules run, no orphans to find): a frontmatter with no
    ``[[`` is not parsed, as none of its values can be a link and nothing asks what it
    holds -- the note keeps its body from the same line."""
    templates = templates_folder(vault)
    notes: list[Note] = []
    problems: list[Problem] = []
    body_only: set[str] = set()
    links_only: set[str] = set()
    cut = len(str(vault)) + 1
    for path in paths:
        rel = str(path)[cut:].replace(os.sep, "/")
        try:
            raw = read_regular(path)
            text = decode(raw)
            yaml_text, end_line, body_offset = split_frontmatter(text)
        except ParseError as exc:
            problems.append(Problem(rel, exc.line, exc.reason))
            if exc.reason.startswith("not UTF-8"):  # its links, each bad byte as U+FFFD
                loose = raw.decode("utf-8", "replace")
                notes.append(Note(path, rel, loose, None, loose, 1))
                links_only.add(rel)
            continue
        try:
            if meta or yaml_text is None or "[[" in yaml_text:
                notes.append(parse_note(path, rel, text))
            else:
                notes.append(Note(path, rel, text, None, text[body_offset:], end_line + 1))
            continue
        except ParseError as exc:
            problem = Problem(rel, exc.line, exc.reason)
        note = _as_template(path, rel, text) if in_folder(rel, templates) else None
        if note is None:  # only its body is checked
            problems.append(problem)
            note = Note(path, rel, text, None, text[body_offset:], end_line + 1)
            body_only.add(rel)
        notes.append(note)
    if problems:
        notes.sort(key=lambda n: n.rel)
    return notes, problems, body_only, links_only


@dataclass(frozen=True)
class LintResult:
    vault: Path
    ours: bool  # laid out as a vaultkeeper vault (VK101, VK2xx, VK4xx on by default)
    codes: tuple[str, ...]  # the codes that ran
    files: int  # markdown files checked
    findings: tuple[Finding, ...]
    fixed: int = 0
    fixed_files: tuple[str, ...] = ()

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.severity == ERROR)

    @property
    def warnings(self) -> int:
        return len(self.findings) - self.errors

    @property
    def fixable(self) -> int:
        return sum(1 for f in self.findings if f.fixable)


def find_lint_vault(
    explicit: Path | None, env: Mapping[str, str], cwd: Path, paths: Sequence[Path]
) -> Path:
    """As every command finds its vault, but an Obsidian vault counts too; without
    ``--vault`` the search starts at the first PATH given (``lint ~/notes``)."""
    if explicit is not None or env.get(config.ENV_VAULT):
        return find_vault(explicit, env, cwd)
    start = (paths[0] if paths[0].is_absolute() else cwd / paths[0]) if paths else cwd
    return find_vault(None, env, start if start.is_dir() else start.parent, obsidian=True)


def _in_scope(vault: Path, paths: Sequence[Path], cwd: Path) -> Iterator[str]:
    for path in paths:
        full = (path if path.is_absolute() else cwd / path).resolve()
        if not full.exists():
            raise UsageError(f"{path}: no such file or directory")
        inside = rel(vault.resolve(), full)
        if inside == str(full):
            raise UsageError(f"{path}: not inside the vault {vault}")
        yield "" if inside == "." else inside


def lint_vault(
    vault: Path,
    *,
    paths: Sequence[Path] = (),
    cwd: Path | None = None,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] = (),
    fix: bool = False,
) -> LintResult:
    """Lint the whole vault (links need all of it); report findings under ``paths`` only."""
    ours = is_ours(vault)
    selection = Selection.parse(select, ignore, ours=ours)
    scopes = tuple(_in_scope(vault, paths, cwd or Path.cwd())) if paths else ("",)
    collecting = gc.isenabled()
    gc.disable()  # a lint makes some 200,000 small objects and no cycles: collections
    try:  # took a tenth of a 6,000-note lint's time
        result = _run(vault, selection, ours, scopes)
        targets = [f.path for f in result.findings if f.fixable] if fix else []
        if not targets:
            return result
        enabled = selection.enabled
        fixed, files = apply_fixes(vault, targets, ascii=enabled("VK101"), holdout=enabled("VK203"))
        return replace(_run(vault, selection, ours, scopes), fixed=fixed, fixed_files=files)
    finally:
        if collecting:
            gc.enable()


def _wanted(path: str, scopes: tuple[str, ...]) -> bool:
    return any(not s or path == s or path.startswith(s.rstrip("/") + "/") for s in scopes)


def _run(vault: Path, selection: Selection, ours: bool, scopes: tuple[str, ...]) -> LintResult:
    enabled = functools.cache(selection.enabled)
    schema = any(c.startswith("VK2") for c in selection.codes())
    registry = any(c.startswith("VK4") for c in selection.codes())
    outside: list[str] = []  # symlinks out of the vault: said once, never read
    found = list(walk_files(vault, outside=outside))
    cut = len(os.fspath(vault)) + 1
    rels = [f[cut:].replace(os.sep, "/") for f in found]
    files = [Path(f) for f in found]
    markdown = [p for p in files if p.suffix == ".md"]
    # the link rules alone (no orphans to find): a note is read only for its links
    bare = set(selection.codes()) <= {"VK301", "VK302", "VK303", "VK304", "VK305"}
    bare = bare and not (enabled("VK303") and config.INDEX_FILE in rels)
    notes, problems, body_only, links_only = load(vault, markdown, meta=not bare)
    findings: list[Finding] = [
        Finding(p.path, p.line or 1, 1, "VK001", p.reason)
        for p in (*problems, *outside_problems(vault, outside))
        if enabled("VK001")
    ]
    edges: dict[str, set[str]] = {}
    entries: list[str] = []
    blocks: list[RegistryBlock] = []
    bodies = {n.rel: n.body for n in notes}
    links = LinkCheck(rels, enabled, AnchorTable(bodies.get) if enabled("VK305") else None)
    templates = templates_folder(vault, ours)
    for note in notes:
        if bare and "[[" not in note.text:
            continue  # no link in it: nothing of it to check
        wanted = _wanted(note.rel, scopes)
        if bare:  # the link rules alone: no other rule needs the note's lines
            keep = note.rel in links_only or not in_folder(note.rel, templates)
            suspects = links.suspects(note.rel, note.text) if wanted and keep else None
            if suspects:  # only a link that may be wrong somewhere in it is looked at
                findings.extend(links.check(note.rel, extract_links(note, only=suspects), set()))
            continue
        lines = split_lines(note.text)
        fences = find_fences(note.text, len(note.text) - len(note.body), note.body_line)
        whole = note.rel not in links_only  # not UTF-8 (VK001): its links alone
        rules = whole and wanted
        if rules and enabled("VK101") and not note.text.isascii():
            fm_end = note.frontmatter.end_line if note.frontmatter else 0
            findings.extend(check_ascii(note.rel, lines, code_lines(fences, len(lines)), fm_end))
        if rules and enabled("VK105") and has_controls(note.text):
            findings.extend(check_controls(note.rel, lines))
        if rules and enabled("VK106") and _MARK in note.text:
            findings.extend(check_conflicts(note.rel, lines, code_lines(fences, len(lines))))
        if rules:
            findings.extend(check_fences(note.rel, lines, fences, enabled))
            findings.extend(check_secrets(note.rel, note.text, enabled))
        if rules and schema and schema_applies(note.rel) and note.rel not in body_only:
            findings.extend(check_schema(note, enabled))
        if whole and in_folder(note.rel, templates):
            continue  # a template's links are placeholders until it is used; not an entry
        if note.is_entry and not is_index_file(note.rel):
            entries.append(note.rel)
        said = extract_links(note, fences)
        checked = list(links.check(note.rel, said, edges.setdefault(note.rel, set())))
        if wanted:
            findings.extend(checked)
        if whole and registry and note.rel.startswith(config.PATTERNS_DIR + "/"):
            blocks.extend(parse_blocks(note.path, note.rel, note.text))
    index = next((n for n in notes if n.rel == config.INDEX_FILE), None)
    if index is not None and enabled("VK303"):
        findings.extend(check_orphans(entries, edges))
    if index is not None and enabled("VK304"):
        findings.extend(check_budget(index.text))
    findings.extend(check_registry(blocks, enabled))
    findings.extend(check_supersession(notes, links, enabled))
    shown = [(p, p.suffix == ".md") for p, r in zip(files, rels, strict=True) if _wanted(r, scopes)]
    findings.extend(check_other_files(vault, [p for p, md in shown if not md], enabled))
    findings = [f for f in findings if _wanted(f.path, scopes)]
    if not ours:
        findings = [replace(f, soft=True) if f.code in SOFT_ELSEWHERE else f for f in findings]
    findings.sort(key=lambda f: (f.path, f.line, f.col, f.code))
    # the files reported on (PATHS), not all those read to resolve the links
    reported = sum(md for _, md in shown)
    return LintResult(vault, ours, selection.codes(), reported, tuple(findings))
