"""``index``: regenerate the section of ``_index.md`` between the vaultkeeper markers.

One line per entry, grouped by folder, sorted, deterministic::

    ## projects/api/memory
    - [[projects/api/memory/flaky-ci-retries]] - Retry a flaky CI job once -- keywords: ci, retry

The description comes from the entry's frontmatter (a registry block's first paragraph),
served as to an agent (credentials masked, control characters stripped: agents load
the index first); a superseded entry's line starts ``(superseded by [[newer]])``.
keywords are a person's: whatever follows `` -- keywords: `` on an entry's line survives
regeneration. Notes in Obsidian's templates folder are not entries. Text outside the
markers is kept byte for byte. When the root index would
pass the load budget, it links one sub-index per top-level folder instead
(``_index-<folder>.md`` at the vault root), each regenerated the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.fsio import atomic_write, writer_lock
from vaultkeeper.links import Resolver, parse_link
from vaultkeeper.model import ParseError, Problem, decode, load_notes, read_regular
from vaultkeeper.obsidian import in_folder, templates_folder
from vaultkeeper.registry import RegistryBlock, parse_blocks
from vaultkeeper.secrets import needs_serving, served
from vaultkeeper.supersession import superseded_by
from vaultkeeper.templates import render
from vaultkeeper.vault import iter_files, rel, resolve_inside

_ENTRY_LINE = re.compile(r"^[ \t]*[-*+][ \t]+!?\[\[([^\[\]\r\n]+)\]\]")
_COUNTER = re.compile(r"^[ \t]*[-*]?[ \t]*\*\*[^*]+:\*\*")
ROOT_GROUP = "(root)"
_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class Entry:
    link: str  # link target as written: vault path without .md, maybe #heading
    folder: str  # vault-relative folder, "" at the root
    description: str
    key: tuple[str, str]  # (file, heading) the keywords are remembered by


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


def is_index_file(rel_path: str) -> bool:
    return "/" not in rel_path and (
        rel_path == config.INDEX_FILE
        or (rel_path.startswith(config.SUBINDEX_PREFIX) and rel_path.endswith(".md"))
    )


def subindex_name(folder: str) -> str:
    return f"{config.SUBINDEX_PREFIX}{folder}.md"


def _one_line(text: object) -> str:
    line = " ".join(str(text).split()) if text is not None else ""
    if needs_serving(line):  # agents load the index first: no credential, no escape
        line = " ".join(served(line).split())
    for marker in (config.INDEX_START, config.INDEX_END):
        # a marker inside a description would cut the section short: Obsidian still
        # shows "&lt;!--" as "<!--"
        line = line.replace(marker, "&lt;" + marker[1:])
    return line


def _block_description(block: RegistryBlock) -> str:
    words: list[str] = []
    for line in block.text.splitlines()[1:]:
        if not line.strip() or _COUNTER.match(line):
            if words:
                break
            continue
        words.append(line.strip())
    return _one_line(" ".join(words))


def collect_entries(vault: Path, md_files: Iterable[Path]) -> tuple[list[Entry], list[Problem]]:
    notes, problems = load_notes(vault, md_files)
    entries: list[Entry] = []
    for note in notes:
        if is_index_file(note.rel):
            continue
        folder = note.rel.rpartition("/")[0]
        blocks = (
            parse_blocks(note.path, note.rel, note.text)
            if folder.split("/")[0] == config.PATTERNS_DIR
            else []
        )
        base = note.rel.removesuffix(".md")
        if blocks:
            entries.extend(
                Entry(
                    f"{base}#{b.name}", folder, _block_description(b), (note.rel, b.name.casefold())
                )
                for b in blocks
            )
        else:
            desc = _one_line(note.meta.get("description"))
            newer = superseded_by(note)
            if newer is not None:  # kept in the index, marked: never read as current truth
                desc = _one_line(f"(superseded by [[{newer}]]) {desc}").rstrip()
            entries.append(Entry(base, folder, desc, (note.rel, "")))
    for problem in problems:  # unreadable now, but still an entry of the vault
        if not is_index_file(problem.path):
            folder = problem.path.rpartition("/")[0]
            entries.append(Entry(problem.path.removesuffix(".md"), folder, "", (problem.path, "")))
    return entries, problems


def _section(text: str) -> str | None:
    start = text.find(config.INDEX_START)
    end = text.find(config.INDEX_END, start + 1) if start != -1 else -1
    return None if start == -1 or end == -1 else text[start + len(config.INDEX_START) : end]


def _keywords(source: str, text: str, resolver: Resolver) -> dict[tuple[str, str], str]:
    found: dict[tuple[str, str], str] = {}
    for line in (_section(text) or "").splitlines():
        m = _ENTRY_LINE.match(line)
        mark = line.rfind(config.INDEX_KEYWORDS_MARK)
        if not m or mark == -1:
            continue
        words = line[mark + len(config.INDEX_KEYWORDS_MARK) :].strip()
        target, sub, _ = parse_link(m.group(1))
        file = resolver.resolve(target, source).resolved
        if words and file is not None:
            found.setdefault((file, sub.casefold()), words)
    return found


def _render(entries: list[Entry], keywords: dict[tuple[str, str], str]) -> list[str]:
    lines: list[str] = []
    folder: str | None = None
    for entry in sorted(
        entries, key=lambda e: (e.folder.casefold(), e.folder, e.link.casefold(), e.link)
    ):
        if entry.folder != folder:
            folder = entry.folder
            lines.append(f"## {folder or ROOT_GROUP}")
        line = f"- [[{entry.link}]]"
        if entry.description:
            line += f" - {entry.description}"
        if entry.key in keywords:
            line += f"{config.INDEX_KEYWORDS_MARK}{keywords[entry.key]}"
        lines.append(line)
    return lines


def with_section(text: str, lines: list[str]) -> str:
    """``text`` with the marked section holding ``lines``; every other byte kept."""
    nl = "\r\n" if "\r\n" in text else "\n"
    body = "".join(line + nl for line in lines)
    start = text.find(config.INDEX_START)
    end = text.find(config.INDEX_END, start + 1) if start != -1 else -1
    if start == -1 or end == -1:
        sep = "" if not text or text.endswith("\n\n") else (nl if text.endswith("\n") else nl * 2)
        return f"{text}{sep}{config.INDEX_START}{nl}{body}{config.INDEX_END}{nl}"
    return text[: start + len(config.INDEX_START)] + nl + body + text[end:]


def _check_markers(name: str, text: str) -> None:
    """One start marker, then one end marker, or neither; anything else is refused.

    A start without its end once got a second pair appended, and the next run replaced
    everything between the first start and that end: a person's text, gone for good.
    """
    from vaultkeeper.errors import VaultkeeperError

    starts, ends = text.count(config.INDEX_START), text.count(config.INDEX_END)
    if (starts, ends) == (0, 0) or (
        (starts, ends) == (1, 1) and text.find(config.INDEX_START) < text.find(config.INDEX_END)
    ):
        return
    at = min(p for p in (text.find(config.INDEX_START), text.find(config.INDEX_END)) if p >= 0)
    line = text.count("\n", 0, at) + 1
    raise VaultkeeperError(
        f"{name}:{line}: needs exactly one {config.INDEX_START} followed by one "
        f"{config.INDEX_END} (found {starts} and {ends}); fix the markers by hand, "
        "nothing was changed"
    )


def _measure(text: str) -> tuple[int, int]:
    lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    return lines, len(text.encode("utf-8"))


def _over(text: str) -> bool:
    lines, size = _measure(text)
    return lines > config.INDEX_MAX_LINES or size > config.INDEX_MAX_BYTES


def _subindex_preamble(folder: str) -> str:
    return (
        f"# Index: {folder}/\n\nPart of [[{config.INDEX_FILE[:-3]}]]: the entries under {folder}/."
        " Lines between the markers are kept by `vaultkeeper index`.\n\n"
    )


Keywords = Mapping[tuple[str, str], str]  # (file, heading casefolded or "") -> keywords


def build_index(vault: Path, *, check: bool = False, keep: Keywords | None = None) -> IndexResult:
    """Regenerate the index (and sub-indexes when over budget); ``check`` writes nothing.

    ``keep``: keywords for entries the index does not list now (a restored entry's,
    kept in .trash/ when it was pruned); what the index holds wins.
    """
    if check:
        return _build(vault, write=False, keep=keep)
    with writer_lock(vault):
        return _build(vault, write=True, keep=keep)


def index_keywords(vault: Path) -> dict[tuple[str, str], str]:
    """The ``-- keywords:`` a person added on index lines, by (file, heading or "")."""
    rels = [rel(vault, p) for p in iter_files(vault)]
    current = {r: _read(vault / r) for r in rels if is_index_file(r)}
    return _keywords_of(current, Resolver(rels))


def _keywords_of(
    current: Mapping[str, str | None], resolver: Resolver
) -> dict[tuple[str, str], str]:
    keywords: dict[tuple[str, str], str] = {}
    for name, text in sorted(current.items()):
        if text is not None:
            for key, words in _keywords(name, text, resolver).items():
                keywords.setdefault(key, words)
    return keywords


def _has_bom(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return fh.read(len(_BOM)) == _BOM
    except OSError:
        return False


def _read(path: Path) -> str | None:
    if not path.exists():  # dangling symlinks too: no index yet
        return None
    try:
        return decode(read_regular(path))  # refuses a FIFO instead of blocking on it
    except ParseError as exc:
        from vaultkeeper.errors import VaultkeeperError

        line = f":{exc.line}" if exc.line else ""
        raise VaultkeeperError(f"{path}{line}: {exc.reason}; fix it before regenerating") from None


def generate(vault: Path) -> dict[str, str]:
    """Every index file's text as ``build_index`` would write it (BOM aside); reads only."""
    return _plan(vault)[1]


def _plan(
    vault: Path, keep: Keywords | None = None
) -> tuple[dict[str, str | None], dict[str, str], int, bool, list[Problem]]:
    """(current text, wanted text) of each index file, the entry count, the split, and
    the files that could not be read (listed without a description)."""
    files = list(iter_files(vault))
    rels = [rel(vault, p) for p in files]
    resolver = Resolver(rels)
    templates = templates_folder(vault)  # Obsidian's templates are not entries
    md = (p for p in files if p.suffix == ".md" and not in_folder(rel(vault, p), templates))
    entries, problems = collect_entries(vault, md)
    current: dict[str, str | None] = {r: _read(vault / r) for r in rels if is_index_file(r)}
    current.setdefault(config.INDEX_FILE, None)
    keywords = _keywords_of(current, resolver)
    for key, words in (keep or {}).items():
        keywords.setdefault(key, words)
    root_text = current[config.INDEX_FILE]
    if root_text is None:
        root_text = render("index.md", {})
    _check_markers(config.INDEX_FILE, root_text)
    wanted = {config.INDEX_FILE: with_section(root_text, _render(entries, keywords))}
    split = _over(wanted[config.INDEX_FILE])
    if split:
        by_top: dict[str, list[Entry]] = {}
        root_entries: list[Entry] = []
        for entry in entries:
            top = entry.folder.split("/")[0]
            (by_top.setdefault(top, []) if top else root_entries).append(entry)
        lines = _render(root_entries, keywords)
        if by_top:
            lines.append("## sub-indexes")
        for top in sorted(by_top, key=lambda t: (t.casefold(), t)):
            name = subindex_name(top)
            count = len(by_top[top])
            lines.append(f"- [[{name[:-3]}]] - {top}/: {count} entr{'y' if count == 1 else 'ies'}")
            base = current.get(name) or _subindex_preamble(top)
            _check_markers(name, base)
            wanted[name] = with_section(base, _render(by_top[top], keywords))
        wanted[config.INDEX_FILE] = with_section(root_text, lines)
    return current, wanted, len(entries), split, problems


def _build(vault: Path, *, write: bool, keep: Keywords | None = None) -> IndexResult:
    current, wanted, entries, split, problems = _plan(vault, keep)
    changed = tuple(sorted(n for n, t in wanted.items() if current.get(n) != t))
    # a symlinked index file: its target is written and the link stays a link; a link
    # leading out of the vault is refused, by --check too (new checks before it writes)
    targets = {name: resolve_inside(vault, name) for name in wanted}
    if write:
        for name in changed:
            bom = _BOM if _has_bom(vault / name) else b""  # outside the markers: kept too
            atomic_write(targets[name], bom + wanted[name].encode("utf-8"))
    root_lines, root_bytes = _measure(wanted[config.INDEX_FILE])
    return IndexResult(
        entries=entries,
        split=split,
        files=tuple(sorted(wanted)),
        changed=changed,
        missing=tuple(n for n in changed if current.get(n) is None),
        written=write and bool(changed),
        root_lines=root_lines,
        root_bytes=root_bytes,
        over_budget=tuple(sorted(n for n, t in wanted.items() if _over(t))),
        unused=tuple(sorted(n for n in current if n not in wanted)),
        problems=tuple(p for p in problems if not is_index_file(p.path)),
    )
