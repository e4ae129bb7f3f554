"""The check: each anchor against the repository's working tree, read-only.

``ok``; ``changed`` (the definition, text or file differs from its digest); ``moved``
(the file was renamed, by git's rename detection, or the definition is found in a file
git lists as added, renamed or modified since the anchor's commit); ``gone``. A file
that can't be read within the bounds is ``unchecked``, never ``gone``.

A definition: Python files are parsed with ``ast`` (a definition's digest is that of
``ast.dump`` of its node, so a reformat is not a change and a comment is never a
definition); other files by a line heuristic (docs/anchors.md says which and why): a
definition keyword line (``def``, ``function``, ``func``, ``fn``, ``class``, ``struct``,
``const``, ...) or a config key line (``NAME =``/``NAME:``) outside a comment line, with
the lines indented deeper after it. Reading is bounded (config.ANCHOR_MAX_FILE_BYTES),
never follows a symlink out of the repository, and opens a regular file only.

What a file holds is cached by (size, mtime_ns) in a plain dict the caller keeps (the
scan keeps it as rows of the derived store, anchors/vault.py), so an unchanged
repository costs one stat per anchored file.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import warnings
from typing import Any

from vaultkeeper import config
from vaultkeeper.anchors import repo
from vaultkeeper.anchors.format import (
    CHANGED,
    DEFINITION,
    FILE,
    GONE,
    MOVED,
    OK,
    TEXT,
    UNCHECKED,
    Anchor,
    Item,
    Result,
    text_of,
)
from vaultkeeper.store.text import ParseError, read_regular

_KEYWORD = re.compile(
    r"\s*(?:(?:export|public|private|protected|internal|static|async|pub(?:\([^)]*\))?"
    r"|default|final|abstract|override|inline|extern|unsafe|open|sealed|data)\s+)*"
    r"(?:def|function\*?|func|fn|class|struct|interface|trait|enum|type|const|let|var|val"
    r"|module|object|impl|sub|macro|proc)\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)"
)
_KEY = re.compile(r"\s*[\"']?([A-Za-z_][\w.-]*)[\"']?\s*[:=](?!=)")
_COMMENT = ("#", "//", "/*", "*", "--", ";", "<!--", "%", "'")
_MAX_BLOCK_LINES = 400


def digest(text: str | bytes) -> str:
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    return "sha256:" + hashlib.sha256(raw).hexdigest()[: config.ANCHOR_DIGEST_HEX]


def inside(top: str, rel: str) -> str | None:
    """The real path of ``top/rel`` when it is inside ``top`` (symlinks resolved, none
    leading out) and not ``top`` itself; else None."""
    real_top = os.path.realpath(top)
    path = os.path.realpath(os.path.join(real_top, rel))
    return path if os.path.commonpath([real_top, path]) == real_top != path else None


def read_inside(top: str, rel: str) -> bytes | None:
    """The bytes of ``top/rel`` when it is a regular file ``inside`` ``top`` and no
    larger than the bound; else None."""
    path = inside(top, rel)
    if path is None:
        return None
    try:
        if os.stat(path).st_size > config.ANCHOR_MAX_FILE_BYTES:
            return None
        return read_regular(path)
    except (OSError, ParseError):
        return None


def summarise(rel: str, data: bytes) -> tuple[str, dict[str, str]]:
    """(the file's digest, {definition name: digest}) of a file's bytes."""
    text = data.decode("utf-8", "replace")
    if rel.endswith((".py", ".pyi")):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # invalid escapes in the repo's code: not ours
                tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None  # read by the line heuristic instead
        if tree is not None:
            defs: dict[str, str] = {}
            _walk(tree.body, "", defs)
            return digest(ast.dump(tree)), defs
    lines = text.splitlines()
    return digest("\n".join(_norm(lines))), _heuristic(lines)


def _walk(body: list[ast.stmt], prefix: str, out: dict[str, str]) -> None:
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = prefix + node.name
            out.setdefault(name, digest(ast.dump(node)))
            if isinstance(node, ast.ClassDef):
                _walk(node.body, name + ".", out)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    out.setdefault(prefix + target.id, digest(ast.dump(node)))


def _norm(lines: list[str]) -> list[str]:
    return [" ".join(line.split()) for line in lines if line.strip()]


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _heuristic(lines: list[str], prefix: str = "") -> dict[str, str]:
    out: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i]  # a blank line matches neither pattern
        comment = line.lstrip().startswith(_COMMENT)
        m = None if comment else _KEYWORD.match(line) or _KEY.match(line)
        if m is None:
            i += 1
            continue
        block = _block(lines, i)
        name = prefix + m.group(1)
        out.setdefault(name, digest("\n".join(_norm(block))))
        if len(block) > 1 and not prefix.count("."):  # members, one level deep
            for k, v in _heuristic(block[1:], name + ".").items():
                out.setdefault(k, v)
        i += len(block) if len(block) > 1 and prefix else 1
    return out


def _block(lines: list[str], start: int) -> list[str]:
    """The definition's line, the lines indented deeper after it, and a closing line
    (``}``, ``end``, ``)``) at its own indentation."""
    base = _indent(lines[start])
    end = start + 1
    while end < len(lines) and end - start < _MAX_BLOCK_LINES:
        line = lines[end]
        if line.strip() and _indent(line) <= base:
            if line.strip().startswith(("}", "end", ")", "]")):
                end += 1
            break
        end += 1
    return lines[start:end]


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
        data = read_inside(self.top, rel)
        if data is None:
            return None
        file_digest, defs = summarise(rel, data)
        self.files[rel] = [st.st_size, st.st_mtime_ns, file_digest, defs, {}]
        self.changed = True
        return file_digest, defs

    def _text(self, rel: str, text: str) -> bool:
        """Whether a text anchor's text (whitespace collapsed) is on one line of the file."""
        kept = self.files.get(rel)
        texts = kept[4] if kept is not None else {}
        if text not in texts:
            data = read_inside(self.top, rel)
            lines = () if data is None else data.decode("utf-8", "replace").splitlines()
            want = " ".join(text.split())
            texts[text] = any(want in " ".join(line.split()) for line in lines)
            self.changed = True
        return bool(texts[text])

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
        if here is None and os.path.lexists(os.path.join(self.top, a.path)):
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
        key = _KEY.match(a.text) or _KEYWORD.match(a.text)  # the name it sets, if any
        return CHANGED if key is not None and key.group(1) in defs else None


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
    what = f"anchor {text_of(anchor)!r}"
    if found is None:
        raise ValueError(f"{what}: no readable file {anchor.path} in {top}")
    if anchor.kind == DEFINITION and anchor.name not in found[1]:
        raise ValueError(f"{what}: {anchor.name} is not defined there")
    if anchor.kind == TEXT and not checker._text(anchor.path, anchor.text):
        raise ValueError(f"{what}: the text is not in {anchor.path}")
    if anchor.kind == TEXT:
        return digest(anchor.text), repo.head(top)
    return found[0] if anchor.kind == FILE else found[1][anchor.name], repo.head(top)
