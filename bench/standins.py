"""What each hand-written stand-in for the standard library (or a declared dependency) buys.

    python bench/standins.py [--rounds 21] [--only noop,scan,brief,use]

A stand-in is kept only where removing it pushes a figure a person notices past its
bound (docs/benchmarks.md, "Stand-ins"). For each stand-in this copies the installed
vaultkeeper package (a clean install: bench/install.py), undoes that one stand-in in the
copy -- the module goes back to the standard library or the dependency, or, where the
rewrite is larger than the measurement needs, the copy imports what the rewrite would
import -- and runs every copy side by side (bench/measure.py: fresh processes,
interleaved), each through ``PYTHONPATH``. Printed: p50 and p95 wall time per command
and copy, in ms.

Commands, with their bounds: the throttled no-op (``scan`` inside the cooldown, 10k
entries; a terminal command, <= 300 ms, and the benchmark's <= 2.0x a bare start);
``scan --force`` after a session's edits at 10k (<= 300 ms); ``report --brief --cwd``
at 10k (<= 150 ms); ``use NAME`` at 50k (<= 500 ms).
"""

from __future__ import annotations

import argparse
import compileall
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import install  # noqa: E402
from gen import vault_for  # noqa: E402
from measure import PYTHON, Side, child_env, interleave, run_once  # noqa: E402
from session import Session  # noqa: E402

# name -> [(module path inside the package, text found, text put instead)]
UNDO: dict[str, list[tuple[str, str, str]]] = {
    "plainjson -> json": [
        ("scan/statefile.py", "data = plainjson.loads(raw)", "import json; data = json.loads(raw)"),
    ],
    "pathlib at store/vault.py's top": [
        ("store/vault.py", "\nimport os\n", "\nimport os\nimport pathlib  # noqa\n"),
    ],
    "namedtuples -> dataclasses": [
        ("scan/statefile.py", "\nimport os\n", "\nimport os\nimport dataclasses  # noqa\n"),
    ],
    "TYPE_CHECKING = False -> typing": [
        ("scan/statefile.py", "\nimport os\n", "\nimport os\nimport typing  # noqa\n"),
    ],
    "clock without datetime": [
        (
            "clock.py",
            "\nTYPE_CHECKING = False\n",
            "\nimport datetime  # noqa\nTYPE_CHECKING = False\n",
        ),
    ],
    "output.echo -> click.echo": [
        (
            "output.py",
            "    stream = sys.stderr if err else sys.stdout\n",
            "    import click  # noqa\n    stream = sys.stderr if err else sys.stdout\n",
        ),
    ],
    "quickmeta -> YAML (scan)": [
        ("scan/memory.py", "front = quickmeta.read_front(text, FACTS)", "front = None"),
        ("scan/memory.py", "quick = quickmeta.read_keys(yaml_text, FACTS)", "quick = None"),
    ],
}

# sys.path[0] is the current folder: a checkout there would be imported instead of the copy
ENTRY = (
    "import sys; sys.path.pop(0); from vaultkeeper.entry import main; "
    "sys.argv[0] = 'vaultkeeper'; main()"
)


def copies(work: Path) -> dict[str, Path]:
    """The installed package copied once as it is and once per stand-in undone."""
    import vaultkeeper

    source = Path(vaultkeeper.__file__).parent
    out = {}
    for name in ["as installed", *UNDO]:
        root = work / str(len(out))
        shutil.copytree(source, root / "vaultkeeper", ignore=shutil.ignore_patterns("__pycache__"))
        for rel, old, new in UNDO.get(name, []):
            path = root / "vaultkeeper" / rel
            text = path.read_text(encoding="utf-8")
            if old not in text:
                raise SystemExit(f"{name}: {rel} no longer holds {old!r}; update bench/standins.py")
            path.write_text(text.replace(old, new, 1), encoding="utf-8")
        compileall.compile_dir(root, quiet=1)
        where = subprocess.run(
            [
                PYTHON,
                "-c",
                "import sys; sys.path.pop(0); import vaultkeeper as v; print(v.__file__)",
            ],
            env=child_env(PYTHONPATH=str(root)),
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        if not where.startswith(str(root)):  # the copy, not the install or a checkout
            raise SystemExit(f"{name}: the child imports {where}, not the copy in {root}")
        out[name] = root
    return out


def sides(roots: dict[str, Path], *args: str) -> list[Side]:
    return [
        Side(name, (PYTHON, "-c", ENTRY, *args), child_env(PYTHONPATH=str(root)))
        for name, root in roots.items()
    ]


def p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] * 1000


def show(title: str, got: dict[str, object]) -> None:
    print(f"\n{title}")
    print("| copy | p50 ms | p95 ms | CPU p50 ms |")
    print("| --- | --- | --- | --- |")
    for name, samples in got.items():
        wall, cpu = samples.seconds, samples.cpu  # type: ignore[attr-defined]
        print(f"| {name} | {p(wall, 50):.0f} | {p(wall, 95):.0f} | {p(cpu, 50):.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--only", default="noop,scan,brief,use")
    args = parser.parse_args()
    found = install.problems(HERE.parent)
    if found:
        raise SystemExit("; ".join(found))
    groups = set(args.only.split(","))
    with tempfile.TemporaryDirectory() as tmp:
        roots = copies(Path(tmp))
        v10 = vault_for(10000)
        if "noop" in groups:
            run_once(Side("prime", (PYTHON, "-c", ENTRY, "--vault", str(v10), "scan", "--force")))
            show(
                "throttled no-op, 10k",
                interleave(sides(roots, "--vault", str(v10), "scan"), args.rounds),
            )
        if "scan" in groups:
            edits = Session(v10)
            try:
                got = interleave(
                    [
                        Side(s.label, s.argv, s.env, before=edits)
                        for s in sides(roots, "--vault", str(v10), "scan", "--force")
                    ],
                    args.rounds,
                )
            finally:
                edits.restore()
            show("scan --force after a session's edits, 10k", got)
        if "brief" in groups:
            cwd = str(v10 / "projects" / "p00")
            got = interleave(
                sides(roots, "--vault", str(v10), "report", "--brief", "--cwd", cwd), args.rounds
            )
            show("report --brief --cwd, 10k", got)
        if "use" in groups:
            v50 = vault_for(50000)
            name = _a_block(v50)
            show(
                f"use {name}, 50k",
                interleave(sides(roots, "--vault", str(v50), "use", name), args.rounds),
            )


def _a_block(vault: Path) -> str:
    for line in (vault / "patterns").glob("*.md").__next__().read_text().splitlines():
        if line.startswith("### "):
            return line[4:]
    raise SystemExit(f"{vault}: no block")


if __name__ == "__main__":
    main()
