"""The first scan of a vault with no derived store, against the read-all floor.

    python bench/firstscan.py VAULT [VAULT ...] [--rounds N] [--also SCRIPT]

Each round deletes ``state/vaultkeeper.db`` (and its WAL companions) before the scan, untimed,
so every timed ``scan --force`` builds the whole store from the files, as the first scan of a
vault does; the floor (bench/measure.py FLOOR) reads every ``.md`` file's bytes. Sides are
interleaved; medians of wall and CPU time are printed with the load average, because the
machine may be shared (CPU time moves less than wall time under load). ``--also SCRIPT``
interleaves a second install's console script (another checkout's ``vaultkeeper``), so a
before and an after are measured under the same load.
"""

from __future__ import annotations

import os
import sys
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import FLOOR, PYTHON, Side, interleave, vaultkeeper_argv  # noqa: E402


def drop_store(vault: Path) -> None:
    for name in ("vaultkeeper.db", "vaultkeeper.db-wal", "vaultkeeper.db-shm"):
        (vault / "state" / name).unlink(missing_ok=True)


def main(argv: list[str]) -> int:
    rounds, also = 5, None
    if "--rounds" in argv:
        at = argv.index("--rounds")
        rounds = int(argv[at + 1])
        argv = argv[:at] + argv[at + 2 :]
    if "--also" in argv:
        at = argv.index("--also")
        also = argv[at + 1]
        argv = argv[:at] + argv[at + 2 :]
    for name in argv:
        vault = Path(name)
        load_before = os.getloadavg()[0]
        scans = {"first": vaultkeeper_argv(), **({"also": (also,)} if also else {})}
        sides = [Side("floor", (PYTHON, "-c", FLOOR, str(vault)))]
        for label, command in scans.items():
            argv_ = (*command, "--vault", str(vault), "scan", "--force")
            sides.append(Side(label, argv_, ok=(0, 1), before=partial(drop_store, vault)))
        got = interleave(sides, rounds)
        load_after = os.getloadavg()[0]
        floor = got["floor"]
        print(
            f"{vault.name}: floor {floor.median * 1000:.0f} ms wall, "
            f"{floor.cpu_median * 1000:.0f} ms CPU; load {load_before:.1f} -> {load_after:.1f}"
            f" (medians of {rounds})"
        )
        for label, command in scans.items():
            first = got[label]
            print(
                f"  {label} ({command[0]}): first scan {first.median * 1000:.0f} ms wall, "
                f"{first.cpu_median * 1000:.0f} ms CPU; / floor: wall "
                f"{first.median / floor.median:.1f}x, "
                f"CPU {first.cpu_median / floor.cpu_median:.1f}x"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
