"""The floor for ``lint --select VK3``: an independent resolver of the same links.

Standard library only, written apart from vaultkeeper's code: walk the vault as Obsidian
does (hidden names, the root's ``state/``, ``node_modules`` and ``__pycache__`` skipped),
read every ``.md``, take each ``[[...]]`` and ``![[...]]`` outside fenced code and inline
code spans, and resolve it by Obsidian's rule: a path from the vault root (``.md``
optional, case-insensitive), ``./`` and ``../`` from the note's folder, else a file name
(or path suffix) that one file has, or, when several have it, the one in the linking
note's own folder. It prints how many links it read and how many it found broken and
ambiguous -- what VK301 and VK302 count.

    python bench/resolve_floor.py VAULT            # the floor's counts
    python bench/resolve_floor.py VAULT --compare  # and its CPU time beside the lint's

``--compare`` runs each side as a fresh process, interleaved (5 rounds), and prints the
median CPU time (user + system) of each, the ratio, and the machine's load.
"""

from __future__ import annotations

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


def links_of(text: str) -> list[tuple[str, str]]:
    """(target, raw) of each wikilink outside code."""
    found: list[tuple[str, str]] = []
    fence = ""
    for line in text.split("\n"):
        bare = line.lstrip(" \t>")
        if bare.startswith(("```", "~~~")):
            mark = bare[: len(bare) - len(bare.lstrip(bare[0]))]
            if not fence and not (mark[0] == "`" and "`" in bare[len(mark) :]):
                fence = mark
                continue
            if (
                fence
                and mark[0] == fence[0]
                and len(mark) >= len(fence)
                and not bare[len(mark) :].strip()
            ):
                fence = ""
                continue
        if fence or "[[" not in line:
            continue
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
                target = m.group(2).partition("|")[0].removesuffix("\\").partition("#")[0]
                found.append((target.strip(), m.group()))
    return found


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


def floor(top: str) -> tuple[int, int, int]:
    paths = files_of(top)
    names = Names(paths)
    links = broken = ambiguous = 0
    for rel in paths:
        if not rel.endswith(".md"):
            continue
        with open(os.path.join(top, rel), "rb") as fh:
            text = fh.read().decode("utf-8", "replace")
        for target, _ in links_of(text):
            links += 1
            hits = names.resolve(target, rel)
            broken += not hits
            ambiguous += len(hits) > 1
    return links, broken, ambiguous


def cpu(argv: list[str]) -> float:
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(proc.pid, 0)
    return usage.ru_utime + usage.ru_stime


def compare(top: str, rounds: int = 5) -> None:
    here = [sys.executable, __file__, top]
    lint = [
        str(Path(sys.executable).with_name("vaultkeeper")),
        "--vault",
        top,
        "lint",
        "--select",
        "VK3",
        top,
    ]
    a: list[float] = []
    b: list[float] = []
    for _ in range(rounds):
        a.append(cpu(here))
        b.append(cpu(lint))
    fa, fb = statistics.median(a), statistics.median(b)
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"floor {fa:.2f} s CPU, lint --select VK3 {fb:.2f} s CPU: {fb / fa:.2f}x (load {load})")


if __name__ == "__main__":
    if "--compare" in sys.argv:
        compare(sys.argv[1])
    else:
        n, bad, two = floor(sys.argv[1])
        print(f"{n} links: {bad} broken, {two} ambiguous")
