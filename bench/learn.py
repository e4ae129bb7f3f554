"""The learning loop's figures: ``ingest`` of a 50 MB transcript, ``report --brief`` at 50k.

    python bench/learn.py            # print the rows (bench/run.py --only learn runs them too)

The transcript is shaped as Claude Code writes one: mostly tool results in the person's
lines (file contents, command output), the agent's lines citing registry patterns and
reading notes, a few lines of types ingest does not know, one very long line and a
half-written last line. Time is the median of fresh runs of the console script (each
run reads the whole file; after the first nothing is new, which costs the same reading);
peak memory is measured through a small launcher, because a process's peak RSS keeps
the high-water mark of the process it was started from.
"""

from __future__ import annotations

import json
import random
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from figures import Row, ms, ratio  # noqa: E402
from gen import vault_for  # noqa: E402
from measure import PYTHON, Side, check_output, interleave, vaultkeeper_argv  # noqa: E402

TRANSCRIPT_MB = 50
LONG_LINE = 12_000_000  # one tool result longer than ingest's line cap (8 MiB)
BRIEF_TARGET_S = 10.0  # Claude Code's SessionStart hook timeout (config.SESSION_START_TIMEOUT)
READ_FLOOR = "import sys\nn = 0\nfor line in open(sys.argv[1], 'rb'):\n    n += 1\nprint(n)\n"
PEAK = (
    "import resource, subprocess, sys\n"
    "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


def names(vault: Path, limit: int = 200) -> list[str]:
    out = []
    for path in sorted((vault / "patterns").glob("*.md")):
        out += [
            line[4:].strip() for line in path.read_text().splitlines() if line.startswith("### ")
        ]
    return out[:limit]


def transcript(path: Path, vault: Path, size_mb: int = TRANSCRIPT_MB, seed: int = 3) -> Path:
    rng = random.Random(seed)
    blocks = names(vault)
    notes = sorted(str(p) for p in (vault / "projects").glob("*/memory/*.md"))[:200]
    stamp = "2026-11-30T10:{:02d}:00.000Z"

    def line(kind: str, content: object, n: int) -> str:
        return json.dumps(
            {
                "type": kind,
                "sessionId": "bench-session",
                "timestamp": stamp.format(n % 60),
                "cwd": "/home/me/src/p001",
                "message": {"role": kind, "content": content},
            }
        )

    with path.open("w") as fh:
        n = 0
        while fh.tell() < size_mb * 1_000_000 - LONG_LINE:
            n += 1
            body = " ".join(rng.choice(("word", "cache", "retry", "[[x]]")) for _ in range(4000))
            fh.write(line("user", [{"type": "tool_result", "content": body}], n) + "\n")
            said = f"Per [[patterns/registry#{rng.choice(blocks)}|that]], done."
            read = {"type": "tool_use", "name": "Read", "input": {"file_path": rng.choice(notes)}}
            fh.write(line("assistant", [{"type": "text", "text": said}, read], n) + "\n")
            if n % 500 == 0:
                fh.write(json.dumps({"type": "progress-unknown", "n": n}) + "\n")
        fh.write(line("user", [{"type": "tool_result", "content": "y" * LONG_LINE}], 0) + "\n")
        fh.write('{"type": "assistant", "message": {"content": [{"type": "te')
    return path


def ingest(vault_size: int = 1000, rounds: int = 5) -> list[Row]:
    source = vault_for(vault_size)
    with tempfile.TemporaryDirectory(prefix="vk-learn-") as tmp:
        vault = Path(tmp) / "vault"
        shutil.copytree(source, vault, ignore=shutil.ignore_patterns("state"))
        path = transcript(Path(tmp) / "session.jsonl", vault)
        size = path.stat().st_size / 1_000_000
        argv = (*vaultkeeper_argv(), "--vault", str(vault), "ingest", str(path))
        first = check_output(Side("check", argv)).splitlines()
        print(f"  ingest prints: {first[-1]}", file=sys.stderr)
        got = interleave(
            [Side("ingest", argv), Side("floor", (PYTHON, "-c", READ_FLOOR, str(path)))], rounds
        )
        peak_kib = max(
            int(check_output(Side("peak", (PYTHON, "-c", PEAK, *argv))).strip()) for _ in range(3)
        )
    return [
        ratio(
            f"ingest of a {size:.0f} MB transcript / reading its lines",
            ("`ingest`", got["ingest"]),
            ("`for line in open(f, 'rb')`", got["floor"]),
        ),
        Row(
            f"peak memory of ingest, {size:.0f} MB transcript",
            "max `ru_maxrss` of 3 runs",
            "-",
            peak_kib / 1024,
            f"{peak_kib / 1024:.0f} MiB",
            100,
            "<= 100 MiB",
        ),
    ]


def brief(vault_size: int = 50000, rounds: int = 5) -> list[Row]:
    vault = vault_for(vault_size)
    base = (*vaultkeeper_argv(), "--vault", str(vault))
    check_output(Side("scan", (*base, "scan", "--force")))  # a saved report to brief from
    argv = (*base, "report", "--brief", "--cwd", "/home/me/src/p042")
    chars = len(check_output(Side("check", argv)))
    got = interleave([Side("brief", argv)], rounds)["brief"]
    return [
        Row(
            f"`report --brief` at {vault_size // 1000}k entries ({chars} characters)",
            f"median {ms(got.median)} of {rounds}",
            "Claude Code's 10 s SessionStart timeout",
            got.median,
            ms(got.median),
            BRIEF_TARGET_S,
            "<= 10 s (host bound)",
        )
    ]


if __name__ == "__main__":
    for row in ingest() + brief():
        cells = (row.figure, row.ours, row.versus, f"**{row.shown}**", row.verdict, row.cpu)
        print("| " + " | ".join(cells) + " |")
