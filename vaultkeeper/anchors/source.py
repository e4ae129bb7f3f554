"""Finding a definition in a file, and the digests an anchor records.

Python files are parsed with ``ast``: a definition's digest is that of ``ast.dump`` of its
node (no positions; the docstring kept), so a reformat is not a change and a comment is
never a definition. Other files: a line heuristic (docs/anchors.md says which and why):
a definition keyword line (``def``, ``function``, ``func``, ``fn``, ``class``,
``struct``, ``const``, ...) or a config key line (``NAME =``/``NAME:``) outside a comment
line, its text being that line and the lines indented deeper after it.
Reading is bounded (config.ANCHOR_MAX_FILE_BYTES), never follows a symlink out of the
repository, and opens a regular file only.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import warnings

from vaultkeeper import config
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


def read_inside(top: str, rel: str) -> bytes | None:
    """The bytes of ``top/rel`` when it is a regular file inside ``top`` (symlinks
    resolved, none leading out) and no larger than the bound; else None."""
    real_top = os.path.realpath(top)
    path = os.path.realpath(os.path.join(real_top, rel))
    if os.path.commonpath([real_top, path]) != real_top or path == real_top:
        return None
    try:
        if os.stat(path).st_size > config.ANCHOR_MAX_FILE_BYTES:
            return None
        return read_regular(path)
    except (OSError, ParseError):
        return None


def is_python(rel: str) -> bool:
    return rel.endswith((".py", ".pyi"))


def summarise(rel: str, data: bytes) -> tuple[str, dict[str, str]]:
    """(the file's digest, {definition name: digest}) of a file's bytes."""
    text = data.decode("utf-8", "replace")
    if is_python(rel):
        tree = _parse(text)
        if tree is not None:
            defs: dict[str, str] = {}
            _walk(tree.body, "", defs)
            return digest(ast.dump(tree)), defs
    lines = text.splitlines()
    return digest("\n".join(_norm(lines))), _heuristic(lines)


def _parse(text: str) -> ast.Module | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes in the repo's code: not ours
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _walk(body: list[ast.stmt], prefix: str, out: dict[str, str]) -> None:
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = prefix + node.name
            out.setdefault(name, digest(ast.dump(node)))
            if isinstance(node, ast.ClassDef):
                _walk(node.body, name + ".", out)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out.setdefault(prefix + target.id, digest(ast.dump(node)))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.setdefault(prefix + node.target.id, digest(ast.dump(node)))


def _norm(lines: list[str]) -> list[str]:
    return [" ".join(line.split()) for line in lines if line.strip()]


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _heuristic(lines: list[str], prefix: str = "") -> dict[str, str]:
    out: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped or stripped.startswith(_COMMENT):
            i += 1
            continue
        m = _KEYWORD.match(line) or _KEY.match(line)
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


def text_present(data: bytes, text: str) -> bool:
    """Whether a text anchor's text (whitespace collapsed) is on one line of the file."""
    want = " ".join(text.split())
    return any(
        want in " ".join(line.split()) for line in data.decode("utf-8", "replace").splitlines()
    )


def text_key(text: str) -> str | None:
    """The name a text anchor sets (``ROUNDING_MODE`` of ``ROUNDING_MODE = "half-even"``)."""
    m = _KEY.match(text) or _KEYWORD.match(text)
    return m.group(1) if m else None
