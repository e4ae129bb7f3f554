"""The check: each anchor against the repository's working tree, read-only.

``ok``; ``changed`` (the definition, text or file differs from its digest); ``moved``
(the file was renamed, by git's rename detection, or the definition is found in a file
git lists as added, renamed or modified since the anchor's commit); ``gone``. A file
that can't be read within the bounds is ``unchecked``, never ``gone``.

What a file holds is cached by (size, mtime_ns) in a plain dict the caller keeps (the
scan keeps it as rows of the derived store, anchors/vault.py), so an unchanged
repository costs one stat per anchored file.
"""

from __future__ import annotations

import os
from typing import Any

from vaultkeeper.anchors import repo, source
from vaultkeeper.anchors.format import DEFINITION, FILE, Anchor, Item, text_of
from vaultkeeper.anchors.records import CHANGED, GONE, MOVED, OK, UNCHECKED, Result


class Checker:
    """Checks anchors in one repository; ``cache`` is read and updated in place."""

    def __init__(self, top: str, cache: dict[str, Any]) -> None:
        self.top = top
        self.files: dict[str, Any] = cache.setdefault("files", {})
        self.git: dict[str, Any] = cache.setdefault("git", {})
        self._sig: list[int] | None = None
        self.changed = False  # something read anew: the caller's cache needs saving

    def summary(self, rel: str) -> tuple[str, dict[str, str]] | None:
        """(file digest, {name: digest}), from the cache while the file is unchanged."""
        try:
            st = os.stat(os.path.join(self.top, rel))
        except (OSError, ValueError):
            if self.files.pop(rel, None) is not None:
                self.changed = True
            return None
        kept = self.files.get(rel)
        if kept is not None and kept[0] == st.st_size and kept[1] == st.st_mtime_ns:
            return kept[2], kept[3]
        data = source.read_inside(self.top, rel)
        if data is None:
            return None
        file_digest, defs = source.summarise(rel, data)
        self.files[rel] = [st.st_size, st.st_mtime_ns, file_digest, defs, {}]
        self.changed = True
        return file_digest, defs

    def _text(self, rel: str, text: str) -> bool:
        kept = self.files.get(rel)
        texts = kept[4] if kept is not None else {}
        if text not in texts:
            data = source.read_inside(self.top, rel)
            texts[text] = data is not None and source.text_present(data, text)
            self.changed = True
        return bool(texts[text])

    def exists(self, rel: str) -> bool:
        return os.path.lexists(os.path.join(self.top, rel))

    def since(self, commit: str | None) -> tuple[dict[str, str], list[str]]:
        """git's renames and added/modified files since ``commit``, kept until the
        repository's index or HEAD changes."""
        if not commit:
            return {}, []
        if self._sig is None:
            self._sig = _git_sig(self.top)
        kept = self.git.get(commit)
        if kept is not None and kept[0] == self._sig:
            return kept[1], kept[2]
        found = repo.since(self.top, commit) or ({}, [])
        self.git[commit] = [self._sig, found[0], found[1]]
        self.changed = True
        return found

    def check(self, item: Item) -> Result:
        anchor: Anchor = item.anchor
        state, moved_to = self._state(anchor, item.digest, item.commit)
        return Result(text_of(anchor), state, moved_to, item.commit)

    def _state(self, a: Anchor, want: str | None, commit: str | None) -> tuple[str, str | None]:
        here = self.summary(a.path)
        if here is None and self.exists(a.path):
            return UNCHECKED, None
        if here is not None:
            state = self._in(a, a.path, here, want)
            if state is not None:
                return state, None
        renames, added = self.since(commit)
        new = renames.get(a.path)
        if new is not None:
            there = self.summary(new)
            if there is not None and self._in(a, new, there, want) is not None:
                return MOVED, new
        if a.kind == DEFINITION:
            for rel in added:
                if rel == a.path or os.path.splitext(rel)[1] != os.path.splitext(a.path)[1]:
                    continue
                there = self.summary(rel)
                if there is not None and a.name in there[1]:
                    return MOVED, rel
        return GONE, None

    def _in(
        self, a: Anchor, rel: str, found: tuple[str, dict[str, str]], want: str | None
    ) -> str | None:
        """ok/changed when the anchor is in file ``rel`` (its summary ``found``); None
        when it is not."""
        file_digest, defs = found
        if a.kind == FILE:
            return OK if want is None or want == file_digest else CHANGED
        if a.kind == DEFINITION:
            if a.name not in defs:
                return None
            return OK if want is None or want == defs[a.name] else CHANGED
        if self._text(rel, a.text):
            return OK
        key = source.text_key(a.text)
        return CHANGED if key is not None and key in defs else None


def _git_sig(top: str) -> list[int]:
    out: list[int] = []
    for name in ("index", "HEAD"):
        try:
            st = os.stat(os.path.join(top, ".git", name))
            out += [st.st_size, st.st_mtime_ns]
        except OSError:
            out += [-1, -1]
    return out


def record(top: str, anchor: Anchor) -> tuple[str | None, str | None]:
    """(digest, commit) to record for a new anchor; raises ValueError when the file or
    the definition is not there to anchor to."""
    checker = Checker(top, {})
    found = checker.summary(anchor.path)
    if found is None:
        raise ValueError(f"anchor {text_of(anchor)!r}: no readable file {anchor.path} in {top}")
    file_digest, defs = found
    if anchor.kind == FILE:
        digest = file_digest
    elif anchor.kind == DEFINITION:
        if anchor.name not in defs:
            raise ValueError(f"anchor {text_of(anchor)!r}: {anchor.name} is not defined there")
        digest = defs[anchor.name]
    else:
        if not checker._text(anchor.path, anchor.text):
            raise ValueError(f"anchor {text_of(anchor)!r}: the text is not in {anchor.path}")
        digest = source.digest(anchor.text)
    return digest, repo.head(top)
