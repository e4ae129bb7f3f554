"""``search``: ranked hits over the names, descriptions and bodies of the vault's entries.

An agent calls it freely (the MCP ``search`` tool), so it must answer in well under a
second on a large vault: a ``Searcher`` keeps what it read per file and re-reads only
files whose size or mtime changed since, so a repeated search costs one walk of
stats and a substring scan. Archived and superseded entries are left out unless asked
for. Each hit names the path and line to open, a one-line snippet made inert (control
characters escaped) and what to cite: a pattern's NAME, or a note's vault path.
"""

from __future__ import annotations

import os
import re
import threading
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.model import ParseError, decode, parse_note, read_regular
from vaultkeeper.quickmeta import read_front
from vaultkeeper.registry import is_counter_line, parse_blocks
from vaultkeeper.supersession import superseded_by
from vaultkeeper.vault import walk_files

_WORD = re.compile(r"\w+")
_KEYS = ("name", "description", "type", "status", config.SUPERSEDED_BY_KEY)
# Name, description and body weights: a term in a name says more than one in prose.
_WEIGHTS = (6, 3, 1)
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


@dataclass(frozen=True)
class Doc:
    """One searchable entry: a note with frontmatter, or one registry ``### block``."""

    kind: str
    name: str
    description: str
    project: str | None
    status: str | None
    superseded_by: str | None  # the newer entry's link target, when one replaces this
    path: str  # vault-relative
    line: int  # the entry's first line (a block's heading)
    name_line: int
    description_line: int
    lines: tuple[str, ...]  # the body's lines as in the file
    body_line: int  # file line of lines[0]
    cite: str  # what the cite tool takes: a pattern NAME or the note's path
    link: str  # the [[wikilink]] a note uses to point here
    folded: tuple[str, str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        body = "\n".join(self.lines).casefold()
        folded = (self.name.casefold(), self.description.casefold(), body)
        object.__setattr__(self, "folded", folded)

    @property
    def live(self) -> bool:
        return self.status not in config.SEARCH_DEAD_STATUSES and self.superseded_by is None


@dataclass(frozen=True)
class Hit:
    kind: str
    name: str
    description: str
    path: str
    line: int
    snippet: str
    cite: str
    link: str
    status: str | None
    superseded_by: str | None  # read that one instead
    score: int


def inert(text: str) -> str:
    """``text`` with control and bidi characters shown as escapes, never acted on."""
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def terms(query: str) -> list[str]:
    """The query's distinct words, casefolded, in order."""
    return list(dict.fromkeys(w.casefold() for w in _WORD.findall(query)))


def _project(rel_path: str) -> str | None:
    parts = rel_path.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == config.PROJECTS_DIR else None


def read_docs(vault: Path, rel_path: str) -> list[Doc]:
    """The entries one file holds; a file that cannot be read holds none."""
    path = vault / rel_path
    try:
        text = decode(read_regular(path))
    except ParseError:
        return []
    if rel_path.split("/", 1)[0] == config.PATTERNS_DIR:
        return _blocks(path, rel_path, text)
    front = read_front(text, _KEYS)
    if front is not None:
        meta, key_lines, yaml_text = front
        body_line = yaml_text.count("\n") + 3
        body = text.split("\n", body_line - 1)[-1] if body_line > 1 else text
    else:
        try:
            note = parse_note(path, rel_path, text)
        except ParseError:
            return []
        if note.frontmatter is None:
            return []  # not an entry
        meta, key_lines = dict(note.meta), dict(note.frontmatter.key_lines)
        body, body_line = note.body, note.body_line
    status = meta.get("status")
    stem = rel_path.rsplit("/", 1)[-1].removesuffix(".md")
    name = str(meta.get("name") or stem)
    return [
        Doc(
            kind=str(meta.get("type") or "note"),
            name=name,
            description=" ".join(str(meta.get("description") or "").split()),
            project=_project(rel_path),
            status=None if status is None else str(status),
            superseded_by=superseded_by(meta),
            path=rel_path,
            line=1,
            name_line=key_lines.get("name", 1),
            description_line=key_lines.get("description", 1),
            lines=tuple(body.splitlines()),
            body_line=body_line,
            cite=rel_path,
            link=f"[[{rel_path.removesuffix('.md')}]]",
        )
    ]


def _blocks(path: Path, rel_path: str, text: str) -> list[Doc]:
    out: list[Doc] = []
    for block in parse_blocks(path, rel_path, text):
        lines = block.text.splitlines()[1:]
        prose = [x.strip() for x in lines if x.strip() and not is_counter_line(x)]
        out.append(
            Doc(
                kind="pattern",
                name=block.name,
                description=prose[0] if prose else "",
                project=None,
                status=None,
                superseded_by=None,
                path=rel_path,
                line=block.line,
                name_line=block.line,
                description_line=block.line + 1,
                lines=tuple(lines),
                body_line=block.line + 1,
                cite=block.name,
                link=f"[[{rel_path.removesuffix('.md')}#{block.name}]]",
            )
        )
    return out


class _Haystack:
    """Every entry's casefolded name, description and body, each field joined into one
    string: a word is found with ``str.find`` over all entries at once, and each find
    skips to the next entry, so the cost follows the number of matching entries."""

    def __init__(self, docs: list[Doc]) -> None:
        self.docs = docs
        self.text: list[str] = []
        self.starts: list[list[int]] = []
        for part in range(len(_WEIGHTS)):
            starts, at = [], 0
            for doc in docs:
                starts.append(at)
                at += len(doc.folded[part]) + 1
            self.starts.append(starts)
            # NUL never occurs in a query word, so no match spans two entries
            self.text.append("\x00".join(doc.folded[part] for doc in docs))

    def matches(self, word: str, part: int) -> Iterator[int]:
        text, starts = self.text[part], self.starts[part]
        last = len(starts) - 1
        pos = text.find(word)
        while pos != -1:
            i = bisect_right(starts, pos) - 1
            yield i
            if i == last:
                return
            pos = text.find(word, starts[i + 1])

    def scores(self, words: list[str]) -> dict[int, int]:
        """Entry -> score: 100 per query word it holds, plus where each word is."""
        out: dict[int, int] = {}
        for word in words:
            here: dict[int, int] = {}
            for part, weight in enumerate(_WEIGHTS):
                for i in self.matches(word, part):
                    here[i] = here.get(i, 0) + weight
            for i, weight in here.items():
                out[i] = out.get(i, 0) + 100 + weight
        return out


class Searcher:
    """Search one vault; keeps each file's entries until its size or mtime changes."""

    def __init__(self, vault: Path) -> None:
        self.vault = vault
        self._files: dict[str, tuple[int, int, list[Doc]]] = {}
        self._hay = _Haystack([])
        self._lock = threading.Lock()  # the server may run two searches at once

    def docs(self) -> list[Doc]:
        """Every entry now: files are stat'ed, and read again only when changed."""
        return self._refresh().docs

    def _refresh(self) -> _Haystack:
        with self._lock:
            return self._walk()

    def _walk(self) -> _Haystack:
        top = str(self.vault)
        skip = len(top) + 1
        seen: dict[str, tuple[int, int, list[Doc]]] = {}
        changed = False
        for full in walk_files(top):
            if not full.endswith(".md"):
                continue
            rel_path = full[skip:].replace(os.sep, "/")
            if "/" not in rel_path and (
                rel_path == config.INDEX_FILE or rel_path.startswith(config.SUBINDEX_PREFIX)
            ):
                continue
            try:
                info = os.stat(full)
            except OSError:
                continue
            known = self._files.get(rel_path)
            if known is not None and known[:2] == (info.st_size, info.st_mtime_ns):
                seen[rel_path] = known
            else:
                seen[rel_path] = (info.st_size, info.st_mtime_ns, read_docs(self.vault, rel_path))
                changed = True
        if changed or len(seen) != len(self._files):
            self._hay = _Haystack([doc for entry in seen.values() for doc in entry[2]])
        self._files = seen
        return self._hay

    def search(
        self,
        query: str,
        *,
        kind: str | None = None,
        project: str | None = None,
        limit: int = config.SEARCH_DEFAULT_LIMIT,
        include_archived: bool = False,
    ) -> list[Hit]:
        """Best first: entries matching more of the query's words, then by where they match."""
        words = terms(query)
        if not words:
            return []
        hay = self._refresh()  # this haystack's docs and scores go together
        scored: list[tuple[int, str, int, Doc]] = []
        for i, score in hay.scores(words).items():
            doc = hay.docs[i]
            if (kind and doc.kind != kind) or (project and doc.project != project):
                continue
            if not include_archived and not doc.live:
                continue
            scored.append((-score, doc.path, doc.line, doc))
        scored.sort(key=lambda s: s[:3])
        return [_hit(doc, words, -neg) for neg, _, _, doc in scored[: max(1, limit)]]


def _hit(doc: Doc, words: list[str], score: int) -> Hit:
    """The hit, pointing at the body line holding most of the words (else name/description)."""
    best, best_n = -1, 0
    for i, text in enumerate(doc.lines):
        low = text.casefold()
        n = sum(1 for w in words if w in low)
        if n > best_n:
            best, best_n = i, n
    if best >= 0:
        line, text = doc.body_line + best, doc.lines[best]
    elif any(w in doc.folded[0] for w in words) or not doc.description:
        line, text = doc.name_line, doc.name
    else:
        line, text = doc.description_line, doc.description
    return Hit(
        doc.kind, inert(doc.name), inert(doc.description), doc.path, line,
        _snippet(text, words), doc.cite, doc.link, doc.status, doc.superseded_by, score,
    )  # fmt: skip


def _snippet(text: str, words: list[str]) -> str:
    flat = " ".join(text.split())
    width = config.SEARCH_SNIPPET_CHARS
    if len(flat) <= width:
        return inert(flat)
    low = flat.casefold()
    at = min((i for i in (low.find(w) for w in words) if i >= 0), default=0)
    start = max(0, min(at - width // 4, len(flat) - width))
    cut = flat[start : start + width]
    return inert(("..." if start else "") + cut + ("..." if start + width < len(flat) else ""))
