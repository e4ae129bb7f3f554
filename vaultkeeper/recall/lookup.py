"""Choosing lessons for the recall hook from the full-text index (search.index).

A prompt's lessons are its best matches (search.fts) among live lessons of the session's
project or of none, holding two of its words or one in their name; a file's are those
anchored to it or a folder above it, then those whose ``paths:`` globs match it.

Freshness by construction: the lessons a command wrote (``search_pending``) are read
again first; a lesson's file whose stat key differs from its row's is read again and
the choice made again; rows another vaultkeeper version made are never served. Work is
bounded (``MAX_TERMS`` words, ``CANDIDATES`` rows, the deadline checked by SQLite within
each query). No ``re``, no ``json``: the hook's imports are most of its cost.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import sys
import time
from collections.abc import Callable

from vaultkeeper import __version__, config
from vaultkeeper.search import fts
from vaultkeeper.store.globs import matches
from vaultkeeper.store.stopwords import STOPWORDS

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs the hook 15 ms
    from typing import TypeVar

    T = TypeVar("T")

MAX_TERMS = 32  # a prompt's first distinct words looked for: a 1 MB prompt costs as 32
CANDIDATES = 24  # best rows checked against the floor and their files
BUSY_S = 0.2  # how long the hook waits for a writer of the database
PROGRESS_STEPS = 1000  # SQLite instructions between two looks at the deadline
RENEW_MAX = 32  # lessons a command wrote, read again in one call at most
ROWS_FORMAT = 4  # search.index.ROWS_FORMAT (a test keeps them in step)
_COMPANIONS = ("-wal", "-shm", "-journal")


class NoIndex(Exception):
    """The store holds no index yet (or none of this version)."""


class Lesson:
    """A lesson's row: path, project, tag, name and text as served, the brief's stale
    mark (neutralised) and the stat key its row was made from."""

    __slots__ = ("path", "project", "head", "name", "text", "mark", "key")

    def __init__(self, row: tuple[str, str | None, str, str, str, str | None, str]) -> None:
        self.path, project, self.head, self.name, self.text, mark, self.key = row
        self.project = project or ""
        self.mark = fts.neutral(" ".join((mark or "").split()))


_LESSON_SQL = (
    "SELECT e.path, e.project, e.recall_head, e.recall_name, e.recall_text, m.mark, "
    "f.key || ':' || f.settled FROM search_entries e JOIN search_files f ON f.path = e.path "
    "LEFT JOIN search_marks m ON m.path = e.path "
    "WHERE e.id = ? AND e.lesson = 1 AND e.live = 1"
)


def open_db(state: str) -> sqlite3.Connection:
    """The vault's database, for reading and small writes; NoIndex when there is none,
    OSError when it or a companion is not a regular file (a link, a FIFO)."""
    path = os.path.join(state, config.DB_FILE)
    for name in (path, *(path + c for c in _COMPANIONS)):
        if os.path.lexists(name) and not stat.S_ISREG(os.lstat(name).st_mode):
            raise OSError(f"state/{os.path.basename(name)} is not a regular file; refused")
    if not os.path.lexists(path):
        raise NoIndex("no database yet")
    uri = path.replace("%", "%25").replace("?", "%3f").replace("#", "%23")
    conn = sqlite3.connect(f"file:{uri}?mode=rw", uri=True, timeout=BUSY_S, isolation_level=None)
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_S * 1000)}")
        conn.execute("PRAGMA synchronous = OFF")
        made = dict(
            conn.execute("SELECT key, value FROM search_meta WHERE key IN ('built', 'masked_by')")
        )
    except sqlite3.DatabaseError as exc:
        conn.close()
        if "no such table" in str(exc):
            raise NoIndex("the database holds no index") from None
        raise
    if "built" not in made:
        conn.close()
        raise NoIndex("the index was never built")
    if made.get("masked_by") != f"{__version__}/{ROWS_FORMAT}":
        conn.close()  # another version's rows: its masking may have missed what ours masks
        raise NoIndex(f"the index was made by vaultkeeper {made.get('masked_by')}")
    return conn


_SPACED = str.maketrans(dict.fromkeys("!\"#$%&'()*+,-./:;<=>?@[\\]^`{|}~", " "))


def terms(prompt: str) -> list[str]:
    """The prompt's first ``MAX_TERMS`` distinct words (``\\w+``), casefolded, less the
    short and the common."""
    out: dict[str, None] = {}
    for chunk in prompt.translate(_SPACED).split():
        if not chunk.isalnum():  # "_" or a non-ASCII mark: split where \w ends
            chunk = "".join(c if c.isalnum() or c == "_" else " " for c in chunk)
        for word in chunk.split():
            w = word.casefold()
            if len(w) >= config.MOMENT_MIN_TERM and w not in STOPWORDS and w not in out:
                out[w] = None
                if len(out) >= MAX_TERMS:
                    return list(out)
    return list(out)


def key_of(info: os.stat_result) -> str:
    """A file's stat key as search.index.key_text writes it (a test keeps them in step)."""
    return f"[{info.st_dev},{info.st_ino},{info.st_size},{info.st_mtime_ns},{info.st_ctime_ns}]"


class Index:
    """One vault's index, for one hook call."""

    def __init__(self, vault: str, conn: sqlite3.Connection, deadline: float) -> None:
        self.vault = vault
        self.conn = conn
        self.deadline = deadline
        self.refreshed: set[str] = set()
        # past the deadline SQLite stops the statement it is running ("interrupted")
        conn.set_progress_handler(self._late, PROGRESS_STEPS)

    def _late(self) -> int:
        return int(time.monotonic() > self.deadline)

    def check(self) -> None:
        if time.monotonic() > self.deadline:
            raise TimeoutError(f"took over {config.MOMENT_DEADLINE_S} s")

    def _bounded(self, choose: Callable[[], T]) -> T:
        """``choose()``; TimeoutError when SQLite stopped it at the deadline."""
        try:
            return choose()
        except sqlite3.OperationalError as exc:
            if "interrupt" in str(exc):
                raise TimeoutError(f"took over {config.MOMENT_DEADLINE_S} s") from None
            raise

    def lesson(self, row_id: int) -> Lesson | None:
        row = self.conn.execute(_LESSON_SQL, (row_id,)).fetchone()
        return None if row is None else Lesson(row)

    def fresh(self, lesson: Lesson) -> bool:
        """Whether the lesson's file has its row's stat key, settled then or read now."""
        try:
            info = os.stat(os.path.join(self.vault, lesson.path))
        except OSError:
            return False
        key, _, settled = lesson.key.rpartition(":")
        return key == key_of(info) and (settled == "1" or lesson.path in self.refreshed)

    def renew(self, paths: list[str]) -> bool:
        """The rows of ``paths`` made anew now; False when it could not be done."""
        if "yaml" not in sys.modules:  # run with ``python -S`` (hooks/recall.sh): reading
            import site  # a note may need PyYAML, which lives in site-packages

            site.main()
        try:
            from vaultkeeper.search.index import update

            update(self.conn, self.vault, paths)
        except (sqlite3.Error, OSError, ImportError):
            return False
        self.refreshed.update(paths)
        return True

    def renew_pending(self) -> None:
        """The lessons a command wrote (``search_pending``), read again first."""
        query = "SELECT path FROM search_pending ORDER BY path LIMIT ?"
        paths = self._bounded(lambda: [r[0] for r in self.conn.execute(query, (RENEW_MAX,))])
        if paths:
            self.renew(paths)

    def projects(self) -> set[str]:
        """The vault's project folders (the session's project is one of them)."""
        try:
            return set(os.listdir(os.path.join(self.vault, config.PROJECTS_DIR)))
        except OSError:
            return set()

    def _choose(
        self, ranked: Callable[[], list[int]], skip: Callable[[str], bool], most: int
    ) -> list[Lesson]:
        """The first ``most`` fresh lessons of ``ranked()`` not skipped; stale ones are
        renewed once and the choice made again."""
        for attempt in range(2):
            out: list[Lesson] = []
            stale: list[str] = []
            for row_id in ranked():
                lesson = self.lesson(row_id)
                if lesson is None or skip(lesson.path) or any(x.path == lesson.path for x in out):
                    continue
                if not self.fresh(lesson):
                    stale.append(lesson.path)
                    continue
                out.append(lesson)
                if len(out) >= most:
                    break
            self.check()
            if not stale or attempt or not self.renew(stale):
                return out
        return out

    def for_prompt(
        self, prompt: str, project: str | None, skip: Callable[[str], bool], most: int
    ) -> list[Lesson]:
        """The prompt's best lessons, each holding two of its words or one in its name."""
        words = terms(prompt)
        if not words:
            return []

        def ranked() -> list[int]:
            where = "AND e.lesson = 1 AND e.live = 1"
            if project is not None:
                where += " AND (e.project IS NULL OR e.project = ?)"
            narrow = fts.narrowed(lesson=True, project=project, or_none=True)
            args = [project] if project else []
            rows = fts.ranked(self.conn, words, where, args, CANDIDATES, narrow)
            self.check()
            named = fts.named(self.conn, words, [r[0] for r in rows], narrow)
            return [r[0] for r in rows if r[3] >= 2 or r[0] in named]

        return self._bounded(lambda: self._choose(ranked, skip, most))

    def for_files(
        self, rels: list[str], project: str | None, skip: Callable[[str], bool], most: int
    ) -> list[Lesson]:
        """Lessons anchored to a file or a folder above it, then those globbing it."""
        probes = []
        for rel in rels:
            probe = rel
            while probe:
                probes.append(probe)
                probe = probe.rpartition("/")[0]

        def ranked() -> list[int]:
            marks = ",".join("?" * len(probes))
            anchored = self.conn.execute(
                "SELECT p.id FROM search_places p JOIN search_entries e ON e.id = p.id "
                f"WHERE p.place IN ({marks}) ORDER BY e.path", probes
            ).fetchall()  # fmt: skip
            hit: list[str] = []
            for n, (glob,) in enumerate(
                self.conn.execute("SELECT DISTINCT glob FROM search_globs")
            ):
                if n % 64 == 0:
                    self.check()
                if matches(glob, rels):
                    hit.append(glob)
            globbed = self.conn.execute(
                "SELECT g.id FROM search_globs g JOIN search_entries e ON e.id = g.id "
                f"WHERE g.glob IN ({','.join('?' * len(hit))}) ORDER BY e.path", hit
            ).fetchall() if hit else []  # fmt: skip
            return [r[0] for r in anchored] + [r[0] for r in globbed]

        def outside(path: str) -> bool:
            parts = path.split("/")
            theirs = parts[1] if len(parts) > 2 and parts[0] == config.PROJECTS_DIR else ""
            return skip(path) or not (project is None or theirs in ("", project))

        return self._bounded(lambda: self._choose(ranked, outside, most))
