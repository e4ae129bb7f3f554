"""The anchor check's cost: 1,000 anchored lessons over a 10,000-file repository.

    python bench/anchors.py [--files 10000] [--lessons 1000] [--rounds 5]

Builds a git repository of FILES Python files (one commit) and a vault whose project is
tied to it, LESSONS active lessons each anchored to a definition in its own file, then
times ``check_vault`` cold (no derived store, state/vaultkeeper.db) and unchanged (the
rows the cold run saved: load, one stat per entry and per anchored file, save). Prints the
figures as the rows of docs/benchmarks.md's "Code anchors" section.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vaultkeeper.anchors import check, repo  # noqa: E402
from vaultkeeper.anchors import vault as anchors_vault  # noqa: E402
from vaultkeeper.anchors.format import item_yaml, parse_at  # noqa: E402


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True)


def build(root: Path, files: int, lessons: int) -> Path:
    top = root / "repo"
    for n in range(files):
        path = top / f"pkg{n // 100:03d}" / f"mod{n:05d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f'"""Module {n}."""\n\nLIMIT_{n} = {n}\n\n\ndef fn_{n}(x):\n    return x + {n}\n\n\n'
            f"class C{n}:\n    def method(self):\n        return {n}\n",
            encoding="utf-8",
        )
    git(top, "init", "-q")
    git(top, "add", "-A")
    git(top, "-c", "user.name=b", "-c", "user.email=b@b.invalid", "commit", "-qm", "first")
    vault = root / "vault"
    memory = vault / "projects" / "app" / "memory"
    memory.mkdir(parents=True)
    (vault / "state").mkdir()
    (vault / "_index.md").write_text("# Index\n", encoding="utf-8")
    repo.tie(vault, "app", str(top))
    step = max(1, files // lessons)
    for k in range(lessons):
        n = k * step
        at = f"pkg{n // 100:03d}/mod{n:05d}.py::fn_{n}"
        digest, commit = check.record(str(top), parse_at(at))
        (memory / f"lesson-{k:04d}.md").write_text(
            f"---\nname: lesson-{k:04d}\ndescription: fn_{n} adds {n}\ntype: memory\n"
            f"status: active\nlabel: fact\nanchors:\n{item_yaml(at, digest, commit)}\n---\n\n"
            "A lesson.\n",
            encoding="utf-8",
        )
    return vault


def run(vault: Path) -> float:
    started = time.perf_counter()
    cache = anchors_vault.load_cache(vault)
    found = anchors_vault.check_vault(vault, cache)
    anchors_vault.save_cache(vault, cache)
    assert found == [], found  # nothing moved: nothing to report
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--lessons", type=int, default=1_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        vault = build(Path(tmp), args.files, args.lessons)
        cold = []
        for _ in range(args.rounds):
            for path in (vault / "state").glob("vaultkeeper.db*"):
                os.unlink(path)
            cold.append(run(vault))
        warm = [run(vault) for _ in range(args.rounds)]
    print("| figure | result | target | verdict |\n| --- | --- | --- | --- |")
    print(
        f"| anchor check, cold (no cache), {args.lessons} lessons over {args.files} files | "
        f"**{statistics.median(cold):.0f} ms** median, {max(cold):.0f} ms worst | - | "
        "(information) |"
    )
    verdict = "met" if statistics.median(warm) < 50 else "not met"
    print(
        f"| anchor check, unchanged since the last scan | **{statistics.median(warm):.1f} ms** "
        f"median, {max(warm):.1f} ms worst | < 50 ms | {verdict} |"
    )
    print(f"- load average (1 minute): {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
