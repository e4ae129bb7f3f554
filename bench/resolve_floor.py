"""The floor for ``lint --select VK3``: an independent resolver of the same links.

Standard library only, written apart from vaultkeeper's code: walk the vault as Obsidian
does (hidden names, the root's ``state/``, ``node_modules`` and ``__pycache__`` skipped),
read every ``.md`` once, take each ``[[...]]`` and ``![[...]]`` outside fenced code and
inline code spans, and resolve it by Obsidian's rule: a path from the vault root (``.md``
optional, case-insensitive), ``./`` and ``../`` from the note's folder, else a file name
(or path suffix) that one file has, or, when several have it, the one in the linking
note's own folder. A link that finds one note and names a part of it (``[[note#Heading]]``,
``[[note#A#B]]``, ``[[note#^id]]``, ``[[#Heading]]``) is looked up in that note's
anchors, gathered once per note: its ATX and setext headings outside fenced code (and
outside its frontmatter), compared as lint compares them (Unicode-normalised, case
folded, punctuation, symbols and runs of spaces as one space; ``#A#B`` is B after A), and
its block ids (a ``^id`` of letters, digits and ``-`` ending a line that is not a heading,
case folded). It prints how many links it read and how many it found broken, ambiguous
and pointing at a missing heading or block -- what VK301, VK302 and VK305 count.

    python bench/resolve_floor.py VAULT            # the floor's counts
    python bench/resolve_floor.py VAULT --compare  # and its CPU time beside the lint's
    python bench/resolve_floor.py VAULT --diff     # its findings beside the lint's

``--compare`` runs each side as a fresh process, interleaved (5 rounds), and prints the
median CPU time (user + system) of each, the ratio, and the machine's load. ``--diff``
runs ``vaultkeeper lint --select VK3 --json`` and lists the findings only one side has.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import statistics
import subprocess
import sys
import unicodedata
from pathlib import Path

WIKILINK = re.compile(r"(!?)\[\[([^\[\]\r\n]+?)\]\]")
TICKS = re.compile(r"`+")
ATX = re.compile(r" {0,3}#{1,6}(?:[ \t]+(.*?))?[ \t]*$")
QUOTE_OR_ITEM = re.compile(r"(?: {0,3}>[ \t]?)*(?: {0,3}(?:[-*+]|[0-9]{1,9}[.)])[ \t]+)?")
MARKS = tuple(" " * n + c for n in range(4) for c in "=-")  # how an underline starts
HEADING = re.compile(QUOTE_OR_ITEM.pattern + ATX.pattern)  # in a quote or list item too
UNDERLINE = re.compile(r" {0,3}(?:=+|-+)[ \t]*$")
BLOCK_ID = re.compile(r"(?:^|\s)\^([A-Za-z0-9-]+)\s*$")
SKIP = {"node_modules", "__pycache__"}


def files_of(top: str) -> list[str]:
    """Every file's vault-relative path, hidden names and state/ skipped."""
    out: list[str] = []
    for folder, dirs, names in os.walk(top):
        here = os.path.relpath(folder, top)
        dirs[:] = sorted(
            d
            for d in dirs
            if not d.startswith(".") and d not in SKIP and not (here == "." and d == "state")
        )
        for name in sorted(names):
            if not name.startswith("."):
                out.append(name if here == "." else f"{here}/{name}".replace(os.sep, "/"))
    return out


def fold(text: str) -> str:
    return unicodedata.normalize("NFC", text).casefold()


def code_lines(lines: list[str]) -> set[int]:
    """0-based numbers of the lines of fenced code blocks, fences included (quoted too)."""
    inside: set[int] = set()
    fence = ""  # the open fence's mark
    opened = 0
    for n, line in enumerate(lines):
        if "```" not in line and "~~~" not in line:
            continue
        bare = line.lstrip(" \t>")
        if not bare.startswith(("```", "~~~")):
            continue
        mark = bare[: len(bare) - len(bare.lstrip(bare[0]))]
        rest = bare[len(mark) :]
        if not fence and not (mark[0] == "`" and "`" in rest):
            fence, opened = mark, n
        elif fence and mark[0] == fence[0] and len(mark) >= len(fence) and not rest.strip():
            inside.update(range(opened, n + 1))
            fence = ""
    if fence:
        inside.update(range(opened, len(lines)))
    return inside


def links_of(lines: list[str], code: set[int]) -> list[tuple[int, str, str]]:
    """(1-based line, inner text, raw) of each wikilink outside code."""
    found: list[tuple[int, str, str]] = []
    for n in [n for n, line in enumerate(lines) if "[[" in line]:
        if n in code:
            continue
        line = lines[n]
        spans = []
        if "`" in line:
            runs = list(TICKS.finditer(line))
            i = 0
            while i < len(runs):
                j = next(
                    (
                        k
                        for k in range(i + 1, len(runs))
                        if len(runs[k].group()) == len(runs[i].group())
                    ),
                    None,
                )
                if j is None:
                    i += 1
                    continue
                spans.append((runs[i].start(), runs[j].end()))
                i = j + 1
        for m in WIKILINK.finditer(line):
            if not any(a <= m.start() < b for a, b in spans):
                found.append((n + 1, m.group(2), m.group()))
    return found


class Blanks(dict[int, str]):
    """str.translate's table: a character of Unicode category P, S, Z or C as a space."""

    def __missing__(self, code: int) -> str:
        self[code] = " " if unicodedata.category(chr(code))[0] in "PSZC" else chr(code)
        return self[code]


BLANKS = Blanks()


def heading_key(text: str) -> str:
    """Obsidian's heading match as lint applies it: punctuation, symbols and spaces one
    space, case folded."""
    text = text if text.isascii() else unicodedata.normalize("NFC", text)
    return " ".join(text.translate(BLANKS).split()).casefold()


def anchors_of(lines: list[str], code: set[int]) -> tuple[dict[str, list[int]], set[str]]:
    """A note's headings (key -> positions in document order) and its block ids."""
    first = -1  # the frontmatter's last line: it holds neither
    if lines[0].rstrip() == "---":
        first = next((n for n in range(1, len(lines)) if lines[n].rstrip() in ("---", "...")), -1)
    headings: dict[str, list[int]] = {}
    blocks: set[str] = set()
    maybe = [
        n for n, line in enumerate(lines) if "#" in line or "^" in line or line.startswith(MARKS)
    ]
    for n in maybe:
        if n <= first or n in code:
            continue
        line = lines[n].rstrip("\r")
        m = HEADING.match(line) if "#" in line else None
        heading = (m.group(1) or "") if m else None
        if (
            heading is None
            and line.startswith(MARKS)
            and UNDERLINE.match(line)
            and n - 1 > first
            and n - 1 not in code
        ):
            above = lines[n - 1].rstrip("\r")  # a plain line of text above makes a heading
            plain = above.strip() and QUOTE_OR_ITEM.sub("", above, count=1) == above
            heading = above.strip() if plain and not ATX.match(above) else None
        if heading is not None:
            headings.setdefault(heading_key(heading), []).append(n)
        elif "^" in line and (b := BLOCK_ID.search(line)):
            blocks.add(b.group(1).casefold())
    return headings, blocks


def missing(anchors: tuple[dict[str, list[int]], set[str]], sub: str) -> bool:
    """Whether ``sub`` (``Heading``, ``A#B`` or ``^id``) names nothing in the note."""
    headings, blocks = anchors
    if sub.startswith("^"):
        return sub[1:].strip().casefold() not in blocks
    at = -1
    for part in (p.strip() for p in sub.split("#")):
        if part:
            at = next((i for i in headings.get(heading_key(part), ()) if i > at), -2)
            if at == -2:
                return True
    return False


class Names:
    def __init__(self, paths: list[str]) -> None:
        self.path: dict[str, str] = {}
        self.name: dict[str, list[str]] = {}
        for p in paths:
            key = fold(p)
            self.path.setdefault(key, p)
            base = key.rsplit("/", 1)[-1]
            self.name.setdefault(base, []).append(p)
            if key.endswith(".md"):
                self.path.setdefault(key[:-3], p)
                self.name.setdefault(base[:-3], []).append(p)

    def resolve(self, target: str, source: str) -> list[str]:
        if not target:
            return [source]
        text = target.replace("\\", "/").strip()
        if text.startswith(("./", "../")):
            hit = self.path.get(
                fold(posixpath.normpath(posixpath.join(posixpath.dirname(source), text)))
            )
            return [hit] if hit else []
        key = fold(text.lstrip("/"))
        if key in self.path:
            return [self.path[key]]
        hits = self.name.get(key.rsplit("/", 1)[-1], [])
        if "/" in key:
            tail = "/" + key
            hits = [
                h
                for h in hits
                if fold(h).endswith(tail) or fold(h).removesuffix(".md").endswith(tail)
            ]
        hits = list(dict.fromkeys(hits))
        if len(hits) > 1 and "/" in source:
            near = self.path.get(fold(posixpath.dirname(source) + "/" + key))
            if near in hits:
                return [near]
        return hits


def findings(top: str) -> tuple[int, list[tuple[str, int, str, str]]]:
    """How many links the vault holds, and (note, line, code, raw) of each bad one."""
    paths = files_of(top)
    names = Names(paths)
    texts: dict[str, tuple[list[str], set[int]]] = {}
    for rel in paths:
        if rel.endswith(".md"):
            with open(os.path.join(top, rel), "rb") as fh:
                text = fh.read().decode("utf-8", "replace")
            lines = text.split("\n")
            texts[rel] = lines, code_lines(lines) if "```" in text or "~~~" in text else set()
    anchors: dict[str, tuple[dict[str, list[int]], set[str]]] = {}
    said: dict[tuple[str, str], bool] = {}
    links = 0
    bad: list[tuple[str, int, str, str]] = []
    for rel, (lines, code) in texts.items():
        for line, inner, raw in links_of(lines, code):
            links += 1
            target, _, sub = inner.partition("|")[0].removesuffix("\\").partition("#")
            hits = names.resolve(target.strip(), rel)
            sub = sub.strip()
            if not hits:
                bad.append((rel, line, "VK301", raw))
            elif len(hits) > 1:
                bad.append((rel, line, "VK302", raw))
            elif sub and hits[0].casefold().endswith(".md") and hits[0] in texts:
                if (hits[0], sub) not in said:
                    if hits[0] not in anchors:
                        anchors[hits[0]] = anchors_of(*texts[hits[0]])
                    said[hits[0], sub] = missing(anchors[hits[0]], sub)
                if said[hits[0], sub]:
                    bad.append((rel, line, "VK305", raw))
    return links, bad


def cpu(argv: list[str]) -> float:
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(proc.pid, 0)
    return usage.ru_utime + usage.ru_stime


def lint_argv(top: str, *more: str) -> list[str]:
    vaultkeeper = str(Path(sys.executable).with_name("vaultkeeper"))
    return [vaultkeeper, "--vault", top, "lint", "--select", "VK3", *more, top]


def compare(top: str, rounds: int = 5) -> None:
    here = [sys.executable, __file__, top]
    a: list[float] = []
    b: list[float] = []
    for _ in range(rounds):
        a.append(cpu(here))
        b.append(cpu(lint_argv(top)))
    fa, fb = statistics.median(a), statistics.median(b)
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"floor {fa:.2f} s CPU, lint --select VK3 {fb:.2f} s CPU: {fb / fa:.2f}x (load {load})")


def diff(top: str) -> None:
    """The findings only the floor has, and only the lint has (VK301, VK302, VK305)."""
    done = subprocess.run(lint_argv(top, "--json"), capture_output=True, text=True, check=False)
    theirs = {
        (f["path"], f["line"], f["code"], raw[: raw.index("]]") + 2])
        for f in json.loads(done.stdout)
        if f["code"] in ("VK301", "VK302", "VK305")
        for raw in [f["message"].split(" link ", 1)[1]]
    }
    ours = set(findings(top)[1])
    for side, only in (("floor only", ours - theirs), ("lint only", theirs - ours)):
        for rel, line, code, raw in sorted(only):
            print(f"{side}: {rel}:{line}: {code} {raw}")
    print(f"{len(ours)} findings of the floor, {len(theirs)} of lint, {len(ours ^ theirs)} differ")


if __name__ == "__main__":
    if "--compare" in sys.argv:
        compare(sys.argv[1])
    elif "--diff" in sys.argv:
        diff(sys.argv[1])
    else:
        n, found = findings(sys.argv[1])
        codes = [code for _, _, code, _ in found]
        print(
            f"{n} links: {codes.count('VK301')} broken, {codes.count('VK302')} ambiguous, "
            f"{codes.count('VK305')} to a missing heading or block"
        )
