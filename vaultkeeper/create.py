"""``init`` lays out a vault; ``new`` adds an entry from a template and indexes it.

Both leave ``_index.md`` exactly as ``vaultkeeper index`` would generate it: the index
has one writer (vaultkeeper.index), so ``index --check`` passes after either.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from vaultkeeper import config, secrets
from vaultkeeper.edit import quoted, read_for_edit, yaml_scalar
from vaultkeeper.errors import UsageError, VaultkeeperError
from vaultkeeper.fsio import atomic_write, writer_lock
from vaultkeeper.index import build_index, generate
from vaultkeeper.model import Problem
from vaultkeeper.registry import is_counter_line, load_registry
from vaultkeeper.templates import clean_body, render, with_body
from vaultkeeper.vault import iter_markdown, rel, resolve_inside

_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._-]*$")
_INIT_FOLDERS = (config.PROJECTS_DIR, config.PATTERNS_DIR, config.REFERENCES_DIR, config.STATE_DIR)
# .gitignore lines that keep the vault's state/ folder out of git
_IGNORES_STATE = {"state", "state/", "/state", "/state/", "state/*", "/state/*", "/state/**"}


@dataclass(frozen=True)
class InitResult:
    vault: Path
    created: tuple[str, ...]
    kept: tuple[str, ...]
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class NewResult:
    kind: str
    name: str
    path: str  # vault-relative file written
    line: int  # 1-based line of the entry (the ### heading for a pattern)
    index_line: str | None
    index_file: str = config.INDEX_FILE  # _index.md, or a sub-index when the index is split
    problems: tuple[Problem, ...] = ()  # files the index lists without a description


def init_vault(path: Path) -> InitResult:
    """Create the layout; never overwrite or change a file that already exists.

    Everything that could make init fail half-way (a file where a folder belongs, a
    folder where a file belongs, a symlink leading out of the vault) is refused before
    anything is created.
    """
    if path.exists() and not path.is_dir():
        raise UsageError(f"{path}: exists and is not a directory")
    files: dict[str, Callable[[], str]] = {
        config.INDEX_FILE: lambda: render("index.md", {}),
        config.REGISTRY_FILE: lambda: render("registry.md", {}),
        config.SPEC_FILE: lambda: render("vault-spec.md", {}),
        ".gitignore": lambda: render("gitignore", {}),
    }
    if path.is_dir():
        for folder in _INIT_FOLDERS:
            target = path / folder
            if (target.exists() or target.is_symlink()) and not target.is_dir():
                raise UsageError(f"{target}: exists and is not a folder; nothing was created")
            resolve_inside(path, folder)
        for name in files:
            target = path / name
            if target.is_dir():
                raise UsageError(f"{target}: exists and is a folder; nothing was created")
            if not target.exists():
                resolve_inside(path, name)
        if not (path / config.INDEX_FILE).exists():
            generate(path)  # an unreadable _index-*.md refuses here
    # rendered up front: a missing template fails before anything is created
    contents = {name: make() for name, make in files.items() if not (path / name).exists()}
    path.mkdir(parents=True, exist_ok=True)
    created: list[str] = []
    kept: list[str] = []
    for folder in _INIT_FOLDERS:
        target = path / folder
        if target.is_dir():
            kept.append(folder + "/")
        else:
            target.mkdir(parents=True)
            created.append(folder + "/")
    warnings: list[str] = []
    for name in files:
        if name not in contents:
            kept.append(name)
        elif name != config.INDEX_FILE:  # the index lists the others: written last
            atomic_write(path / name, contents[name])
            created.append(name)
    if config.INDEX_FILE in contents:
        created.extend(_init_index(path, contents[config.INDEX_FILE], warnings))
    root = path.resolve()
    outer = next((p for p in root.parents if (p / config.INDEX_FILE).is_file()), None)
    if outer is not None:
        warnings.append(
            f"{root} is inside the vault {outer}; commands run below {root} now use the new vault"
        )
    if ".gitignore" in kept and not _ignores_state(path / ".gitignore"):
        warnings.append(
            f".gitignore (kept as it is) does not ignore {config.STATE_DIR}/: "
            f"add a line /{config.STATE_DIR}/ to keep runtime state out of git"
        )
    return InitResult(root, tuple(created), tuple(kept), tuple(warnings))


def _init_index(vault: Path, template: str, warnings: list[str]) -> list[str]:
    """Write the index ``vaultkeeper index`` would generate; the files it created.

    Over the load budget the index splits into sub-indexes; should that mean rewriting a
    sub-index that already exists, init keeps it and writes the bare template instead.
    """
    # No writer lock, as for the rest of init: its lock file would be left in a fresh state/.
    wanted = generate(vault)
    exists = [n for n in wanted if n != config.INDEX_FILE and (vault / n).exists()]
    differ = [n for n in exists if read_for_edit(vault / n, n)[0] != wanted[n]]
    if differ:
        atomic_write(vault / config.INDEX_FILE, template)
        warnings.append(
            f"{config.INDEX_FILE} has no entry lines yet: generating them would rewrite "
            f"{', '.join(differ)}; run `vaultkeeper index` when that is wanted"
        )
        return [config.INDEX_FILE]
    created = [n for n in sorted(wanted) if n not in exists]
    for name in created:
        atomic_write(vault / name, wanted[name])
    return created


def _ignores_state(gitignore: Path) -> bool:
    try:
        text = gitignore.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return any(line.strip() in _IGNORES_STATE for line in text.splitlines())


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
    _check_holdout_days(days, f"{config.ENV_HOLDOUT_DAYS}={raw}")
    return days


def _check_holdout_days(days: int, where: str) -> None:
    if not 0 <= days <= config.HOLDOUT_MAX_DAYS:
        raise UsageError(f"{where}: hold-out window must be 0..{config.HOLDOUT_MAX_DAYS} days")


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
    _check_holdout_days(holdout_days, "holdout_days")
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
            line = 1
            link = rel(vault, target)[: -len(".md")]
        # read-only dry run: an index that cannot be regenerated refuses before any write
        build_index(vault, check=True)
        atomic_write(target, content)
        try:
            index = build_index(vault)  # the writer lock is re-entrant
        except OSError as exc:  # the entry exists now: say so, and how to finish
            raise VaultkeeperError(
                f"created {rel(vault, target)}, but {exc.filename or config.INDEX_FILE}: "
                f"{exc.strerror or exc}; run `vaultkeeper index` once that is fixed"
            ) from None
        index_file, index_line = _line_of(vault, index.files, link)
        return NewResult(
            kind, name, rel(vault, target), line, index_line, index_file, index.problems
        )


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
