"""``search``: ranked hits over the names, descriptions and bodies of the vault's entries.

An agent calls it freely (the MCP ``search`` tool), so it must answer in well under a
second on a large vault: a ``Searcher`` keeps what it read per file and re-reads only
files whose size or mtime changed since, so a repeated search costs one walk of
stats and a substring scan. Archived and superseded entries are left out unless asked
for, and so are files symlinked out of the vault. Each hit names the path and line to
open, a one-line snippet and what to cite: a pattern's NAME, or a note's vault path.
Every text a hit carries is served (credentials masked, control characters stripped,
bidi characters escaped), as everything vaultkeeper shows an agent.

Entries are read by vaultkeeper.search.docs and hits made by vaultkeeper.search.hits;
this module finds and ranks. Their public names are importable from here as before.
"""

from __future__ import annotations

import os
import re
import stat
import threading
import time
from bisect import bisect_right
from collections.abc import Iterator
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.scan import cache as scancache
from vaultkeeper.search.docs import Doc as Doc
from vaultkeeper.search.docs import read_docs as read_docs
from vaultkeeper.search.hits import Hit as Hit
from vaultkeeper.search.hits import inert as inert
from vaultkeeper.search.hits import make_hit
from vaultkeeper.search.hits import safe as safe
from vaultkeeper.store.vault import links_out, walk_files

_WORD = re.compile(r"\w+")
# Name, description and body weights: a term in a name says more than one in prose.
_WEIGHTS = (6, 3, 1)


def terms(query: str) -> list[str]:
    """The query's distinct words, casefolded, in order."""
    return list(dict.fromkeys(w.casefold() for w in _WORD.findall(query)))


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
        self._files: dict[str, tuple[list[int], bool, list[Doc]]] = {}
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
        root = os.path.realpath(top)
        seen: dict[str, tuple[list[int], bool, list[Doc]]] = {}
        changed = False
        limit = time.time_ns() - scancache.RACY_NS
        for full in walk_files(top):
            if not full.endswith(".md"):
                continue
            rel_path = full[skip:].replace(os.sep, "/")
            if "/" not in rel_path and (
                rel_path == config.INDEX_FILE or rel_path.startswith(config.SUBINDEX_PREFIX)
            ):
                continue
            try:
                info = os.lstat(full)
                if stat.S_ISLNK(info.st_mode):
                    if links_out(root, full):
                        continue  # symlinked out of the vault: never served
                    info = os.stat(full)
            except OSError:
                continue
            # the scan cache's rule: ctime in the key, and a file read while it may still
            # change within one clock tick is read again
            key, settled = scancache.key_of(info, limit)
            known = self._files.get(rel_path)
            if known is not None and known[1] and known[0] == key:
                seen[rel_path] = known
            else:
                seen[rel_path] = (key, settled, read_docs(self.vault, rel_path))
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
        return [make_hit(doc, words, -neg) for neg, _, _, doc in scored[: max(1, limit)]]
