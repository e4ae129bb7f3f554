"""The benchmark: vaultkeeper side by side with the floor and with what a user would use.

    bench/clean-run.sh               # the headline run: a fresh venv, `pip install '.[bench]'`,
                                     # then this; writes docs/benchmarks.md and the README table
    python bench/run.py --no-write   # print the table only (vaultkeeper installed cleanly)

Every side is a fresh process of this interpreter (bench/measure.py), sides are
interleaved (A B A B ...), and each figure is a ratio of medians. Vaults come from
bench/gen.py (seeded) and are cached under bench/out/ (gitignored). The interpreter's
vaultkeeper must be a plain install of this checkout (bench/install.py says why):
otherwise this refuses, unless --allow-unclean, and then every page it writes says so.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import figures  # noqa: E402
import install  # noqa: E402
import learn  # noqa: E402
from figures import Row  # noqa: E402
from gen import vault_for  # noqa: E402

DOC = HERE.parent / "docs" / "benchmarks.md"
README = HERE.parent / "README.md"
# the README's Performance table, rewritten by each run between these lines
README_START = "<!-- bench/run.py: table start -->"
README_END = "<!-- bench/run.py: table end -->"
README_ROWS = (  # (figure of a Row, how the README names it)
    ("cold scan / read-every-file floor",
     "full `scan --force` after a session's edits / reading every `.md` file's bytes"),
    ("cold scan, nothing changed",
     "the same scan when nothing changed / reading every `.md` file's bytes"),
    ("first scan, no scan cache",
     "the first scan, no scan cache (`--fresh`) / reading every `.md` file's bytes"),
    ("cold scan / python-frontmatter loop",
     "full `scan --force` after a session's edits / `frontmatter.load` on every file"),
    ("throttled no-op / bare interpreter start",
     "`scan` when it has nothing to do (the hook's usual run) / `python -c pass`"),
    ("50k / 10k cold scan time", "first-scan time (`--fresh`) at 50k / at 10k entries"),
    ("peak memory of a scan at 50k entries", "peak memory of a scan at 50k entries"),
    ("lint --select VK3 / obsidiantools",
     "`lint --select VK3` / obsidiantools building the same graph (1k)"),
    ("session-end hook return time", "`hooks/session-end.sh` returns, 40k entries"),
    ("duplicates pass after a session's edits",
     "duplicates pass after a session's edits / the rest of that scan, 50k"),
)  # fmt: skip
CLEAN = (
    "- install: vaultkeeper from a plain `pip install '.[bench]'` in a fresh virtual "
    "environment (bench/clean-run.sh), not an editable install, whose start-up hook slows "
    "every Python start (`python -c pass` too) and so hides vaultkeeper's own imports"
)
PACKAGES = ("vaultkeeper", "click", "PyYAML", "python-frontmatter", "obsidiantools")


def table(rows: list[Row]) -> list[str]:
    out = [
        "| figure | vaultkeeper | compared with | result | target | verdict | in CPU time |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        out.append(
            f"| {r.figure} | {r.ours} | {r.versus or '-'} | **{r.shown}** | "
            f"{r.target_shown or '-'} | {r.verdict} | {r.cpu} |"
        )
    return out


def versions() -> str:
    found = []
    for name in PACKAGES:
        try:
            found.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            found.append(f"{name} (not installed)")
    import yaml

    found.append("libyaml C loader " + ("yes" if hasattr(yaml, "CSafeLoader") else "no"))
    return ", ".join(found)


METHOD = """\
## How it is measured

- vaultkeeper is a **plain `pip install '.[bench]'` in a fresh virtual environment**
  (`bench/clean-run.sh` makes one, runs this and removes it). Not an editable install:
  its start-up hook (a `.pth` file every interpreter start runs) once made
  `python -c pass` itself take 38 ms here, which hid vaultkeeper's own imports (the
  no-op read 1.06x that way, 2.54x from a clean install). `bench/run.py` refuses an
  editable, stale or in-checkout vaultkeeper (`bench/install.py`) unless given
  `--allow-unclean`, and a page written that way says so at the top.
- Every side is a **fresh process of the same interpreter**: `vaultkeeper` is the console
  script beside `sys.executable` (what `vaultkeeper hooks install` registers), the
  comparisons are `python -c SNIPPET VAULT` (bench/measure.py holds the snippets). Each
  child is reaped with `os.wait4`, which gives its wall time and its own `ru_maxrss`.
- Sides are **interleaved** (A B C A B C ...) after one uncounted warm-up round, and each
  figure is the **ratio of the medians** of wall times. The page cache is warm for every
  side alike; "cold" means a full scan (`--force`), as opposed to the throttled no-op.
- The last column is the same ratio in CPU time (user + system of each child, from
  `os.wait4`). This machine is shared with other work, which moves a ratio from run to
  run by up to about 10%; the CPU-time ratio says whether a difference is the code or
  the neighbours. `--rounds N` (default 7; the cold scan gets three times as many)
  trades time for steadier medians.
- Children run with bytecode caching on (`PYTHONDONTWRITEBYTECODE` removed from their
  environment), as after a normal install; the warm-up round writes the `.pyc` files.
- The floor reads every `.md` file's bytes, walking the vault as the scanner does (hidden
  folders and `state/` skipped). The scan itself reads only `patterns/` and
  `projects/*/memory/` (the spec's two sources); the row "reading only the files the
  scan reads" compares it with that smaller floor too.
- The scan does the user's whole workload: guards, state file, every registry block
  and memory file classified, every candidate's sha256, the report kept as a row of
  `state/vaultkeeper.db` and printed (stdout to /dev/null).
- Vaults: `bench/gen.py N` (seed 7, dates around the run's day): half registry blocks
  over several `patterns/*.md` files, half files under `projects/*/memory|research/`
  with the template's frontmatter, bodies with wikilinks, about 5-10% of entries on each
  list, a few YAML-only forms and a few problems.
- The hook row runs `hooks/session-end.sh VAULT PROGRAM` as a host would (PATH = this
  interpreter's bin folder, /usr/bin, /bin; `SELF_MAINTAIN_FORCE=1`, so every run starts a
  full scan) and waits for that background scan to finish before the next run.
- obsidiantools is compared on the 1k vault by default: it takes about 50 s per run at
  10k entries (`--lint-size 10000` measures there).
- The learning-loop rows (bench/learn.py, `--only learn`): `ingest` of a 50 MB
  transcript shaped as Claude Code writes one (tool results, the agent's citations and
  reads, unknown line types, one 12 MB line past the line cap, a half-written last line)
  into a copy of the 1k vault, against reading the file's lines in Python; every run
  reads the whole file (after the first, nothing is new). Its peak memory is read
  through a small launcher (`RUSAGE_CHILDREN`), since a process's `ru_maxrss` keeps the
  high-water mark of the process it was started from. `report --brief --cwd` runs on
  the 50k vault after one full scan.
"""


# Why a target is missed, when it is: printed under the table for every missed row.
WHY = {
    "cold scan / read-every-file floor, 10k entries": (
        "the scan cache spares it reading and parsing what did not change, but a scan "
        "still stats every memory file and checks what the cache kept of it (about 7 us "
        "each), loads the cache (about 2.4 MB of JSON), saves and prints a report of about "
        "2,000 findings, and pays about 20 ms of imports (pathlib, re, json, datetime, its "
        'own modules) the floor has none of. See "Where the time goes".'
    ),
}


def phases(vault: Path, runs: int = 5) -> list[str]:
    """Median milliseconds of each phase of a 10k scan (bench/phases.py, fresh processes):
    after a session's edits, with nothing changed, and the first scan (no cache)."""
    quiet = figures._phases(vault, runs)  # first: the vault settled, nothing changed
    cases = [
        figures._phases(vault, runs, "--edit", "lesson,count"),
        quiet,
        figures._phases(vault, runs, "--fresh"),
    ]
    names = list(dict.fromkeys(name for case in cases for name in case))
    return [
        f"| {name} | " + " | ".join(f"{case.get(name, 0.0):.0f} ms" for case in cases) + " |"
        for name in names
    ]


ANALYSIS = """\
## Where the time goes

One 10k scan, `python bench/phases.py VAULT [--edit lesson,count | --fresh]` (median of 5
fresh processes): timers around the functions that do each phase, inside the console
script's own path. Interpreter start-up (`python -c pass`, in the no-op row above) comes
on top.

| phase | after a session's edits | nothing changed | first scan (`--fresh`) |
| --- | --- | --- | --- |
{phases}

- the scan's rows (`state/vaultkeeper.db`, vaultkeeper/scan/cache.py) keep what a scan
  read of each memory file and registry file, keyed by the file's device, inode, size,
  mtime and ctime (ctime moves on every write and cannot be set back), and each
  duplicates group's pairs under a digest of its entries. A file changed in the last
  2 s is never kept (two writes within one clock tick can leave its stat alike). So the
  hook's scan after a session reads the files the session wrote, the registry file
  whose count moved, and compares again the one project whose lesson changed;
- after a session's edits: the registry file whose count moved is parsed again
  (vaultkeeper/registry/keptheads.py: a block whose text is as in its row keeps its
  first sentence and hash), the one
  project whose lesson changed is compared again (the others keep their pairs without
  their entries being built), and only the changed files' rows are written: the costs
  a scan of an unchanged vault does not have;
- imports: pathlib 3 ms, json and datetime 3 ms, vaultkeeper's modules the rest;
  neither click (vaultkeeper/entry.py runs `scan` without it) nor typing, dataclasses
  (with inspect: the scan's records are named tuples), tempfile or hashlib (its
  digests come from CPython's builtin modules, without OpenSSL) is imported, the
  credential detectors' and the duplicates tokenizer's regexes are compiled only when
  used, and PyYAML only when some frontmatter that changed needs it;
- memory files: a stat each, and what the cache kept; the first scan reads every one
  (about half its time), then the YAML-free read of the keys a decision needs;
- report and state: JSON of about 1,100 candidates and 1,000 upkeep findings, one
  check for credentials and control characters over all of them (each finding on its
  own only when that check fires), and the writes, each file's bytes fsynced and
  `state/` once, after the last rename;
- throughout: Python's cyclic garbage collector is off for the run (a scan makes no
  cycles worth finding) and does not walk the imported modules again at exit.
"""


def unclean_warning(problems: list[str]) -> str:
    return (
        "**Not a headline run**: " + "; ".join(problems) + ". Figures measured this way "
        "are not comparable with a clean install's; run bench/clean-run.sh."
    )


def readme_table(rows: list[Row], started: dt.datetime, problems: list[str]) -> list[str]:
    """The README's Performance table: the headline rows, as this run measured them."""
    out = [
        README_START,
        f"Measured {started:%Y-%m-%d} from a plain `pip install .` in a clean virtual "
        "environment (`bench/clean-run.sh`; full table: [docs/benchmarks.md](docs/benchmarks.md)):",
        "",
        "| figure (10k entries unless said) | result | target | verdict |",
        "| --- | --- | --- | --- |",
    ]
    for prefix, name in README_ROWS:
        row = next((r for r in rows if r.figure.startswith(prefix)), None)
        if row is not None and row.shown != "-":
            out.append(f"| {name} | {row.shown} | {row.target_shown or '-'} | {row.verdict} |")
    if problems:
        out += ["", unclean_warning(problems)]
    return [*out, README_END]


def write_readme(table_lines: list[str]) -> bool:
    """Replace the table between the markers; False when the README has no markers."""
    text = README.read_text(encoding="utf-8")
    start, end = text.find(README_START), text.find(README_END)
    if start == -1 or end < start:
        return False
    new = text[:start] + "\n".join(table_lines) + text[end + len(README_END) :]
    README.write_text(new, encoding="utf-8")
    return True


def render(
    rows: list[Row],
    where: list[str],
    notes: list[str],
    started: dt.datetime,
    seconds: float,
    problems: list[str] | None = None,
) -> str:
    lines = [
        "# Benchmarks",
        "",
        "Written by `bench/clean-run.sh` (`python bench/run.py` in a fresh virtual environment"
        " with a plain `pip install '.[bench]'`); the README's Performance section quotes it.",
        "",
        *([unclean_warning(problems), ""] if problems else []),
        f"- date: {started:%Y-%m-%d %H:%M} UTC; the run took {seconds:.0f} s",
        f"- machine: {figures.machine()}",
        f"- packages: {versions()}",
        CLEAN if not problems else "- install: NOT CLEAN (see above)",
        "",
        *table(rows),
        "",
    ]
    missed = [r for r in rows if r.verdict.startswith("missed")]
    for r in missed:
        lines.append(f"- **{r.figure}**: {r.verdict}: {WHY.get(r.figure, 'see the notes')}")
    cold = next((r for r in rows if r.figure.startswith("cold scan / read-every")), None)
    if cold is not None:
        stretch = "met" if cold.value <= 1.5 else f"missed by {(cold.value / 1.5 - 1) * 100:.0f}%"
        why = f": {WHY[cold.figure]}" if cold.value > 1.5 and cold.figure in WHY else ""
        lines.append(f"- stretch goal, cold scan / floor <= 1.5x: {stretch}{why}")
    lines += ["", ANALYSIS.format(phases="\n".join(where)) if where else "", METHOD]
    if notes:
        lines += ["## Notes on this run", "", *notes, ""]
    return "\n".join(lines)


# The page's sections this script writes; every other section (the search figures,
# the auto memory's, the recall hook's, ...) is another script's or a person's: kept.
OWN_SECTIONS = ("## Where the time goes", "## How it is measured", "## Notes on this run")


def with_kept(page: str) -> str:
    """``page`` followed by the sections of the current docs/benchmarks.md that this
    script does not write (from the first such heading on), so a run rewrites its own
    figures and nothing else."""
    try:
        old = DOC.read_text(encoding="utf-8").splitlines()
    except OSError:
        return page
    heads = [i for i, x in enumerate(old) if x.startswith("## ") and x not in OWN_SECTIONS]
    if not heads:
        return page
    return page.rstrip("\n") + "\n\n" + "\n".join(old[heads[0] :]).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7, help="counted rounds per group")
    parser.add_argument("--lint-size", type=int, default=1000, choices=(1000, 10000, 50000))
    parser.add_argument("--no-write", action="store_true", help="do not write the docs page")
    parser.add_argument(
        "--only", help="comma-separated groups: cold,noop,scale,lint,hook,learn,upkeep"
    )
    parser.add_argument(
        "--allow-unclean",
        action="store_true",
        help="run from an editable or stale install anyway (every page written says so)",
    )
    parser.add_argument(
        "--note", action="append", default=[], help="a line for the page's notes on this run"
    )
    args = parser.parse_args(argv)
    problems = install.problems(HERE.parent, figures.PYTHON, figures.child_env())
    if problems and not args.allow_unclean:
        for problem in problems:
            print(f"bench/run.py: {problem}", file=sys.stderr)
        print(
            "bench/run.py: headline figures come from a plain install of this checkout in a "
            "clean virtual environment: run bench/clean-run.sh (or pass --allow-unclean)",
            file=sys.stderr,
        )
        return 2
    for problem in problems:
        print(f"bench/run.py: WARNING: {problem}; these figures are not headline figures",
              file=sys.stderr)  # fmt: skip
    groups = set((args.only or "cold,noop,scale,lint,hook,learn,upkeep").split(","))
    started, clock = dt.datetime.now(dt.timezone.utc), time.monotonic()
    load_at_start = os.getloadavg()[0]  # other work on the machine moves every figure
    print("generating or reusing vaults under bench/out/ ...", file=sys.stderr)
    sizes = {1000, 10000, 50000, args.lint_size} | ({40000} if "hook" in groups else set())
    vaults = {n: vault_for(n) for n in sorted(sizes)}
    rows: list[Row] = []
    r = args.rounds
    steps: list[tuple[str, str, Callable[[], list[Row]]]] = [
        ("cold", "cold scan vs floor and python-frontmatter, 10k",
         lambda: figures.cold_scan(vaults[10000], 3 * r)),
        ("noop", "throttled no-op vs bare start", lambda: figures.noop(vaults[10000], 3 * r)),
        ("scale", "scan at 1k, 10k, 50k",
         lambda: figures.scaling({n: vaults[n] for n in (1000, 10000, 50000)}, max(3, r - 2))),
        ("lint", f"lint vs obsidiantools, {args.lint_size}",
         lambda: figures.lint(vaults[args.lint_size], args.lint_size, max(3, r - 2))),
        ("hook", "session-end hook, 40k", lambda: figures.hook(vaults.get(40000, Path()), 5)),
        ("learn", "ingest of a 50 MB transcript; report --brief at 50k",
         lambda: learn.ingest(1000, max(3, r - 2)) + learn.brief(50000, max(3, r - 2))),
        ("upkeep", "duplicates and decay passes, 50k",
         lambda: figures.upkeep(vaults[50000], max(5, r))),
    ]  # fmt: skip
    for name, title, step in steps:
        if name in groups:
            print(f"{title} ...", file=sys.stderr)
            rows.extend(step())
    where = phases(vaults[10000]) if "cold" in groups else []
    seconds = time.monotonic() - clock
    print("\n".join(table(rows)))
    print("\n".join(where))
    if not args.no_write:
        DOC.parent.mkdir(exist_ok=True)
        notes = [f"- {note}" for note in args.note]
        loads = f"{load_at_start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end"
        notes.append(f"- load average (1 minute) of the machine: {loads}")
        DOC.write_text(with_kept(render(rows, where, notes, started, seconds, problems)))
        print(f"wrote {DOC.relative_to(HERE.parent)}", file=sys.stderr)
        if {"cold", "noop"} <= groups and write_readme(readme_table(rows, started, problems)):
            print(f"wrote {README.relative_to(HERE.parent)}'s Performance table", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
