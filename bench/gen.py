"""Seeded synthetic vaults for the benchmark: N entries, like a memory vault grown over a year.

Half the entries are ``### name`` blocks spread over several registry files under
``patterns/``; the other half are files under ``projects/<p>/memory/`` (two thirds) and
``projects/<p>/research/``, with the template's frontmatter and bodies of a few
paragraphs with wikilinks. Dates spread around the anchor day, so every list gets
candidates (about 5-10% of entries each). Some frontmatter takes the less common forms
(folded descriptions, block lists, nested mappings, unquoted dates), about 2% only YAML
can read (escapes in a double-quoted string), and a few entries are problems ("yesterday" as a date,
an unreadable count), as in a vault people edit by hand. ``_index.md`` links one
sub-index per top-level folder, as ``vaultkeeper index`` does for a big vault; about 1%
of entries are left out of it (orphans) and about 1% of links are broken.

    python bench/gen.py 10000            # -> bench/out/vault-10000-s7-<date>/
    python bench/gen.py 500 --out DIR --anchor 2026-11-29

Generated vaults are cached under bench/out/ (gitignored): a vault is reused while its
N, seed, anchor day and generator version match.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

GENERATOR_VERSION = 3
OUT = Path(__file__).resolve().parent / "out"
BLOCKS_PER_REGISTRY = 2500
FILES_PER_PROJECT = 250

_WORDS_TEXT = """
cache retry timeout flaky test build deploy config schema migration index query latency
budget queue worker lock token parser fixture snapshot release branch merge commit review
lint format date clock timezone utc locale encoding bytes stream buffer socket request
response header payload client server endpoint route handler session state file folder
path symlink permission owner process signal thread pool memory vault entry pattern
registry counter report scanner applier journal hook cron
"""
_VERBS_TEXT = "use pin retry prefer avoid split check bisect cache batch guard log measure"
WORDS = _WORDS_TEXT.split()
VERBS = _VERBS_TEXT.split()
TYPES = ("memory", "memory", "decision")
LABELS = ("fact", "inferred", "rule", "validated-override")


@dataclass(frozen=True)
class Entry:
    name: str
    rel: str  # vault-relative path without .md (files) or registry path + block name
    kind: str  # "memory" | "research" | "block"


def sentence(rng: random.Random, lo: int = 6, hi: int = 14) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(lo, hi))]
    return " ".join(words).capitalize()


def paragraph(rng: random.Random, links: list[str]) -> str:
    parts = [sentence(rng) + "." for _ in range(rng.randint(2, 5))]
    for link in links:
        parts.insert(rng.randint(0, len(parts)), f"See {link}.")
    return " ".join(parts)


def link_to(rng: random.Random, target: Entry) -> str:
    """The ways people link: by name, by path, with an alias, to a registry block."""
    if target.kind == "block":
        return f"[[{target.rel}#{target.name}]]"
    form = rng.random()
    if form < 0.5:
        return f"[[{target.name}]]"
    if form < 0.8:
        return f"[[{target.rel}]]"
    return f"[[{target.name}|{target.name.replace('-', ' ')}]]"


def iso(day: dt.date) -> str:
    return day.isoformat()


def memory_file(
    rng: random.Random, entry: Entry, anchor: dt.date, targets: list[Entry], folder: str
) -> str:
    kind = "research" if folder == "research" else rng.choice(TYPES)
    roll = rng.random()
    if folder == "research":
        status, until = "active", anchor - dt.timedelta(days=rng.randint(30, 300))
    elif roll < 0.35:  # held out: mostly still waiting, a good share due
        status = "held_out"
        ahead = rng.randint(1, 60) if rng.random() < 0.7 else -rng.randint(0, 120)
        until = anchor + dt.timedelta(days=ahead)
    elif roll < 0.85:
        status, until = "active", anchor - dt.timedelta(days=rng.randint(8, 400))
    else:
        status, until = "archived", anchor - dt.timedelta(days=rng.randint(8, 400))
    odd = rng.random()
    lines = [f"name: {entry.name}"]
    if odd < 0.03:  # a folded description
        lines += ["description: >-", f"  {sentence(rng)}", f"  {sentence(rng)}"]
    elif 0.21 <= odd < 0.23:  # an escape in double quotes: only YAML reads it
        lines.append(f'description: "it\\u2019s \\"{sentence(rng).lower()}\\""')
    else:
        lines.append(f"description: {sentence(rng)}")
    lines.append(f"type: {kind}")
    if not (odd > 0.97 and status == "held_out"):  # an absent status counts as held_out
        lines.append(f"status: {status}")
    lines.append(f"label: {rng.choice(LABELS)}")
    lines.append(f'falsification_condition: "{sentence(rng, 4, 9).lower()}"')
    if 0.03 <= odd < 0.08:  # unquoted: YAML reads a date, the linter asks for quotes
        lines.append(f"holdout_until: {iso(until)}")
    elif 0.08 <= odd < 0.0812:
        lines.append('holdout_until: "yesterday"')  # a problem line, never a crash
    else:
        lines.append(f'holdout_until: "{iso(until)}"')
    if 0.2 <= odd < 0.21:  # a nested mapping: only YAML reads it
        lines += ["relations:", f'  supersedes: "[[{rng.choice(targets).name}]]"']
    else:
        lines.append("relations: {}")
    if 0.1 <= odd < 0.14:
        lines += ["sources:", f"  - https://example.com/{entry.name}", "  - https://example.org/x"]
    else:
        lines.append("sources: []")
    source = rng.choice(targets)
    lines.append(f'provenance: ["{source.rel}.md:{rng.randint(1, 40)}"]')
    links = [link_to(rng, rng.choice(targets)) for _ in range(rng.randint(2, 4))]
    if rng.random() < 0.02:
        links.append(f"[[missing-{entry.name}]]")  # a broken link for the linter
    paragraphs = [paragraph(rng, links[i::3]) for i in range(3)]
    body = [f"# {entry.name}", "", paragraphs[0], "", "## Why", "", paragraphs[1], ""]
    if rng.random() < 0.2:
        body += ["```text", f"$ vaultkeeper use {entry.name} [[not-a-link]]", "```", ""]
    body += ["## How to apply", ""]
    body += [f"- {sentence(rng, 4, 10)}" for _ in range(rng.randint(1, 4))]
    body += ["", paragraphs[2], ""]
    return "---\n" + "\n".join(lines) + "\n---\n\n" + "\n".join(body)


def registry_block(
    rng: random.Random, entry: Entry, anchor: dt.date, targets: list[Entry]
) -> list[str]:
    roll = rng.random()
    count = 0 if roll < 0.3 else 1 if roll < 0.65 else rng.randint(2, 12)
    old = rng.random() < (0.25 if count == 0 else 0.1)
    days = rng.randint(91, 500) if old else rng.randint(0, 89)
    lines = [f"### {entry.name}", paragraph(rng, [link_to(rng, rng.choice(targets))]), ""]
    if rng.random() < 0.0005:
        lines.append("**success count:** many")  # a problem: never a candidate
    else:
        lines.append(f"**success count:** {count}")
    lines.append(f"**last used:** {iso(anchor - dt.timedelta(days=days))}")
    if count >= 2 and rng.random() < 0.8:  # a maintained vault: most are promoted already
        when = anchor - dt.timedelta(days=rng.randint(0, days))
        lines.append(f"**promoted:** {iso(when)} -> ~/.claude/skills/{entry.name}/SKILL.md")
    return [*lines, ""]


def plan(n: int, rng: random.Random) -> tuple[list[Entry], list[Entry], int]:
    blocks_n, files_n = n // 2, n - n // 2
    registries = max(3, -(-blocks_n // BLOCKS_PER_REGISTRY))
    blocks = []
    for i in range(blocks_n):
        reg = "patterns/registry" if i % registries == 0 else f"patterns/registry-{i % registries}"
        blocks.append(Entry(f"{rng.choice(VERBS)}-{rng.choice(WORDS)}-b{i}", reg, "block"))
    projects = max(2, -(-files_n // FILES_PER_PROJECT))
    files = []
    for i in range(files_n):
        folder = "research" if i % 3 == 2 else "memory"
        name = f"{rng.choice(VERBS)}-{rng.choice(WORDS)}-m{i}"
        files.append(Entry(name, f"projects/p{i % projects:03d}/{folder}/{name}", folder))
    return blocks, files, registries


def generate(n: int, dest: Path, seed: int, anchor: dt.date) -> None:
    """Write the vault of ``n`` entries into ``dest`` (which must not exist)."""
    from vaultkeeper.entries.init import init_vault

    rng = random.Random(seed)
    init_vault(dest)
    blocks, files, registries = plan(n, rng)
    targets = blocks + files
    chunks: dict[str, list[str]] = {}
    for block in blocks:
        chunks.setdefault(block.rel, []).extend(registry_block(rng, block, anchor, targets))
    for reg, lines in chunks.items():
        path = dest / f"{reg}.md"
        head = path.read_text() if path.exists() else f"# Pattern registry, part {reg[-1]}\n"
        path.write_text(head.rstrip("\n") + "\n\n" + "\n".join(lines))
    made: set[Path] = set()
    for entry in files:
        path = dest / f"{entry.rel}.md"
        if path.parent not in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.add(path.parent)
        folder = entry.rel.split("/")[2]
        path.write_text(memory_file(rng, entry, anchor, targets, folder))
    write_index(dest, blocks, files, rng)


def write_index(dest: Path, blocks: list[Entry], files: list[Entry], rng: random.Random) -> None:
    """A root index linking one sub-index per folder, as `vaultkeeper index` splits a big one."""
    start, end = "<!-- vaultkeeper:index start -->", "<!-- vaultkeeper:index end -->"
    subs = {"patterns": blocks, "projects": files}
    root = ["# Index", "", "The root map of this vault.", "", start]
    for folder, entries in subs.items():
        root.append(f"- [[_index-{folder}]] - every entry under {folder}/")
        lines = [f"# Index of {folder}/", "", start]
        for e in entries:
            if rng.random() < 0.01:
                continue  # an orphan: nothing links it from the index
            target = f"{e.rel}#{e.name}" if e.kind == "block" else e.rel
            lines.append(f"- [[{target}]] - {e.name.replace('-', ' ')}")
        (dest / f"_index-{folder}.md").write_text("\n".join([*lines, end, ""]))
    root += ["- [[references/vault-spec]] - the vault's spec", end, ""]
    (dest / "_index.md").write_text("\n".join(root))


def vault_for(n: int, seed: int = 7, anchor: dt.date | None = None) -> Path:
    """The cached vault of ``n`` entries, generated first when missing."""
    day = anchor or dt.datetime.now(dt.timezone.utc).date()
    dest = OUT / f"vault-{n}-s{seed}-{day.isoformat()}-g{GENERATOR_VERSION}"
    if (dest / ".complete").exists():
        return dest
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.glob(f"vault-{n}-s{seed}-*"):  # yesterday's copy, a half-written one
        shutil.rmtree(old, ignore_errors=True)
    tmp = OUT / f".tmp-{dest.name}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    generate(n, tmp, seed, day)
    (tmp / ".complete").write_text("")
    tmp.rename(dest)
    return dest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("n", type=int, help="number of entries")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--anchor", type=dt.date.fromisoformat, help="today (default: UTC today)")
    parser.add_argument("--out", type=Path, help="write here instead of the cache")
    args = parser.parse_args(argv)
    if args.out is not None:
        day = args.anchor or dt.datetime.now(dt.timezone.utc).date()
        generate(args.n, args.out, args.seed, day)
        print(args.out)
    else:
        print(vault_for(args.n, args.seed, args.anchor))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    sys.exit(main())
