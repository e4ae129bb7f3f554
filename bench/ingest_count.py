"""``ingest`` that counts: the first ingest of a 50 MB transcript, its uses all new.

    python bench/ingest_count.py [VAULT_SIZE ...]   # default: 1000 10000
    python bench/ingest_count.py --before DIR 10000   # and DIR's vaultkeeper, interleaved

bench/learn.py times ingest re-reading a transcript it has read (nothing new to count);
this times the run that counts: the transcript cites 200 registry patterns in one
session, so each run raises 200 counters in the registry (the vault is restored from
its copy before each run, untimed). Issue 26 item 18: the registry was re-split for
every use recorded; it is now split once per registry file.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from figures import ms  # noqa: E402
from gen import vault_for  # noqa: E402
from learn import transcript  # noqa: E402
from measure import PYTHON, Side, check_output, interleave  # noqa: E402

RUN = "import sys; sys.path.insert(0, {root!r}); from vaultkeeper.entry import main; main()"


def program(root: Path) -> tuple[str, ...]:
    """The vaultkeeper package under ``root``, run as the console script runs it."""
    return (PYTHON, "-c", RUN.format(root=str(root)))


def counting(vault_size: int, roots: dict[str, Path], rounds: int = 5) -> list[str]:
    source = vault_for(vault_size)
    with tempfile.TemporaryDirectory(prefix="vk-count-") as tmp:
        pristine = Path(tmp) / "pristine"
        vault = Path(tmp) / "vault"
        shutil.copytree(source, pristine, ignore=shutil.ignore_patterns("state"))
        path = transcript(Path(tmp) / "session.jsonl", pristine)

        def restore() -> None:
            shutil.rmtree(vault, ignore_errors=True)
            shutil.copytree(pristine, vault)

        sides = []
        for label, root in roots.items():
            argv = (*program(root), "--vault", str(vault), "ingest", str(path))
            restore()
            said = check_output(Side("check", argv)).splitlines()
            counted = sum(1 for line in said if line.startswith("counted "))
            print(f"  {label}: {said[-1]}", file=sys.stderr)
            sides.append(Side(label, argv, before=restore))
        got = interleave(sides, rounds)
    return [
        f"| first ingest of a 50 MB transcript, {vault_size} entries, {counted} counters "
        f"raised | {label} | {ms(s.median)} | {ms(s.cpu_median)} |"
        for label, s in got.items()
    ]


if __name__ == "__main__":
    args = sys.argv[1:]
    roots = {"this code": HERE.parent}
    if args[:1] == ["--before"]:
        roots = {"before": Path(args[1]), **roots}
        args = args[2:]
    for size in [int(a) for a in args] or [1000, 10000]:
        print("\n".join(counting(size, roots)))
