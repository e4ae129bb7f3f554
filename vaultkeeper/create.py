"""``init`` lays out a vault; ``new`` adds an entry from a template and indexes it."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.edit import quoted, yaml_scalar
from vaultkeeper.errors import UsageError, VaultkeeperError
from vaultkeeper.fsio import atomic_write, writer_lock
from vaultkeeper.registry import load_registry
from vaultkeeper.templates import render
from vaultkeeper.vault import iter_markdown, rel, resolve_inside

_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._-]*$")


@dataclass(frozen=True)
class InitResult:
    vault: Path
    created: tuple[str, ...]
    kept: tuple[str, ...]


@dataclass(frozen=True)
class NewResult:
    kind: str
    name: str
    path: str  # vault-relative file written
    line: int  # 1-based line of the entry (the ### heading for a pattern)
    index_line: str | None


def init_vault(path: Path) -> InitResult:
    """Create the layout; never overwrite or change a file that already exists."""
    if path.exists() and not path.is_dir():
        raise UsageError(f"{path}: exists and is not a directory")
    path.mkdir(parents=True, exist_ok=True)
    created: list[str] = []
    kept: list[str] = []
    for folder in (config.PROJECTS_DIR, config.PATTERNS_DIR, config.REFERENCES_DIR, config.STATE_DIR):
        target = path / folder
        if target.is_dir():
            kept.append(folder + "/")
        else:
            target.mkdir(parents=True)
            created.append(folder + "/")
    files = {
        config.INDEX_FILE: lambda: render("index.md", {}),
        config.REGISTRY_FILE: lambda: render("registry.md", {}),
        config.SPEC_FILE: lambda: render("vault-spec.md", {}),
        ".gitignore": lambda: render("gitignore", {}),
    }
    for name, make in files.items():
        target = path / name
        if target.exists():
            kept.append(name)
            continue
        atomic_write(target, make())
        created.append(name)
    return InitResult(path.resolve(), tuple(created), tuple(kept))


def check_name(name: str) -> None:
    if not name or not _SAFE_NAME.match(name) or ".." in name or name.endswith((".", " ")):
        raise UsageError(
            f"{name!r}: unsafe name; use letters, digits, spaces, '.', '_' and '-' "
            "(no path separators, no '..')"
        )


def _target(vault: Path, kind: str, name: str, project: str | None) -> Path:
    if kind in ("memory", "decision", "research"):
        if not project:
            raise UsageError(f"`new {kind}` needs --project P (it goes to projects/P/...)")
        check_name(project)
        sub = config.RESEARCH_SUBDIR if kind == "research" else config.MEMORY_SUBDIR
        relative = f"{config.PROJECTS_DIR}/{project}/{sub}/{name}.md"
    elif kind == "reference":
        relative = f"{config.REFERENCES_DIR}/{name}.md"
    else:
        raise UsageError(f"unknown kind {kind!r}; one of {', '.join(config.ENTRY_KINDS)}")
    return resolve_inside(vault, relative)


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
) -> NewResult:
    """Create one entry (or registry block) and add its line to the index."""
    check_name(name)
    description = " ".join(description.split())
    if not description:
        raise UsageError("--description must not be empty: it is the entry's recall summary")
    if label is not None and label not in config.LABELS:
        raise UsageError(f"unknown label {label!r}; one of {', '.join(config.LABELS)}")
    with writer_lock(vault):
        if kind == "pattern":
            return _new_pattern(vault, name, description, today)
        target = _target(vault, kind, name, project)
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
            "falsification_condition": quoted(""),
            "holdout_until": quoted((today + dt.timedelta(days=holdout_days)).isoformat())
            if held_out
            else None,
            "title": name,
        }
        atomic_write(target, render(f"{kind}.md", values))
        link = rel(vault, target)[: -len(".md")]
        index_line = add_index_line(vault, f"- [[{link}]] - {description}")
        return NewResult(kind, name, rel(vault, target), 1, index_line)


def _new_pattern(vault: Path, name: str, description: str, today: dt.date) -> NewResult:
    blocks, _ = load_registry(vault)
    if any(b.name.lower() == name.lower() for b in blocks):
        raise VaultkeeperError(f"{name}: a ### {name} block already exists in the registry")
    registry = vault / config.REGISTRY_FILE
    text = registry.read_text(encoding="utf-8") if registry.exists() else render("registry.md", {})
    block = render("pattern.md", {"name": name, "description": description, "today": today.isoformat()})
    if text and not text.endswith("\n"):
        text += "\n"
    if text and not text.endswith("\n\n"):
        text += "\n"
    line = text.count("\n") + 1
    atomic_write(registry, text + block)
    index_line = add_index_line(vault, f"- [[{config.REGISTRY_FILE[:-3]}#{name}]] - {description}")
    return NewResult("pattern", name, config.REGISTRY_FILE, line, index_line)


def add_index_line(vault: Path, line: str) -> str:
    """Append ``line`` inside the index markers (created at the end if missing).

    Only the generated section changes; every byte outside the markers stays.
    """
    index = vault / config.INDEX_FILE
    text = index.read_text(encoding="utf-8") if index.exists() else ""
    nl = "\r\n" if "\r\n" in text else "\n"
    start = text.find(config.INDEX_START)
    end = text.find(config.INDEX_END, start + 1) if start != -1 else -1
    if start == -1 or end == -1:
        sep = "" if not text or text.endswith("\n\n") else (nl if text.endswith("\n") else nl * 2)
        text = f"{text}{sep}{config.INDEX_START}{nl}{line}{nl}{config.INDEX_END}{nl}"
    else:
        text = text[:end] + line + nl + text[end:]
    atomic_write(index, text)
    return line
