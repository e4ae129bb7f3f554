"""Each command measured after each of the others, on one vault in daily use.

    python bench/sequence.py --n 50000 [--rounds 2] [--only scan,use,promote,index]

A figure that holds only after the command it was first measured after does not hold:
a cache warmed by one command and made stale by another shows only in some orders. So
the commands run in a de Bruijn order -- every ordered pair (A, B) appears once per
round, on one working copy of the seeded vault (bench/gen.py), as a person's day would
run them -- and each run of B is filed under the command that ran just before it.

Every run is a fresh process of the installed console script beside this interpreter
(run it from a clean virtual environment: bench/clean-run.sh makes one), reaped with
``os.wait4`` (bench/measure.py): wall time and the child's CPU time. The table gives,
per command, the median and the worst of the medians after each predecessor, and which
predecessor gave the worst; the machine's load average is printed before and after.

The commands that change the vault take a new target each time, from the report the
first scan made: a new promote candidate, a new pair of active lessons to supersede, a
new duplicate pair to merge (asking: a merge waits for a person, so it queues).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen import vault_for  # noqa: E402

PROG = str(Path(sys.executable).parent / "vaultkeeper")
EVIDENCE = "_index.md:1"
ALL = ("scan", "use", "promote", "supersede", "merge", "index", "brief", "status", "search")
BOUNDS_MS = {
    "scan": 300,
    "use": 500,
    "promote": 500,
    "supersede": 500,
    "merge": 500,
    "index": 500,
    "brief": 150,
    "status": 300,
    "search": None,
}


def de_bruijn(k: int) -> list[int]:
    """A cyclic order of 0..k-1 in which every ordered pair (self pairs too) appears once."""
    a = [0] * 3  # the standard algorithm for words of length 2: indices 0..2
    out: list[int] = []

    def db(t: int, p: int) -> None:
        if t > 2:
            if 2 % p == 0:
                out.extend(a[1 : p + 1])
        else:
            a[t] = a[t - p]
            db(t + 1, p)
            for j in range(a[t - p] + 1, k):
                a[t] = j
                db(t + 1, t)

    db(1, 1)
    return out


class Targets:
    """What the mutating commands act on, each used once."""

    def __init__(self, vault: Path) -> None:
        report = json.loads(_vk(vault, "report", "--json").stdout)
        self.promote = iter([c["name"] for c in report.get("promote", [])])
        self.merge = iter(
            [
                (p["b"]["name"], p["a"]["name"])
                for p in report.get("duplicates", [])
                if p.get("kind") == "block"
            ]
        )
        actives = []
        for project in sorted((vault / "projects").iterdir()):
            for note in sorted((project / "memory").glob("*.md")):
                if "status: active" in note.read_text(encoding="utf-8", errors="replace"):
                    actives.append(str(note.relative_to(vault)))
                    if len(actives) % 2 == 0:
                        break
        self.supersede = iter(zip(actives[0::2], actives[1::2], strict=False))
        first = next(
            line[4:]
            for line in (vault / "patterns" / "registry-1.md").read_text().splitlines()
            if line.startswith("### ")
        )
        self.pattern = first
        self.words = "test clock retry"


def argv_for(name: str, targets: Targets, cwd: Path) -> list[str] | None:
    """The command line of one run of ``name``, or None when its targets ran out."""
    if name == "scan":
        return ["scan", "--force"]
    if name == "use":
        return ["use", targets.pattern]
    if name == "promote":
        got = next(targets.promote, None)
        return None if got is None else ["apply", "promote", got, "--evidence", EVIDENCE]
    if name == "supersede":
        pair = next(targets.supersede, None)
        if pair is None:
            return None
        return ["apply", "supersede", pair[0], "--by", pair[1], "--evidence", EVIDENCE]
    if name == "merge":
        pair = next(targets.merge, None)
        return None if pair is None else ["apply", "merge", *pair, "--evidence", EVIDENCE]
    if name == "index":
        return ["index"]
    if name == "brief":
        return ["report", "--brief", "--cwd", str(cwd)]
    if name == "status":
        return ["status"]
    if name == "search":
        return ["search", *targets.words.split()]
    raise ValueError(name)


def _vk(vault: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PROG, "--vault", str(vault), *args], capture_output=True, text=True, check=False
    )


def timed(vault: Path, argv: list[str]) -> tuple[float, float, int]:
    """One run: wall seconds, CPU seconds, exit code."""
    with open(os.devnull, "wb") as null:
        start = time.perf_counter()
        child = subprocess.Popen(
            [PROG, "--vault", str(vault), *argv], stdout=null, stderr=null, cwd=vault
        )
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
    return wall, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status)


def runs(
    order: list[str], rounds: int, targets: Targets, vault: Path
) -> Iterator[tuple[str, str, float, float, int]]:
    """(previous, command, wall, cpu, exit) for each run after the first."""
    prev = None
    for _ in range(rounds):
        for name in order:
            argv = argv_for(name, targets, vault / "projects" / "p001")
            if argv is None:
                continue
            wall, cpu, code = timed(vault, argv)
            if prev is not None:
                yield prev, name, wall, cpu, code
            prev = name


def table(
    got: dict[str, dict[str, list[tuple[float, float]]]], emit: Callable[[str], None]
) -> None:
    emit(
        "| command | p50 wall ms (all orders) | worst p50 after | after | p50 CPU ms "
        "| worst p50 CPU after | after | bound |"
    )
    emit("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, after in got.items():
        every = [w for rows in after.values() for w, _ in rows]
        cpu = [c for rows in after.values() for _, c in rows]
        medians = {p: statistics.median(w for w, _ in rows) for p, rows in after.items()}
        worst = max(medians, key=medians.__getitem__)
        cpus = {p: statistics.median(c for _, c in rows) for p, rows in after.items()}
        most = max(cpus, key=cpus.__getitem__)
        bound = BOUNDS_MS.get(name)
        emit(
            f"| {name} | {statistics.median(every) * 1000:.0f} | {medians[worst] * 1000:.0f} "
            f"| {worst} | {statistics.median(cpu) * 1000:.0f} | {cpus[most] * 1000:.0f} "
            f"| {most} | {'-' if bound is None else f'<= {bound} ms'} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--only", default=",".join(ALL))
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n]
    order = [names[i] for i in de_bruijn(len(names))]
    with tempfile.TemporaryDirectory(prefix="sequence-") as tmp:
        # a home of its own: a promote writes a skill under ~/.claude/skills, and a bench
        # never touches the real home (every child inherits this environment)
        os.environ["HOME"] = str(Path(tmp) / "home")
        for var in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "CODEX_HOME"):
            os.environ.pop(var, None)
        vault = Path(tmp) / "v"
        shutil.copytree(vault_for(args.n), vault, symlinks=True)
        # a vault in daily use: its full-text index built (the first search builds it once,
        # which is measured on its own: bench/search.py), scanned, linted
        for prime in (("index",), ("scan", "--force"), ("lint",), ("search", "prime")):
            _vk(vault, *prime)
        # a file changed within 2 s of being read is not kept by its stat key (two writes
        # in one clock tick can leave the key alike): the copy's files settle, then the
        # commands that keep their rows run again, as on a vault in daily use
        time.sleep(2.1)
        for prime in (("index",), ("scan", "--force")):
            _vk(vault, *prime)
        targets = Targets(vault)
        got: dict[str, dict[str, list[tuple[float, float]]]] = defaultdict(
            lambda: defaultdict(list)
        )
        failed: dict[str, int] = defaultdict(int)
        print(f"n={args.n} rounds={args.rounds} load average before: {os.getloadavg()}")
        for prev, name, wall, cpu, code in runs(order, args.rounds, targets, vault):
            got[name][prev].append((wall, cpu))
            if code not in (0, 1, 3):
                failed[name] += 1
        table(got, print)
        print(f"load average after: {os.getloadavg()}")
        if failed:
            print(f"exits outside 0/1/3: {dict(failed)}")


if __name__ == "__main__":
    main()
