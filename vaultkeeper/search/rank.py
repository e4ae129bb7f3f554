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
import stat
import threading
import time
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.scan import cache as scancache
from vaultkeeper.search.docs import Doc as Doc
from vaultkeeper.search.docs import read_docs as read_docs
from vaultkeeper.search.hits import Hit as Hit
from vaultkeeper.search.hits import inert as inert
from vaultkeeper.search.hits import make_hit
from vaultkeeper.search.hits import safe as safe
from vaultkeeper.search.score import WEIGHTS as _WEIGHTS
from vaultkeeper.search.score import Scorer, starts_of
from vaultkeeper.search.score import terms as terms
from vaultkeeper.store.vault import links_out, walk_files


class _Haystack(Scorer):
    """Every entry's casefolded name, description and body, each field joined into one
    string (vaultkeeper.search.score): the same scoring the recall hook uses."""

    def __init__(self, docs: list[Doc]) -> None:
        self.docs = docs
        fields = [[doc.folded[part] for doc in docs] for part in range(len(_WEIGHTS))]
        super().__init__(["\x00".join(f) for f in fields], [starts_of(f) for f in fields])


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
