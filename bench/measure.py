"""How the benchmark measures: every side a fresh process of the same interpreter.

Each measurement starts one child with ``subprocess.Popen`` and reaps it with
``os.wait4``: wall time from just before the start to the reap, the child's own CPU time
(user + system) and its peak resident memory (``ru_maxrss``). Sides are interleaved
(A B A B ...) and compared by their medians. Wall time is the figure; CPU time is shown
beside it because it moves less when other work shares the machine.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

PYTHON = sys.executable

# The floor: read every .md file's bytes, walking the vault the way Obsidian and the
# scanner do (hidden folders and state/ skipped).
FLOOR = """
import os, sys
top = sys.argv[1]
n = 0
for d, dirs, files in os.walk(top):
    dirs[:] = [x for x in dirs if not x.startswith(".") and not (d == top and x == "state")]
    for f in files:
        if f.endswith(".md"):
            with open(os.path.join(d, f), "rb") as fh:
                n += len(fh.read())
print(n)
"""

# The same, but only the files the scanner must read: patterns/ and projects/*/memory/.
FLOOR_SCAN_FILES = """
import os, sys
top = sys.argv[1]
roots = [os.path.join(top, "patterns")]
projects = os.path.join(top, "projects")
roots += [os.path.join(projects, p, "memory") for p in sorted(os.listdir(projects))]
n = 0
for root in roots:
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if not x.startswith(".")]
        for f in files:
            if f.endswith(".md"):
                with open(os.path.join(d, f), "rb") as fh:
                    n += len(fh.read())
print(n)
"""

# What a user would write first: load every note with python-frontmatter.
FRONTMATTER = """
import os, sys
import frontmatter
top = sys.argv[1]
n = 0
for d, dirs, files in os.walk(top):
    dirs[:] = [x for x in dirs if not x.startswith(".") and not (d == top and x == "state")]
    for f in files:
        if f.endswith(".md"):
            post = frontmatter.load(os.path.join(d, f))
            n += len(post.metadata)
print(n)
"""

# obsidiantools' link graph of the vault (every note read, every wikilink an edge).
OBSIDIANTOOLS = """
import sys
from pathlib import Path
import obsidiantools.api as otools
vault = otools.Vault(Path(sys.argv[1])).connect()
print(vault.graph.number_of_nodes(), vault.graph.number_of_edges())
"""


@dataclass(frozen=True)
class Side:
    """One thing to measure: a command line and the environment it runs in."""

    label: str
    argv: tuple[str, ...]
    env: Mapping[str, str] | None = None
    ok: tuple[int, ...] = (0,)
    before: Callable[[], None] | None = None  # run before each run, untimed (a session's edits)


@dataclass
class Samples:
    seconds: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    maxrss_kib: list[int] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu)

    @property
    def peak_mib(self) -> float:
        return max(self.maxrss_kib) / 1024


def child_env(**extra: str) -> dict[str, str]:
    """The environment a user's shell would give: bytecode caching on, no overrides."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONDONTWRITEBYTECODE", "VAULTKEEPER_VAULT")
        and not k.startswith("SELF_MAINTAIN_")
    }
    env.update(extra)
    return env


def run_once(side: Side, cwd: Path | None = None) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, peak RSS in KiB) of one fresh run; raises if it fails."""
    if side.before is not None:
        side.before()
    began = time.perf_counter()
    proc = subprocess.Popen(
        side.argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=dict(side.env) if side.env is not None else child_env(),
        cwd=cwd,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - began
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in side.ok:
        raise RuntimeError(f"{side.label}: exit {proc.returncode}: {' '.join(side.argv)}")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def check_output(side: Side) -> str:
    """One run with its output kept, to see that the side does the work it claims."""
    done = subprocess.run(
        side.argv,
        capture_output=True,
        text=True,
        env=dict(side.env) if side.env is not None else child_env(),
        check=False,
    )
    if done.returncode not in side.ok:
        raise RuntimeError(f"{side.label}: exit {done.returncode}: {done.stderr.strip()[-500:]}")
    return done.stdout


def interleave(
    sides: Sequence[Side], rounds: int, warmup: int = 1, progress: bool = True
) -> dict[str, Samples]:
    """Run A B C A B C ... ``rounds`` times after ``warmup`` uncounted rounds."""
    out = {side.label: Samples() for side in sides}
    for n in range(warmup + rounds):
        for side in sides:
            seconds, cpu, rss = run_once(side)
            if n >= warmup:
                out[side.label].seconds.append(seconds)
                out[side.label].cpu.append(cpu)
                out[side.label].maxrss_kib.append(rss)
        if progress:
            print(".", end="", flush=True, file=sys.stderr)
    if progress:
        print(file=sys.stderr)
    return out


def vaultkeeper_argv() -> tuple[str, ...]:
    """The console script beside this interpreter (what `hooks install` registers).

    Run directly, as a user's shell or hook runs it: its shebang names this interpreter.
    """
    script = Path(PYTHON).parent / "vaultkeeper"
    if script.is_file():
        with open(script, "rb") as fh:
            shebang = fh.readline().decode(errors="replace")
        if (
            shebang.startswith("#!")
            and Path(shebang[2:].strip()).resolve() == Path(PYTHON).resolve()
        ):
            return (str(script),)
    return (PYTHON, "-m", "vaultkeeper")
