"""Claude Code auto memory at scale: 50 adopted projects of 200 memories each.

    python bench/native.py      # prints the rows; the figures go in docs/benchmarks.md

Measured as a person meets them, through the console script in fresh processes
(median of 5): ``native review`` of all 50 folders, ``scan --force`` with and without
the folders adopted (the scan sums up their review for the brief), ``ingest`` of one
session citing 5 memories, and ``report --brief``.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECTS, MEMORIES, RUNS = 50, 200, 5


def vk() -> list[str]:
    script = Path(sys.executable).with_name("vaultkeeper")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "vaultkeeper"]


def tree(home: Path) -> None:
    for p in range(PROJECTS):
        folder = home / ".claude" / "projects" / f"-src-p{p}" / "memory"
        folder.mkdir(parents=True)
        index = []
        for m in range(MEMORIES):
            name = f"m{m:03d}.md"
            (folder / name).write_text(
                f"---\nname: m{m}\ndescription: fact {m} of project {p} about w{m}x{p}\n"
                f"metadata:\n  type: project\n---\n\nBody of memory {m} in project {p}.\n"
            )
            index.append(f"- [m{m}]({name}) - w{m}x{p}")
        (folder / "MEMORY.md").write_text("\n".join(index) + "\n")


def session(home: Path, out: Path) -> None:
    tag = '<cc-memory filenames="m001.md,m002.md,m003.md,m004.md,m005.md">used</cc-memory>'
    line = {
        "type": "assistant",
        "sessionId": "bench-1",
        "cwd": "/src/p7",
        "timestamp": "2026-12-01T10:00:00Z",
        "message": {"role": "assistant", "content": [{"type": "text", "text": tag}]},
    }
    out.write_text(json.dumps(line) + "\n")


def timed(args: list[str], env: dict[str, str]) -> float:
    best: list[float] = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run(vk() + args, env=env, stdout=subprocess.DEVNULL, check=False)
        best.append(time.perf_counter() - start)
    return statistics.median(best) * 1000


def main() -> None:
    top = Path(tempfile.mkdtemp(prefix="vk-native-bench-"))
    try:
        home, vault = top / "home", top / "vault"
        tree(home)
        env = {**os.environ, "HOME": str(home), "VAULTKEEPER_TODAY": "2026-12-01"}
        subprocess.run(vk() + ["init", str(vault)], env=env, stdout=subprocess.DEVNULL, check=True)
        v = ["--vault", str(vault)]
        rows = [("scan --force, nothing adopted", timed(v + ["scan", "--force"], env))]
        subprocess.run(vk() + v + ["native", "adopt", "--all"], env=env, stdout=subprocess.DEVNULL)
        rows.append(("native review, 50 x 200", timed(v + ["native", "review"], env)))
        rows.append(("scan --force, 50 x 200 adopted", timed(v + ["scan", "--force"], env)))
        transcript = top / "s.jsonl"
        session(home, transcript)
        rows.append(("ingest, one session citing 5", timed(v + ["ingest", str(transcript)], env)))
        rows.append(("report --brief", timed(v + ["report", "--brief"], env)))
        for name, value in rows:
            print(f"| {name} | {value:.0f} ms |")
    finally:
        shutil.rmtree(top, ignore_errors=True)


if __name__ == "__main__":
    main()
