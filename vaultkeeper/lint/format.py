"""What a file's text must not hold. VK1xx, the spec's format rules (SFS): pure ASCII,
tagged and balanced fences, mermaid, no control characters a terminal would act on, no
conflict markers a merge left. VK5xx: credentials in any vault file, named by file, line
and kind, never printed; on for every vault, ours or not (a key pasted into a note reaches
every session the note is served to). The detectors are vaultkeeper.store.secrets.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Callable, Collection, Iterable, Iterator
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.lint.codes import Finding
from vaultkeeper.store import secrets
from vaultkeeper.store.links import Fence, code_spans
from vaultkeeper.store.model import ParseError, decode, read_regular
from vaultkeeper.store.textsafe import dangerous, inert
from vaultkeeper.store.vault import rel as rel_of

# A spec glyph on its own, or a run of other non-ASCII characters.
_GLYPHS = "".join(config.ASCII_REPLACEMENTS)
_NON_ASCII = re.compile(f"[{_GLYPHS}]|[^\\x00-\\x7f{_GLYPHS}]+")
_QUOTED = re.compile(r'"[^"\n]*"')
_BR = re.compile(r"<br\s*/?>", re.I)
# A node id directly followed by a shape's opening delimiter (longest first), and its closer.
_SHAPES = "((( ))) (( )) ([ ]) [[ ]] [( )] [/ ] [\\ ] {{ }} [ ] ( ) { } > ]".split()  # noqa: SIM905
_CLOSERS = dict(zip(_SHAPES[::2], _SHAPES[1::2], strict=True))
_NODE = re.compile(r"(?<![\w-])[A-Za-z0-9_]+(" + "|".join(map(re.escape, _CLOSERS)) + ")")
_EDGE_LABEL = re.compile(r"\|([^|]*)\|")
_EDGE_TEXT = re.compile(r"(?:^|\s)(?:--|==|-\.)\s+([^|\s][^|]*?)\s+(?:-->|==>|\.->|---|-\.-)")


def describe(char: str) -> str:
    return f"U+{ord(char):04X} {unicodedata.name(char, 'UNNAMED')}"


def check_ascii(
    rel: str, lines: list[str], code_lines: set[int], frontmatter_end: int
) -> Iterator[Finding]:
    """VK101: one finding per line (in linear time), at its first non-ASCII character,
    with the count; fixable when any glyph on the line is."""
    for index, line in enumerate(lines):
        if line.isascii():
            continue
        number = index + 1
        spans = code_spans(line) if "`" in line and number > frontmatter_end else []
        starts = [a for a, _ in spans]
        lead = len(line) - len(line.lstrip())
        first = ""
        chars = 0
        fixable = False
        col = 0
        for m in _NON_ASCII.finditer(line):
            run = m.group()
            chars += len(run)
            replacement = config.ASCII_REPLACEMENTS.get(run)
            if not first:
                col, first = m.start(), _one(run, replacement)
            if replacement is None or fixable:
                continue
            at = bisect.bisect_right(starts, m.start()) - 1
            in_code = number in code_lines or (at >= 0 and m.start() < spans[at][1])
            # fix.py leaves ``>=`` / ``-`` that would open a line as a quote or list item
            fixable = not in_code and not (m.start() <= lead and replacement[0] in ">-")
        more = f"; {chars} non-ASCII characters on this line" if chars > 1 else ""
        yield Finding(rel, number, col + 1, "VK101", first + more, fixable=fixable)


def _one(run: str, replacement: str | None) -> str:
    if replacement is not None:
        return f"non-ASCII character {run!r} ({describe(run)}): write {replacement!r}"
    what = f"character {run!r}" if len(run) == 1 else f"text {_clip(run)!r} ({len(run)} chars)"
    return (
        f"non-ASCII {what} ({describe(run[0])}): the spec has no ASCII replacement;"
        " rewrite it in ASCII"
    )


def _clip(run: str) -> str:
    return run if len(run) <= 40 else run[:40] + "..."


def check_controls(rel: str, lines: list[str]) -> Iterator[Finding]:
    """VK105: one finding per line holding a control character (CRLF endings aside): it
    acts on the terminal of whoever prints the note."""
    for index, line in enumerate(lines):
        body = line[:-1] if line.endswith("\n") else line
        found = dangerous(body[:-1] if body.endswith("\r") else body)
        if not found:
            continue
        col, char = found[0]
        more = f"; {len(found)} control characters on this line" if len(found) > 1 else ""
        why = f"control character {inert(char)} (U+{ord(char):04X}): a terminal acts on it;"
        yield Finding(rel, index + 1, col + 1, "VK105", f"{why} remove it{more}")


_UNTAGGED = "fenced code block without a language tag (mermaid, json, yaml, markdown, text)"


def check_fences(
    rel: str, lines: list[str], fences: list[Fence], enabled: Callable[[str], bool]
) -> Iterator[Finding]:
    """VK102 untagged fence, VK103 unclosed fence, VK104 mermaid rules."""
    for fence in fences:
        for code, bad, why in (
            ("VK102", not fence.language, _UNTAGGED),
            ("VK103", fence.end is None, "fenced code block opened here is never closed"),
        ):
            if bad and enabled(code):
                yield Finding(rel, fence.start, fence.col, code, why)
        if enabled("VK104") and fence.language.lower() == "mermaid":
            stop = fence.end - 1 if fence.end is not None else len(lines)
            yield from _mermaid(rel, lines, fence.start + 1, stop)


def _mermaid(rel: str, lines: list[str], first: int, last: int) -> Iterator[Finding]:
    """Lines ``first``..``last`` (1-based, inclusive) of one mermaid block."""
    kind: str | None = None
    in_config = False
    for number in range(first, last + 1):
        text = lines[number - 1].rstrip("\r\n")
        stripped = text.strip()
        for m in _BR.finditer(text):
            why = f"mermaid line-break tag {m.group()!r}: not allowed"
            yield Finding(rel, number, m.start() + 1, "VK104", why)
        if kind is None:
            if stripped == "---":
                in_config = not in_config
                continue
            if in_config or not stripped or stripped.startswith("%%"):
                continue
            kind = " ".join(stripped.rstrip(";").split())
            if kind not in config.MERMAID_DIAGRAMS:
                kinds = ", ".join(config.MERMAID_DIAGRAMS)
                why = f"mermaid diagram type {kind!r} is not one of {kinds}"
                yield Finding(rel, number, len(text) - len(text.lstrip()) + 1, "VK104", why)
            continue
        if stripped.startswith("%%"):
            continue
        for col, label in _labels(text, kind):
            why = f'mermaid label {label.strip()!r} holds {_token(label)!r}; quote it: "..."'
            yield Finding(rel, number, col + 1, "VK104", why)


def _token(label: str) -> str:
    body = _BR.sub("", label)
    return next(t for t in config.MERMAID_LABEL_TOKENS if t in body)


def _needs_quotes(label: str) -> bool:
    body = _BR.sub("", label).strip()  # a <br/> is reported on its own
    if body.startswith('"') and body.endswith('"') and len(body) >= 2:
        return False
    return any(t in body for t in config.MERMAID_LABEL_TOKENS)


def _labels(text: str, kind: str) -> Iterator[tuple[int, str]]:
    """(0-based column, label) for each label on one diagram line that needs quotes."""
    # Quoted strings are blanked first, so their content can't look like syntax.
    masked = _QUOTED.sub(lambda m: '"' + "Q" * (len(m.group()) - 2) + '"', text)
    if kind.startswith("stateDiagram"):
        head, sep, label = masked.partition(":")
        if sep and not head.lstrip().startswith(("note", "state ")) and _needs_quotes(label):
            yield len(head) + 1, text[len(head) + 1 :]
        return
    pos = 0
    while True:
        m = _NODE.search(masked, pos)
        if m is None:
            break
        opener = m.group(1)
        start = m.end()
        close = masked.find(_CLOSERS[opener], start)
        stop = len(masked) if close == -1 else close
        if _needs_quotes(masked[start:stop]):
            yield start, text[start:stop]
        pos = stop + 1
    for m in _EDGE_LABEL.finditer(masked):
        if _needs_quotes(m.group(1)):
            yield m.start(1), text[m.start(1) : m.end(1)]
    for m in _EDGE_TEXT.finditer(masked):
        if _needs_quotes(m.group(1)):
            yield m.start(1), text[m.start(1) : m.end(1)]


# VK106: a commit of an unresolved merge leaves both sides' lines, and everything that
# reads the file reads both; markers inside fenced code are not markers.
_OPEN, _MID, _CLOSE = "<<<<<<<", "=======", ">>>>>>>"
_RESOLVE = (
    "keep what each side meant and delete the marker lines (an index file: "
    "`vaultkeeper index` writes its list again)"
)


def _marker(line: str, mark: str) -> bool:
    body = line.rstrip("\r\n")
    return body.startswith(mark) and (len(body) == len(mark) or body[len(mark)] == " ")


def check_conflicts(rel: str, lines: list[str], code: Collection[int]) -> Iterator[Finding]:
    """One finding per conflict hunk, at its ``<<<<<<<`` line."""
    start: int | None = None
    middle = False
    for number, line in enumerate(lines, start=1):
        if number in code or not line.startswith(("<", "=", ">")):
            continue
        if _marker(line, _OPEN):
            start, middle = number, False
        elif start is not None and line.rstrip("\r\n") == _MID:
            middle = True
        elif start is not None and middle and _marker(line, _CLOSE):
            why = f"conflict markers left by a merge (lines {start}-{number}): {_RESOLVE}"
            yield Finding(rel, start, 1, "VK106", why)
            start = None


_CODE = {secrets.PRIVATE_KEY: "VK501"}
_CODE.update({kind: "VK502" for kind in secrets.SHAPED if kind != secrets.PRIVATE_KEY})


def code_for(kind: str) -> str:
    return _CODE.get(kind, "VK503")


def check_secrets(rel_path: str, text: str, enabled: Callable[[str], bool]) -> Iterator[Finding]:
    """One finding per credential in ``text``; the message names its kind, not its value."""
    if not any(enabled(code) for code in ("VK501", "VK502", "VK503")):
        return
    for hit in secrets.find(rel_path):  # a token as a file or folder name: in every link
        why = f"{hit.kind} in the file's path (value not shown): rename it and rotate it"
        if enabled(code := code_for(hit.kind)):  # the path is the value here: masked
            yield Finding(secrets.served(rel_path), 1, 1, code, why)
    for hit in secrets.find(text):
        why = f"{hit.kind} in the file (value not shown): remove it from the vault and rotate it"
        if enabled(code := code_for(hit.kind)):
            yield Finding(rel_path, hit.line, hit.col, code, why)


def check_other_files(
    vault: Path, paths: Iterable[Path], enabled: Callable[[str], bool]
) -> Iterator[Finding]:
    """Credentials in the vault's text files that are not notes (.txt, .json ...)."""
    if not any(enabled(code) for code in ("VK501", "VK502", "VK503")):
        return
    for path in paths:
        try:
            if path.stat().st_size > config.SECRET_SCAN_MAX_BYTES:
                continue  # an attachment, not something typed into the vault
            text = decode(read_regular(path))
        except (OSError, ParseError):
            continue  # binary or unreadable: nothing a person pasted a key into
        yield from check_secrets(rel_of(vault, path), text, enabled)
