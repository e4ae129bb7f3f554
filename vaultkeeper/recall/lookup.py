"""Reading the recall table (state/recall-lookup.bin, laid out by vaultkeeper.scan.lookuptable)
and choosing lessons from it: for a prompt by search's own scoring, for a file by its
anchors and ``paths:`` globs, then the rows ``new`` and ``apply`` wrote over it since
(scan.lookupover). The table is mapped, not parsed: a prompt reads the vocabulary, the
postings of the words it holds and the lines of the lessons chosen, so its cost follows
the prompt, not the vault. Imports mmap and os, JSON through recall.fastjson, and
``re`` only for a prompt that is not ASCII and for a file's globs.

A lesson of another project than the session's is never chosen; a lesson outside
projects/ may be chosen anywhere. When the session's folder matches no project, every
project's lessons may be chosen.
"""

from __future__ import annotations

import mmap

from vaultkeeper import config
from vaultkeeper.recall import fastjson
from vaultkeeper.recall.paths import matches as _matches
from vaultkeeper.store.stopwords import STOPWORDS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

# search.score's weights (name 6, description 3, body 1) for each set of fields a word
# is in (bit 1 name, 2 description, 4 body): a word scores 100 plus these
_WEIGHT = (0, 6, 3, 9, 1, 7, 4, 10)
# ASCII bytes that are not ``\w`` become spaces, capitals small: ``terms`` without ``re``
_ASCII = bytes(
    c + 32 if 65 <= c <= 90 else c if (chr(c).isalnum() or c == 95) else 32 for c in range(256)
)


class Lesson:
    """A lesson as served: its path and project, its opening tag and its body (both
    neutralised and masked when the table was built)."""

    __slots__ = ("path", "project", "head", "body")

    def __init__(self, line: str) -> None:
        self.path, self.project, self.head, self.body = line.split("\t", 3)


def terms(prompt: str) -> list[str]:
    """The prompt's distinct words worth looking for, casefolded, as search.score.terms
    finds them (less the short and the common)."""
    if prompt.isascii():
        found = [w.decode() for w in prompt.encode().translate(_ASCII).split()]
    else:
        from vaultkeeper.search.score import terms as search_terms

        found = search_terms(prompt)
    found = list(dict.fromkeys(found))
    return [w for w in found if len(w) >= config.MOMENT_MIN_TERM and w not in STOPWORDS]


class Table:
    """The mapped table, and the rows written over it since it was built."""

    def __init__(self, path: str, over: str | None = None) -> None:
        with open(path, "rb") as fh:
            head = fh.readline()
            header = fastjson.loads(head)
            if not isinstance(header, dict):
                raise ValueError("no header")
            if header.get("version") != config.RECALL_LOOKUP_VERSION:
                raise ValueError(
                    f"version {header.get('version')!r}, not {config.RECALL_LOOKUP_VERSION}"
                )
            if header.get("byteorder") != _byteorder():
                raise ValueError("written on a machine of another byte order")
            self.map = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        self.base = len(head)
        self.count: int = header["count"]
        self.sections: dict[str, list[int]] = header["sections"]
        self.project_names: list[str] = header["projects"]
        self.rows = _rows(over, header.get("built_ns"))
        self._view = memoryview(self.map)

    def _bytes(self, name: str) -> bytes:
        start, end = self.sections[name]
        return self.map[self.base + start : self.base + end]

    def _ints(self, name: str, short: bool = False) -> memoryview[int]:
        start, end = self.sections[name]
        view = self._view[self.base + start : self.base + end]
        return view.cast("H") if short else view.cast("I")

    def line(self, i: int) -> Lesson:
        ents = self._ints("ents")
        start = self.base + self.sections["recs"][0]
        return Lesson(self.map[start + ents[i] : start + ents[i + 1] - 1].decode())

    def project_of(self, i: int) -> str:
        n = self._ints("proj", short=True)[i]
        return self.project_names[n - 1] if n else ""

    def projects(self) -> set[str]:
        rows = {r[3] for r in self.rows.values() if r is not None and r[3]}
        return set(self.project_names) | rows

    def scores(self, words: list[str]) -> dict[int, int]:
        """Entry -> search's score over the table (100 per word it holds, plus where)."""
        vocab = self._bytes("vocab")
        toks, post = self._ints("toks"), self._ints("post")
        out: dict[int, int] = {}
        for word in words:
            needle = word.encode()
            masks: dict[int, int] = {}
            pos, k, last = vocab.find(needle), 0, 0
            while pos != -1:
                k += vocab.count(b"\n", last, pos)  # the word it is in: the newlines before
                for p in post[toks[k - 1] : toks[k]]:
                    masks[p >> 3] = masks.get(p >> 3, 0) | (p & 7)
                last = vocab.find(b"\n", pos)
                pos = vocab.find(needle, last)
            for e, bits in masks.items():
                out[e] = out.get(e, 0) + 100 + _WEIGHT[bits]
        return out

    def listed(self, name: str, key: str | None = None) -> list[tuple[str, list[int]]]:
        """The ``places`` or ``globs`` lines: all of them, or the one of ``key``."""
        text = self._bytes(name)
        if key is not None:
            at = text.find(b"\n" + key.encode() + b"\t")
            if at == -1:
                return []
            text = text[at : text.find(b"\n", at + 1)]
        out = []
        for line in text.decode().split("\n"):
            got, _, ids = line.partition("\t")
            if got and ids:
                out.append((got, [int(x) for x in ids.split(",")]))
        return out


def _byteorder() -> str:
    import sys

    return sys.byteorder


def _rows(over: str | None, built: object) -> dict[str, list[str] | None]:
    """The overlay's rows newer than the table: path -> record (or None: not served)."""
    if over is None:
        return {}
    try:
        with open(over, "rb") as fh:
            data = fastjson.loads(fh.read())
    except FileNotFoundError:
        return {}
    if not isinstance(data, dict) or data.get("version") != config.RECALL_LOOKUP_VERSION:
        raise ValueError("recall-lookup.over.json is not of this version")
    rows = data.get("rows")
    if not isinstance(rows, dict):
        raise ValueError("recall-lookup.over.json has no rows")
    since = built if isinstance(built, int) else 0
    out: dict[str, list[str] | None] = {}
    for path, row in rows.items():
        if isinstance(row, list) and len(row) == 2 and isinstance(row[0], int) and row[0] >= since:
            rec = row[1]
            out[path] = rec if isinstance(rec, list) and len(rec) == 8 else None
    return out


def load(path: str, over: str | None = None) -> Table:
    return Table(path, over)


def _allowed(project: str | None, theirs: str) -> bool:
    return project is None or theirs in ("", project)


def _over_lesson(path: str, rec: list[str]) -> Lesson:
    from vaultkeeper.scan.lookuptable import line  # masks: imports re (rows only)

    return Lesson(line(path, rec))


def _from_table(table: Table, ids: Iterable[int]) -> Iterator[Lesson]:
    for i in ids:
        lesson = table.line(i)
        if lesson.path not in table.rows:  # a row written since hides the table's line
            yield lesson


def for_prompt(table: Table, prompt: str, project: str | None) -> list[tuple[int, int | str]]:
    """The lessons whose words match the prompt at or above the floor: (score, index in
    the table, or an overlay row's path), scored as ``search`` scores."""
    words = terms(prompt)
    if not words:
        return []
    found: list[tuple[int, int | str]] = [
        (s, i)
        for i, s in table.scores(words).items()
        if s >= config.MOMENT_MIN_SCORE and _allowed(project, table.project_of(i))
    ]
    for path, rec in table.rows.items():
        if rec is None or not _allowed(project, rec[3]):
            continue
        fields = (str(rec[0]).casefold(), str(rec[1]).casefold(), str(rec[4]))
        score = 0
        for word in words:
            bits = sum(1 << n for n, f in enumerate(fields) if word in f)
            score += 100 + _WEIGHT[bits] if bits else 0
        if score >= config.MOMENT_MIN_SCORE:
            found.append((score, path))
    return found


def pick(
    table: Table, found: list[tuple[int, int | str]], skip: Callable[[str], bool], most: int
) -> list[Lesson]:
    """The best ``most`` of ``found`` that ``skip`` lets through: by score, then path
    (the table's lines are in path order), reading only the lines it needs."""
    ranked = sorted((-s, i) for s, i in found if isinstance(i, int))
    over = sorted((-s, p) for s, p in found if isinstance(p, str))

    def lines() -> Iterator[tuple[int, str, Lesson]]:
        for neg, i in ranked:
            lesson = table.line(i)
            if lesson.path not in table.rows:  # a row written since hides the table's line
                yield neg, lesson.path, lesson

    def rows() -> Iterator[tuple[int, str, Lesson]]:
        for neg, path in over:
            rec = table.rows[path]
            if rec is not None:
                yield neg, path, _over_lesson(path, rec)

    out: list[Lesson] = []
    for _, path, lesson in _merge(lines(), rows()):
        if not skip(path):
            out.append(lesson)
            if len(out) >= most:
                break
    return out


def _merge(
    a: Iterator[tuple[int, str, Lesson]], b: Iterator[tuple[int, str, Lesson]]
) -> Iterator[tuple[int, str, Lesson]]:
    """Two sorted streams as one (heapq.merge, without its import, for two)."""
    x, y = next(a, None), next(b, None)
    while x is not None or y is not None:
        if y is None or (x is not None and x[:2] <= y[:2]):
            assert x is not None
            yield x
            x = next(a, None)
        else:
            yield y
            y = next(b, None)


def for_files(
    table: Table, rels: Iterable[str], project: str | None, skip: Callable[[str], bool], most: int
) -> list[Lesson]:
    """Lessons anchored to a file or a folder above it, then those whose globs match it."""
    rels = list(rels)
    probes = []
    for rel in rels:
        probe = rel
        while probe:
            probes.append(probe)
            probe = probe.rpartition("/")[0]
    anchored = [i for p in probes for _, ids in table.listed("places", p) for i in ids]
    globbed = [i for g, ids in table.listed("globs") if _matches(g, rels) for i in ids]
    over_anchored, over_globbed = [], []
    for path, rec in table.rows.items():
        if rec is None:
            continue
        if any(p in rec[6] for p in probes):
            over_anchored.append(_over_lesson(path, rec))
        elif any(isinstance(g, str) and _matches(g, rels) for g in rec[7]):
            over_globbed.append(_over_lesson(path, rec))
    every = [
        *_from_table(table, _valid(table, anchored)),
        *over_anchored,
        *_from_table(table, _valid(table, globbed)),
        *over_globbed,
    ]
    out: list[Lesson] = []
    for lesson in every:
        if len(out) >= most:
            break
        fresh = all(x.path != lesson.path for x in out) and not skip(lesson.path)
        if fresh and _allowed(project, lesson.project):
            out.append(lesson)
    return out


def _valid(table: Table, ids: list[int]) -> list[int]:
    return list(dict.fromkeys(i for i in ids if 0 <= i < table.count))
