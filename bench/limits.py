"""Resource limits, measured: ``python bench/limits.py [WORKDIR]``.

Prints a markdown table for docs/benchmarks.md ("Limits under hostile sizes"): ingest of
one line citing 40,000 distinct unknown names; scan, ``report --brief`` and ``use`` on
10,000 registry blocks in groups of 100 near-identical ones; ``use`` and ``ingest`` with
a usage log of one million lines (the first counting compacts it). Each figure is one
run of a fresh ``vaultkeeper`` process (wall time); the machine's load shows in them.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

VK = [sys.executable, "-m", "vaultkeeper"]
TODAY = {"VAULTKEEPER_TODAY": "2026-12-01"}


def run(vault: Path, *args: str) -> float:
    import os

    start = time.perf_counter()
    subprocess.run(
        [*VK, "--vault", str(vault), *args],
        capture_output=True,
        check=False,
        env={**os.environ, **TODAY},
    )
    return time.perf_counter() - start


def fresh(work: Path, name: str, registry: str) -> Path:
    vault = work / name
    shutil.rmtree(vault, ignore_errors=True)
    subprocess.run([*VK, "init", str(vault)], capture_output=True, check=True)
    (vault / "patterns" / "registry.md").write_text(registry, encoding="utf-8")
    return vault


def known() -> str:
    return (
        "# Pattern registry\n\n### known\nK.\n\n**success count:** 0\n**last used:** 2026-11-01\n"
    )


def unknown_names(work: Path) -> list[tuple[str, str]]:
    vault = fresh(work, "names", known())
    text = " ".join(f"[[patterns/registry#unknown-{i}]]" for i in range(40_000))
    line = {"type": "assistant", "sessionId": "s1", "timestamp": "2026-11-30T10:00:00Z"}
    line["message"] = {"role": "assistant", "content": [{"type": "text", "text": text}]}
    path = work / "names.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    return [
        (
            "ingest, one line of 40,000 distinct unknown names",
            f"{run(vault, 'ingest', str(path)):.2f} s",
        )
    ]


def duplicates(work: Path) -> list[tuple[str, str]]:
    blocks = ["# Pattern registry\n"]
    for i in range(10_000):
        words = " ".join(f"w{i // 100}x{k}" for k in range(8))
        blocks.append(
            f"\n### p{i}\n{words} v{i}.\n\n**success count:** 1\n**last used:** 2026-11-01\n"
        )
    vault = fresh(work, "dups", "".join(blocks))
    scan = run(vault, "scan", "--force")
    shown = subprocess.run(
        [*VK, "--vault", str(vault), "report", "--json"], capture_output=True, check=True
    )
    report, size = json.loads(shown.stdout), len(shown.stdout)
    return [
        ("scan --force, 10,000 blocks in groups of 100 alike", f"{scan:.1f} s"),
        (
            "duplicate pairs in the report / its size",
            f"{len(report['duplicates'])} / {size / 1e6:.2f} MB",
        ),
        ("report --brief on it", f"{run(vault, 'report', '--brief'):.2f} s"),
        ("use on it", f"{run(vault, 'use', 'p5'):.2f} s"),
    ]


def big_log(work: Path) -> list[tuple[str, str]]:
    vault = fresh(work, "log", known())
    with (vault / "state" / "uses.jsonl").open("w", encoding="utf-8") as fh:
        for i in range(1_000_000):
            kind = "read" if i % 3 else "cite"
            target = "projects/p/memory/x.md" if kind == "read" else "known"
            event = {"session": f"sess-{i:08d}", "source": "claude-code", "kind": kind}
            event |= {"target": target, "date": f"2026-0{1 + i % 9}-1{i % 9}"}
            event["receipt"] = f"/home/me/.claude/projects/x/sess-{i:08d}.jsonl:{i % 500}"
            fh.write(json.dumps(event) + "\n")
    first = run(vault, "use", "known")
    second = run(vault, "use", "known")
    line = {"type": "assistant", "sessionId": "zz", "timestamp": "2026-11-30T10:00:00Z"}
    line["message"] = {"role": "assistant", "content": "[[patterns/registry#known]]"}
    path = work / "one.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    size = (vault / "state" / "uses.jsonl").stat().st_size
    return [
        ("use, usage log of 1,000,000 lines (compacts it)", f"{first:.1f} s"),
        ("use after compacting", f"{second:.2f} s"),
        ("ingest after compacting", f"{run(vault, 'ingest', str(path)):.2f} s"),
        ("usage log after compacting", f"{size / 1e6:.0f} MB"),
    ]


def main() -> None:
    work = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp())
    rows = unknown_names(work) + duplicates(work) + big_log(work)
    print("| figure | result |\n| --- | --- |")
    for name, value in rows:
        print(f"| {name} | {value} |")


if __name__ == "__main__":
    main()
