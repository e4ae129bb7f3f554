"""``new`` adds an entry from a template and indexes it (``init`` is entries/init.py's).

Every check on what ``new`` is given -- names, descriptions, conditions, days, anchors --
turns bad input into a one-line UsageError before anything is written, and reads the
same whether the text came from the command line or an agent. The index is left
exactly as ``vaultkeeper index`` would generate it, the new entry's lines carried in as
an apply's are (vaultkeeper.index.delta), so ``index --check`` passes after it.

``new memory ... --anchor PATH[::NAME]``: each anchor is resolved in the repository
(``--repo DIR``, else the folder ``new`` runs in) before anything is written: its digest
and the commit checked out, or a one-line refusal naming the anchor. The lines go at the
end of the entry's frontmatter; the project folder is tied to the repository once the
entry exists (without --anchor or --repo, to the repository ``new`` runs in, when the
project is tied to no other).
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.anchors import check, repo
from vaultkeeper.anchors.format import AnchorError, item_yaml, parse_at
from vaultkeeper.entries.init import InitResult as InitResult
from vaultkeeper.entries.init import init_vault as init_vault
from vaultkeeper.errors import UsageError, VaultkeeperError
from vaultkeeper.index import delta as quick
from vaultkeeper.index.build import build_index
from vaultkeeper.index.rows import Stamp
from vaultkeeper.registry.blocks import is_counter_line, load_registry
from vaultkeeper.store import secrets
from vaultkeeper.store.edit import quoted, read_for_edit, yaml_scalar
from vaultkeeper.store.fsio import atomic_write, writer_lock
from vaultkeeper.store.model import Problem
from vaultkeeper.store.templates import clean_body, render, with_body
from vaultkeeper.store.vault import iter_markdown, rel, resolve_inside


@dataclass(frozen=True)
class NewResult:
    kind: str
    name: str
    path: str  # vault-relative file written
    line: int  # 1-based line of the entry (the ### heading for a pattern)
    index_line: str | None
    index_file: str = config.INDEX_FILE  # _index.md, or a sub-index when the index is split
    problems: tuple[Problem, ...] = ()  # files the index lists without a description


def _target(vault: Path, kind: str, name: str, project: str | None) -> Path:
    if kind in ("memory", "decision", "research"):
        if not project:
            raise UsageError(f"`new {kind}` needs --project P (it goes to projects/P/...)")
        check_name(project)
        _check_project_case(vault, project)
        sub = config.RESEARCH_SUBDIR if kind == "research" else config.MEMORY_SUBDIR
        relative = f"{config.PROJECTS_DIR}/{project}/{sub}/{name}.md"
    elif kind == "reference":
        relative = f"{config.REFERENCES_DIR}/{name}.md"
    else:
        raise UsageError(f"unknown kind {kind!r}; one of {', '.join(config.ENTRY_KINDS)}")
    return resolve_inside(vault, relative)


def _check_project_case(vault: Path, project: str) -> None:
    # projects/API beside projects/api: two folders on Linux, one on macOS and Windows.
    projects = vault / config.PROJECTS_DIR
    if not projects.is_dir():
        return
    for child in projects.iterdir():
        if child.name != project and child.name.lower() == project.lower():
            raise UsageError(
                f"--project {project}: {config.PROJECTS_DIR}/{child.name} exists and differs "
                "only by case; use that name"
            )


def new_entry(
    vault: Path,
    kind: str,
    name: str,
    description: str,
    *,
    project: str | None = None,
    label: str | None = None,
    today: dt.date,
    holdout_days: int = config.HOLDOUT_DAYS,
    falsify: str | None = None,
    body: str | None = None,
    anchors: Sequence[str] = (),
    repo_dir: str | None = None,
) -> NewResult:
    """Create one entry (or registry block), then regenerate the index to include it.

    ``falsify`` is the entry's falsification_condition, the re-check a held-out lesson
    is re-validated against; ``body`` (a note's text under its title) replaces the
    template's placeholder prose. Every check (name, description, label, condition,
    body, taken names, an index that can be regenerated) runs before the first write.
    """
    check_name(name)
    description = clean_description(description)
    condition = "" if falsify is None else clean_condition(falsify)
    if falsify is not None and kind == "pattern":
        raise UsageError(
            "--falsify is for an entry with frontmatter; a pattern is a registry block"
        )
    if body is not None and kind == "pattern":
        raise UsageError("a pattern is one registry block: give it a description, not a body")
    text = None if body is None else clean_body(body)
    if label is not None and label not in config.LABELS:
        raise UsageError(f"unknown label {label!r}; one of {', '.join(config.LABELS)}")
    check_holdout_days(holdout_days, "holdout_days")
    top, anchor_lines = anchored(kind, anchors, repo_dir)  # refused before a write
    with writer_lock(vault):
        if kind == "pattern":
            target, content, line = _pattern_file(vault, name, description, today)
            link = f"{config.REGISTRY_FILE[: -len('.md')]}#{name}"
        else:
            target, content = _entry_file(
                vault, kind, name, description, project, label, today, holdout_days, condition
            )
            if text is not None:
                content = with_body(content, name, text)
            content = with_anchors(content, anchor_lines)
            line = 1
            link = rel(vault, target)[: -len(".md")]
        quick.check(vault)  # an index that cannot be regenerated refuses before any write
        atomic_write(target, content)
        tie_project(vault, target, top)
        try:
            index = quick.reindex(vault)  # the new entry's lines, or the whole index
            if isinstance(index, Stamp) and index.outside:  # a symlink out: say so, in order
                index = build_index(vault, check=True)
        except OSError as exc:  # the entry exists now: say so, and how to finish
            raise VaultkeeperError(
                f"created {rel(vault, target)}, but {exc.filename or config.INDEX_FILE}: "
                f"{exc.strerror or exc}; run `vaultkeeper index` once that is fixed"
            ) from None
        problems = () if isinstance(index, Stamp) else index.problems
        index_file, index_line = _line_of(vault, tuple(index.files), link)
        return NewResult(kind, name, rel(vault, target), line, index_line, index_file, problems)


def _entry_file(
    vault: Path,
    kind: str,
    name: str,
    description: str,
    project: str | None,
    label: str | None,
    today: dt.date,
    holdout_days: int,
    condition: str = "",
) -> tuple[Path, str]:
    target = _target(vault, kind, name, project)
    # Obsidian resolves [[name]] by file name, case-insensitively, anywhere in the vault.
    taken = [p for p in iter_markdown(vault) if p.stem.lower() == name.lower()]
    if target.exists() or taken:
        where = rel(vault, target if target.exists() else taken[0])
        raise VaultkeeperError(f"{name}: already taken by {where}; choose another name")
    held_out = kind == "memory" and (label or "inferred") != "fact"
    values: dict[str, str | None] = {
        "name": yaml_scalar(name),
        "description": yaml_scalar(description),
        "type": kind,
        "status": "held_out" if held_out else "active",
        "label": label or ("inferred" if kind == "memory" else "fact"),
        "falsification_condition": quoted(condition),
        "holdout_until": quoted((today + dt.timedelta(days=holdout_days)).isoformat())
        if held_out
        else None,
        "title": name,
    }
    return target, render(f"{kind}.md", values)


def _pattern_file(
    vault: Path, name: str, description: str, today: dt.date
) -> tuple[Path, str, int]:
    """The registry's path, its full new content (BOM kept) and the new block's line."""
    blocks, _ = load_registry(vault)
    same = [b for b in blocks if b.name.lower() == name.lower()]
    if same:
        where = f"{same[0].rel}:{same[0].line}"
        raise VaultkeeperError(f"{name}: a ### {same[0].name} block already exists ({where})")
    registry = resolve_inside(vault, config.REGISTRY_FILE)
    if registry.exists():
        text, bom = read_for_edit(registry, config.REGISTRY_FILE)
    else:
        text, bom = render("registry.md", {}), ""
    nl = "\r\n" if text.count("\r\n") * 2 > text.count("\n") else "\n"
    values = {"name": name, "description": _block_safe(description), "today": today.isoformat()}
    block = render("pattern.md", values).replace("\n", nl)
    if text and not text.endswith("\n"):
        text += nl
    if text and not text.endswith(nl * 2):
        text += nl
    return registry, bom + text + block, text.count("\n") + 1


def _line_of(vault: Path, index_files: tuple[str, ...], link: str) -> tuple[str, str | None]:
    """The index file holding the generated line linking ``link``, and that line."""
    prefix = f"- [[{link}]]"
    for name in index_files:
        text, _ = read_for_edit(vault / name, name)
        for line in text.splitlines():
            if line == prefix or line.startswith(prefix + " "):
                return name, line
    return config.INDEX_FILE, None


def _block_safe(description: str) -> str:
    # The description is a line of the block body: it must not read as a heading (a new
    # block), a code fence, or a counter line.
    if description.startswith(("#", "```", "~~~")) or is_counter_line(description):
        return "\\" + description
    return description


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


def anchored(kind: str, specs: Sequence[str], repo_dir: str | None) -> tuple[str | None, list[str]]:
    """(the repository's top level, the anchors: lines); without specs, ``repo_dir``'s
    top level (the project is tied to it) or None."""
    if not specs:
        if repo_dir is None:
            return None, []
        top = repo.toplevel(repo_dir)
        if top is None:
            raise UsageError(f"--repo: {repo_dir} is in no git repository")
        return top, []
    if kind not in ("memory", "decision"):
        raise UsageError(f"--anchor is for a memory or decision entry, not a {kind}")
    where = repo_dir or os.getcwd()
    top = repo.toplevel(where)
    if top is None:
        raise UsageError(
            f"--anchor: {where} is in no git repository (run inside one or --repo DIR)"
        )
    lines = [f"{config.ANCHORS_KEY}:"]
    for spec in specs:
        try:
            anchor = parse_at(spec)
            digest, commit = check.record(top, anchor)
        except (AnchorError, ValueError) as exc:
            raise UsageError(f"--anchor: {exc}") from None
        lines.append(item_yaml(spec.strip(), digest, commit))
    return top, lines


def with_anchors(content: str, lines: Sequence[str]) -> str:
    """``content`` with ``lines`` just before its frontmatter's closing ``---``."""
    if not lines:
        return content
    head, sep, rest = content.partition("\n---\n")
    if not sep or not content.startswith("---\n"):
        raise UsageError("--anchor: the template has no frontmatter to add anchors to")
    return head + "\n" + "\n".join(lines) + sep + rest


def tie_project(vault: Path, target: Path, top: str | None) -> None:
    """The entry's project tied to ``top`` (--repo, --anchor); with neither, to the
    repository ``new`` runs in, if the project is tied to no other (repo.tie if_free)."""
    project = repo.project_of(target.relative_to(vault).as_posix())
    if project is None:
        return
    if top is not None:
        repo.tie(vault, project, top)
    else:
        repo.tie(vault, project, os.getcwd(), if_free=True)
