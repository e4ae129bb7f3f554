"""``use`` and the ``apply`` subcommands at 50,000 entries: wall and CPU, two installs side by side.

    python bench/apply50k.py --before /tmp/cv/bin/vaultkeeper --after /tmp/cv2/bin/vaultkeeper
    python bench/apply50k.py ... --rounds 7 --only use,promote,index --n 50000

The bound (docs/benchmarks.md): ``apply`` / ``use`` on a 50,000-entry vault <= 500 ms,
the whole process, as a person at a terminal sees it. Each of these commands writes,
so every run gets its own copy of one prepared vault (the generated vault, its index
regenerated, scanned twice, 3 s apart, so the scan cache trusts every file); the copy
is made and removed outside the timing. A copy has new inodes, so no stat-keyed cache
of the master holds on it: the ``--warm`` installs (default: the after one) first run
``index`` on their copy (an up-to-date index: no index file is written), 2.1 s after the
copy, outside the timing, as the vault's previous command would have left the index's
rows in the derived store (state/vaultkeeper.db; ``index --check`` writes nothing).
Runs alternate before / after; each is a fresh process reaped with ``os.wait4``
(bench/measure.py's way): wall time, and the child's CPU time.

After the runs, each command's effect is compared between the two installs: every
file under patterns/ and skills/, the index files, the saved report (its
``updated_at`` aside: a clock, a queued ask's id aside: its time and chance) and the
command's output must be the same bytes, else the row says "DIFFERS".
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
EVIDENCE = "_index.md:1"


def prepared(n: int, work: Path, vk: str) -> Path:
    """The generated vault copied once and scanned (twice: files changed within 2 s are
    never trusted by the scan cache)."""
    import sys

    sys.path.insert(0, str(HERE))
    from gen import vault_for

    master = work / "master"
    shutil.copytree(vault_for(n), master, symlinks=True)
    # the generated index is not what `index` writes: else every apply rewrites it all
    subprocess.run([vk, "--vault", str(master), "index"], capture_output=True)
    for _ in range(2):
        subprocess.run([vk, "--vault", str(master), "scan", "--force"], capture_output=True)
        time.sleep(3)
    return master


def shown(vk: str, vault: Path) -> dict[str, object]:
    """What ``report --json`` shows, without what changes with the clock."""
    done = subprocess.run([vk, "--vault", str(vault), "report", "--json"], capture_output=True)
    report: dict[str, object] = json.loads(done.stdout)
    for key in ("updated_at", "age_seconds"):
        report.pop(key, None)
    return report


def commands(master: Path, vk: str) -> dict[str, list[str]]:
    """Each command with a target the last report offers it (as an agent would pick)."""
    report: dict[str, Any] = shown(vk, master)
    first = next(
        line[4:]
        for line in (master / "patterns" / "registry-1.md").read_text().splitlines()
        if line.startswith("### ")
    )
    memory = sorted((master / "projects" / "p001" / "memory").glob("*.md"))
    active = [p for p in memory if "status: active" in p.read_text()]
    old, new = (str(p.relative_to(master)) for p in active[:2])
    archived = next(p for p in memory if "status: archived" in p.read_text())
    pair = next(p for p in report["duplicates"] if p["kind"] == "block")
    return {
        "use": ["use", first],
        "promote": ["apply", "promote", report["promote"][0]["name"], "--evidence", EVIDENCE],
        "prune": ["apply", "prune", report["prune"][0]["name"]],
        "skip": ["apply", "skip", report["prune"][1]["name"], "--reason", "later"],
        "merge": ["apply", "merge", pair["b"]["name"], pair["a"]["name"], "--evidence", EVIDENCE],
        "revalidate": [
            "apply",
            "revalidate",
            report["held_out"][0]["path"],
            "--pass",
            "--evidence",
            EVIDENCE,
        ],
        "supersede": ["apply", "supersede", old, "--by", new, "--evidence", EVIDENCE],
        "index": ["index"],
        "reactivate": [
            "apply",
            "reactivate",
            str(archived.relative_to(master)),
            "--evidence",
            EVIDENCE,
        ],
    }


def run(
    vk: str, master: Path, args: list[str], work: Path, warm: bool = False
) -> tuple[float, float, str]:
    """One timed run on a fresh copy: wall s, CPU s, and a digest of what it did."""
    copy = work / "run"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(master, copy, symlinks=True)
    if warm:  # a file changed within 2 s is never trusted by its stat key: the copy's
        time.sleep(2.1)
        subprocess.run([vk, "--vault", str(copy), "index"], capture_output=True)
    with open(work / "out", "wb") as out_fh, open(work / "err", "wb") as err_fh:
        start = time.perf_counter()
        child = subprocess.Popen(
            [vk, "--vault", str(copy), *args], stdout=out_fh, stderr=err_fh, cwd=copy
        )
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    cpu = usage.ru_utime + usage.ru_stime
    out, err = (work / "out").read_bytes(), (work / "err").read_bytes()
    out += f"\nexit {child.returncode}".encode()
    digest = _effect(vk, copy, out + b"\0" + err, str(copy))
    shutil.rmtree(copy, ignore_errors=True)
    return wall, cpu, digest


ASK_ID = re.compile(rb"\d{8}-\d{6}-[0-9a-f]{6}")  # a queued ask's id: its time, and chance


def _effect(vk: str, copy: Path, output: bytes, where: str) -> str:
    digest = hashlib.sha256(ASK_ID.sub(b"ID", output.replace(where.encode(), b"VAULT")))
    for top in ("patterns", "skills"):
        for path in sorted((copy / top).rglob("*")) if (copy / top).is_dir() else []:
            if path.is_file():
                digest.update(str(path.relative_to(copy)).encode() + b"\0" + path.read_bytes())
    for path in sorted(copy.glob("_index*.md")):  # the index and its sub-indexes too
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    report = shown(vk, copy)
    digest.update(ASK_ID.sub(b"ID", json.dumps(report, sort_keys=True).encode()))
    return digest.hexdigest()[:12]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="vaultkeeper of the install before")
    parser.add_argument("--after", required=True, help="vaultkeeper of the install after")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--n", type=int, default=50000)
    parser.add_argument("--only", default="")
    parser.add_argument("--warm", default="after", help="before, after, both or none")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="apply50k-") as tmp:
        work = Path(tmp)
        os.environ["HOME"] = str(work / "home")  # a promote writes a skill: never the real home
        master = prepared(args.n, work, args.after)
        todo = commands(master, args.after)
        if args.only:
            todo = {k: v for k, v in todo.items() if k in args.only.split(",")}
        print(f"load average before: {os.getloadavg()}")
        print("| command | before wall ms | before CPU ms | after wall ms | after CPU ms | same |")
        print("| --- | --- | --- | --- | --- | --- |")
        for name, argv in todo.items():
            got: dict[str, list[tuple[float, float, str]]] = {"before": [], "after": []}
            for _ in range(args.rounds):
                for side in ("before", "after"):
                    warm = args.warm in (side, "both")
                    got[side].append(run(getattr(args, side), master, argv, work, warm))
            med = {
                side: (
                    statistics.median(r[0] for r in rows) * 1000,
                    statistics.median(r[1] for r in rows) * 1000,
                )
                for side, rows in got.items()
            }
            digests = {r[2] for rows in got.values() for r in rows}
            same = "yes" if len(digests) == 1 else "DIFFERS"
            print(
                f"| {name} "
                f"| {med['before'][0]:.0f} | {med['before'][1]:.0f} "
                f"| {med['after'][0]:.0f} | {med['after'][1]:.0f} | {same} |",
                flush=True,
            )
        print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
