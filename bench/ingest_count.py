"""``ingest`` that counts: the first ingest of a 50 MB transcript, its uses all new.

    python bench/ingest_count.py [VAULT_SIZE ...]   # default: 1000 10000

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
from measure import Side, check_output, interleave, vaultkeeper_argv  # noqa: E402


def counting(vault_size: int, rounds: int = 5) -> tuple[str, float, float, str]:
    source = vault_for(vault_size)
    with tempfile.TemporaryDirectory(prefix="vk-count-") as tmp:
        pristine = Path(tmp) / "pristine"
        vault = Path(tmp) / "vault"
        shutil.copytree(source, pristine, ignore=shutil.ignore_patterns("state"))
        path = transcript(Path(tmp) / "session.jsonl", pristine)

        def restore() -> None:
            shutil.rmtree(vault, ignore_errors=True)
            shutil.copytree(pristine, vault)

        argv = (*vaultkeeper_argv(), "--vault", str(vault), "ingest", str(path))
        restore()
        said = check_output(Side("check", argv)).splitlines()
        counted = sum(1 for line in said if line.startswith("counted "))
        got = interleave([Side("ingest", argv, before=restore)], rounds)["ingest"]
    return f"{vault_size} entries, {counted} counters raised", got.median, got.cpu_median, said[-1]


if __name__ == "__main__":
    for size in [int(a) for a in sys.argv[1:]] or [1000, 10000]:
        what, wall, cpu, last = counting(size)
        print(f"| first ingest of a 50 MB transcript, {what} | {ms(wall)} | {ms(cpu)} CPU |")
        print(f"  ({last})", file=sys.stderr)
