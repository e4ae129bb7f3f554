"""Reading the recall table (state/recall-lookup.json, built by vaultkeeper.scan.lookup)
and choosing lessons from it: for a prompt by search's own scoring, for a file by its
anchors and ``paths:`` globs. Imports nothing the hook does not need (json, os, re).

A lesson of another project than the session's is never chosen; a lesson outside
projects/ may be chosen anywhere. When the session's folder matches no project, every
project's lessons may be chosen.
"""

from __future__ import annotations

import json
import os
import re

from vaultkeeper import config
from vaultkeeper.search.score import Scorer, starts_of, terms
from vaultkeeper.store.stopwords import STOPWORDS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable


class Lesson:
    __slots__ = ("path", "status", "project", "name", "text")

    def __init__(self, line: str, text: str) -> None:
        self.path, self.status, self.project, self.name = line.split("\t")
        self.text = text


class Table:
    """The loaded table; lessons are made from their lines only when chosen."""

    def __init__(self, data: dict[str, object], texts: str | None = None) -> None:
        if data.get("version") != config.RECALL_LOOKUP_VERSION:
            raise ValueError(f"version {data.get('version')!r}, not {config.RECALL_LOOKUP_VERSION}")
        fields = [data["names"], data["descriptions"], data["words"], data["meta"]]
        if not all(isinstance(f, str) for f in fields):
            raise ValueError("a field is not a string")
        self.fields: list[str] = fields  # type: ignore[assignment]
        self.lines = self.fields[3].split("\n") if self.fields[3] else []
        places, globs = data.get("places"), data.get("globs")
        if not isinstance(places, dict) or not isinstance(globs, list):
            raise ValueError("places or globs are missing")
        self.places: dict[str, list[int]] = places
        self.globs: list[list[object]] = globs
        self.data = data
        self.texts = texts  # the text file's path (recall-lookup.text)
        self.text_id, self.offsets = data.get("text_id"), data.get("text_offsets")

    def lesson(self, i: int) -> Lesson:
        return Lesson(self.lines[i], self._text(i))

    def _text(self, i: int) -> str:
        """Lesson ``i``'s text, read from the text file at its offset ('' when absent)."""
        offsets = self.offsets
        if self.texts is None or not isinstance(offsets, list) or i + 1 >= len(offsets):
            return ""
        start, end = offsets[i], offsets[i + 1]
        with open(self.texts, "rb") as fh:
            if fh.readline().decode().strip() != self.text_id:
                raise ValueError("recall-lookup.text is not the table's (being rewritten?)")
            fh.seek(start)
            return fh.read(max(0, end - start)).decode("utf-8", "replace").strip()

    def projects(self) -> set[str]:
        given = self.data.get("projects")
        if isinstance(given, list):
            return {p for p in given if isinstance(p, str)}
        return {line.split("\t", 3)[2] for line in self.lines} - {""}

    def starts(self) -> list[list[int]]:
        """Each field's entry offsets: as built, else counted (search.score.starts_of)."""
        given = self.data.get("starts")
        if isinstance(given, list) and len(given) == 3 and all(isinstance(g, list) for g in given):
            return given
        return [starts_of(t.split("\x00")) for t in self.fields[:3]]


def load(path: str, texts: str | None = None) -> Table:
    with open(path, "rb") as fh:
        return Table(json.loads(fh.read()), texts)


def project_for(cwd: str | None, projects: set[str]) -> str | None:
    """The project named as the git repository ``cwd`` is in, or as ``cwd`` itself."""
    if not cwd or not os.path.isabs(cwd):
        return None
    folded = {p.casefold(): p for p in projects}
    here = os.path.normpath(cwd)
    names = []
    probe = here
    for _ in range(40):
        if os.path.exists(os.path.join(probe, ".git")):
            names.append(os.path.basename(probe))
            break
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    names.append(os.path.basename(here))
    return next((folded[n.casefold()] for n in names if n and n.casefold() in folded), None)


def _allowed(table: Table, i: int, project: str | None) -> bool:
    if project is None:
        return True
    theirs = table.lines[i].split("\t", 3)[2]
    return theirs in ("", project)


def for_prompt(table: Table, prompt: str, project: str | None) -> list[int]:
    """Lessons whose words match the prompt, best first, scored as ``search`` scores."""
    words = [w for w in terms(prompt) if len(w) >= config.MOMENT_MIN_TERM and w not in STOPWORDS]
    if not words or not table.lines:
        return []
    scorer = Scorer(table.fields[:3], table.starts())
    scored = [
        (-score, i)
        for i, score in scorer.scores(words).items()
        if score >= config.MOMENT_MIN_SCORE and _allowed(table, i, project)
    ]
    scored.sort(key=lambda s: (s[0], table.lines[s[1]].split("\t", 1)[0]))
    return [i for _, i in scored]


def _root_of(path: str) -> str | None:
    probe = os.path.dirname(path)
    for _ in range(40):
        if os.path.exists(os.path.join(probe, ".git")):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return None
        probe = parent
    return None


def relative_forms(path: str, cwd: str | None) -> list[str]:
    """The touched file as anchors and globs name it: relative to its repository's top
    level, and to the session's folder."""
    if not os.path.isabs(path):
        if not cwd or not os.path.isabs(cwd):
            rel = path[2:] if path.startswith("./") else path
            return [rel] if rel and ".." not in rel.split("/") else []
        path = os.path.join(cwd, path)
    path = os.path.normpath(path)
    out = []
    for base in (_root_of(path), cwd):
        if base and path.startswith(base.rstrip("/") + "/"):
            rel = path[len(base.rstrip("/")) + 1 :]
            if rel not in out:
                out.append(rel)
    return out


_GLOB_PART = re.compile(r"\*\*/|\*\*|\*|\?|\[[^\]/]*\]|[^*?\[]+|\[")


def glob_regex(glob: str) -> re.Pattern[str]:
    """Claude Code's rule globs: ``**`` any folders, ``*`` and ``?`` within one name,
    ``[...]`` a class; a glob with no ``/`` matches the name in any folder."""
    out = []
    for part in _GLOB_PART.findall(glob.lstrip("/")):
        if part == "**/":
            out.append("(?:[^/]+/)*")
        elif part == "**":
            out.append(".*")
        elif part == "*":
            out.append("[^/]*")
        elif part == "?":
            out.append("[^/]")
        elif part.startswith("[") and len(part) > 2:
            body = part[1:-1]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
        else:
            out.append(re.escape(part))
    prefix = "" if "/" in glob.strip("/") else "(?:[^/]+/)*"
    return re.compile(prefix + "".join(out) + r"\Z")


def _tail(glob: str) -> str:
    """The literal text a match must end with (after the last wildcard)."""
    cut = max(glob.rfind("*"), glob.rfind("?"), glob.rfind("]"))
    return glob[cut + 1 :]


def for_files(table: Table, rels: Iterable[str], project: str | None) -> list[int]:
    """Lessons anchored to a file or a folder above it, then those whose globs match it."""
    found: list[int] = []
    rels = list(rels)
    for rel in rels:
        probe = rel
        while probe:
            found.extend(i for i in table.places.get(probe, ()) if isinstance(i, int))
            probe = probe.rpartition("/")[0]
    for item in table.globs:
        if len(item) != 2 or not isinstance(item[0], str) or not isinstance(item[1], int):
            continue
        glob, at = item[0], item[1]
        tail = _tail(glob)
        if any(rel.endswith(tail) and glob_regex(glob).match(rel) for rel in rels):
            found.append(at)
    out = []
    for i in found:
        if 0 <= i < len(table.lines) and i not in out and _allowed(table, i, project):
            out.append(i)
    return out
