"""Known-item ranking benchmark: a sentence of a note as the query, the note as the answer.

    python bench/search_known.py VAULT [--seed N] [--per-note N]

For each note with frontmatter and at least one sentence of 6 to 40 words in its body,
up to five such sentences (chosen with a seeded generator, markdown syntax stripped) are
each a query; the note is the answer (five per note: one sentence per note swings top-1
by +-5 points from one seed to the next on a 173-note vault). Top-1 and top-5: the share
of queries whose note comes first, and among the first five. Two scorers over the same
entries: the old one (100 per query word found as a substring, plus 6/3/1 for
name/description/body: the scorer vaultkeeper used before the full-text index, kept here
only as the baseline) and the bm25 ranking of ``vaultkeeper search``
(vaultkeeper.search.rank). The vault is copied to a temporary folder first (the index is
written under its state/).

The figures in docs/benchmarks.md are from obsidianmd/obsidian-help's ``en/`` folder
(173 notes, all with frontmatter; fetched at commit fa179e91), the vault the issue's
peer figures (basic-memory 82.7% / 97.1%) were measured on, and from
../shared/corpora/kepano-obsidian.
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from vaultkeeper.search.index import Doc, read_docs  # noqa: E402
from vaultkeeper.search.rank import Searcher  # noqa: E402

WORD = re.compile(r"\w+")
_MARKUP = re.compile(
    r"!?\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]|\[([^\]]*)\]\([^)]*\)|[*_`>#]"
)


def sentences(doc: Doc) -> list[str]:
    """The body's sentences of 6 to 40 words, markdown links and emphasis stripped."""
    out = []
    for line in doc.lines:
        text = _MARKUP.sub(lambda m: m.group(2) or m.group(1) or m.group(3) or " ", line)
        text = text.strip(" -\t")
        for part in re.split(r"(?<=[.!?])\s+", text):
            if 6 <= len(WORD.findall(part)) <= 40:
                out.append(part.strip())
    return out


def cases(vault: Path, seed: int, per_note: int) -> list[tuple[str, str]]:
    """(query, the note's path): up to ``per_note`` sentences of each note that has one."""
    rng = random.Random(seed)
    out = []
    for path in sorted(vault.rglob("*.md")):
        rel = path.relative_to(vault).as_posix()
        if rel.startswith(("state/", ".")):
            continue
        for doc in read_docs(vault, rel):
            found = sentences(doc)
            for sentence in rng.sample(found, min(per_note, len(found))):
                out.append((sentence, rel))
    return out


def old_rank(docs: list[Doc], query: str) -> list[str]:
    """The old scorer: 100 per query word found as a substring, plus 6, 3 and 1 for
    each of name, description and body holding it; ties by path."""
    words = list(dict.fromkeys(w.casefold() for w in WORD.findall(query)))
    scored = []
    for doc in docs:
        fields = (doc.name.casefold(), doc.description.casefold(), "\n".join(doc.lines).casefold())
        score = 0
        for word in words:
            here = sum(w for w, f in zip((6, 3, 1), fields, strict=True) if word in f)
            score += 100 + here if here else 0
        if score:
            scored.append((-score, doc.path, doc.line))
    scored.sort()
    return [path for _, path, _ in scored]


def measure(vault: Path, seed: int = 7, per_note: int = 5) -> dict[str, object]:
    """Top-1 and top-5 of both scorers on a copy of ``vault``."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "vault"
        shutil.copytree(vault, copy, ignore=shutil.ignore_patterns(".git", "state"))
        asked = cases(copy, seed, per_note)
        docs = [
            d
            for p in sorted(copy.rglob("*.md"))
            for d in read_docs(copy, p.relative_to(copy).as_posix())
        ]
        searcher = Searcher(copy)
        got: dict[str, list[int]] = {"old": [0, 0], "bm25": [0, 0]}
        for query, answer in asked:
            old = list(dict.fromkeys(old_rank(docs, query)))
            new = list(dict.fromkeys(h.path for h in searcher.search(query, limit=20)))
            for name, ranked in (("old", old), ("bm25", new)):
                got[name][0] += ranked[:1] == [answer]
                got[name][1] += answer in ranked[:5]
    n = len(asked)
    return {
        "notes": len({p for p in (d.path for d in docs)}),
        "queries": n,
        **{f"{k}_top1": v[0] / n for k, v in got.items()},
        **{f"{k}_top5": v[1] / n for k, v in got.items()},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vault", type=Path)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--per-note", type=int, default=5, help="sentences asked per note")
    args = parser.parse_args(argv)
    got = measure(args.vault, args.seed, args.per_note)
    print(
        f"{args.vault}: {got['queries']} queries over {got['notes']} files; "
        f"old scorer top-1 {got['old_top1']:.1%} top-5 {got['old_top5']:.1%}; "
        f"bm25 top-1 {got['bm25_top1']:.1%} top-5 {got['bm25_top5']:.1%}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
