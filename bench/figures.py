"""The benchmark's figures: each one a group of interleaved sides, reduced to table rows."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import platform
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

from measure import (
    FLOOR,
    FLOOR_SCAN_FILES,
    FRONTMATTER,
    OBSIDIANTOOLS,
    PYTHON,
    Samples,
    Side,
    check_output,
    child_env,
    interleave,
    run_once,
    vaultkeeper_argv,
)

REPO = Path(__file__).resolve().parent.parent
HOOK_BUDGET_S = 1.5  # Claude Code gives all SessionEnd hooks 1.5 s together


@dataclass(frozen=True)
class Row:
    figure: str
    ours: str  # what was measured, e.g. "`scan --force` 212 ms"
    versus: str  # what it is compared with
    value: float  # the ratio (or the absolute figure, for memory and the hook)
    shown: str  # the value as printed
    target: float | None  # upper bound; None: for information
    target_shown: str = ""
    cpu: str = "-"  # the same ratio in CPU time (user + system) of the two processes

    @property
    def verdict(self) -> str:
        if self.target is None:
            return "(information)"
        if self.value <= self.target:
            return "met"
        return f"missed by {(self.value / self.target - 1) * 100:.0f}%"


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def ratio(
    figure: str,
    ours: tuple[str, Samples],
    versus: tuple[str, Samples],
    target: float | None = None,
    target_shown: str = "",
) -> Row:
    """A row comparing two sides' medians, in wall time (the figure) and in CPU time."""
    (a_label, a), (b_label, b) = ours, versus
    value = a.median / b.median
    return Row(
        figure,
        f"{a_label} {ms(a.median)}",
        f"{b_label} {ms(b.median)}",
        value,
        f"{value:.2f}x",
        target,
        target_shown,
        f"{a.cpu_median / b.cpu_median:.2f}x",
    )


def scan_side(label: str, vault: Path, *extra: str, env: dict[str, str] | None = None) -> Side:
    return Side(label, (*vaultkeeper_argv(), "--vault", str(vault), "scan", *extra), env)


def snippet(label: str, code: str, vault: Path) -> Side:
    return Side(label, (PYTHON, "-c", code, str(vault)))


def cold_scan(vault: Path, rounds: int) -> list[Row]:
    """A full scan (``--force``) after a session's edits (the hook's real workload: the
    scan cache from the scan before, one lesson re-worded and one count moved), against
    the floor and python-frontmatter; then, for information, the same scan when nothing
    changed and the first scan of all, which builds the cache (``--fresh``)."""
    from session import Session

    first = check_output(scan_side("check", vault, "--force", "--fresh")).splitlines()[0]
    print(f"  10k scan prints: {first}", file=sys.stderr)
    # python-frontmatter is the bench extra's, not a runtime dependency
    has_fm = importlib.util.find_spec("frontmatter") is not None
    session = Session(vault)
    try:
        sides = [
            replace(scan_side("scan", vault, "--force"), before=session),
            snippet("floor", FLOOR, vault),
            *([snippet("frontmatter", FRONTMATTER, vault)] if has_fm else []),
            snippet("scan-files", FLOOR_SCAN_FILES, vault),
        ]
        got = interleave(sides, rounds)
    finally:
        session.restore()
    # edits made in the last 2 s are read again by any scan: let them settle first
    run_once(scan_side("settle", vault, "--force"))
    time.sleep(2.5)
    run_once(scan_side("settle", vault, "--force"))
    quiet = interleave(
        [
            scan_side("unchanged", vault, "--force"),
            snippet("floor", FLOOR, vault),
            scan_side("fresh", vault, "--force", "--fresh"),
        ],
        rounds,
    )
    scan = ("`scan --force` after a session's edits", got["scan"])
    floor = ("read every .md file's bytes", got["floor"])
    fm_label = "cold scan / python-frontmatter loop, 10k entries"
    fm_row = (
        ratio(
            fm_label,
            scan,
            ("`frontmatter.load` every .md file", got["frontmatter"]),
            1.0,
            "<= 1.0x",
        )
        if has_fm
        else Row(
            fm_label,
            "skipped: python-frontmatter is not installed (`pip install '.[bench]'`)",
            "",
            0.0,
            "-",
            None,
        )
    )
    quiet_floor = ("read every .md file's bytes", quiet["floor"])
    return [
        ratio(
            "cold scan / read-every-file floor, 10k entries",
            scan,
            floor,
            2.0,
            "<= 2.0x (stretch 1.5x)",
        ),
        fm_row,
        ratio(
            "cold scan / reading only the files the scan reads, 10k entries",
            scan,
            ("read patterns/ and projects/*/memory/", got["scan-files"]),
        ),
        ratio(
            "cold scan, nothing changed since the last / floor, 10k entries",
            ("`scan --force`, nothing changed", quiet["unchanged"]),
            quiet_floor,
        ),
        ratio(
            "first scan, no scan cache (`--fresh`) / floor, 10k entries",
            ("`scan --force --fresh`", quiet["fresh"]),
            quiet_floor,
        ),
    ]


def noop(vault: Path, rounds: int) -> list[Row]:
    run_once(scan_side("prime", vault, "--force"))  # a fresh lastCompleted: next runs throttle
    sides = [scan_side("noop", vault), Side("bare", (PYTHON, "-c", "pass"))]
    got = interleave(sides, rounds)
    if check_output(sides[0]):
        raise RuntimeError("the throttled scan printed something; is the cooldown in force?")
    # The same pair without this host's .pth start-up hooks, which pre-import pathlib, re
    # and typing into every Python and so hide part of what the no-op imports elsewhere:
    # -S, then `import site` without its main() (the module a plain start loads).
    plain = child_env(PYTHONPATH=os.pathsep.join([str(REPO), *site_dirs()]))
    main = "import site, sys; from vaultkeeper.entry import main; sys.argv[0] = 'vk'; main()"
    bare_s = Side("bare-S", (PYTHON, "-S", "-c", "import site"), plain)
    noop_s = Side("noop-S", (PYTHON, "-S", "-c", main, "--vault", str(vault), "scan"), plain)
    plain_got = interleave([noop_s, bare_s], rounds)
    return [
        ratio(
            "throttled no-op / bare interpreter start",
            ("`scan` inside the cooldown", got["noop"]),
            ("`python -c pass`", got["bare"]),
            2.0,
            "<= 2.0x",
        ),
        ratio(
            "the same without this host's .pth start-up hooks",
            ("`python -S`, `import site`, the no-op", plain_got["noop-S"]),
            ("`python -S -c 'import site'`", plain_got["bare-S"]),
        ),
    ]


def site_dirs() -> list[str]:
    import site

    return [p for p in site.getsitepackages() if os.path.isdir(p)]


def scaling(vaults: dict[int, Path], rounds: int) -> list[Row]:
    """Growth and peak memory where both are largest: every file read and the scan
    cache built (``--fresh``, as the first scan of a vault)."""
    sides = [scan_side(f"scan-{n}", v, "--force", "--fresh") for n, v in vaults.items()]
    got = interleave(sides, rounds)
    big = got["scan-50000"]
    return [
        ratio(
            "50k / 10k cold scan time (`--fresh`, every file read)",
            ("50k:", big),
            ("10k:", got["scan-10000"]),
            5.5,
            "<= 5.5x",
        ),
        Row(
            "peak memory of a scan at 50k entries",
            f"max `ru_maxrss` of {len(big.maxrss_kib)} `--fresh` runs",
            "",
            big.peak_mib,
            f"{big.peak_mib:.0f} MiB",
            150.0,
            "<= 150 MiB",
        ),
        ratio(
            "10k / 1k cold scan time (`--fresh`)",
            ("10k:", got["scan-10000"]),
            ("1k:", got["scan-1000"]),
        ),
    ]


def lint(vault: Path, n: int, rounds: int) -> list[Row]:
    label = f"lint --select VK3 / obsidiantools graph build, {n // 1000}k entries"
    if importlib.util.find_spec("obsidiantools") is None:
        note = "skipped: obsidiantools is not installed (`pip install '.[bench]'`)"
        return [Row(label, note, "", 0.0, "-", None)]
    ours = Side(
        "lint", (*vaultkeeper_argv(), "--vault", str(vault), "lint", "--select", "VK3"), ok=(0, 1)
    )
    theirs = snippet("obsidiantools", OBSIDIANTOOLS, vault)
    print(f"  obsidiantools graph (nodes edges): {check_output(theirs).strip()}", file=sys.stderr)
    got = interleave([ours, theirs], rounds)
    return [
        ratio(
            label,
            ("`lint --select VK3`", got["lint"]),
            ("`Vault(...).connect()`", got["obsidiantools"]),
            0.5,
            "<= 0.5x",
        )
    ]


def hook(vault: Path, rounds: int) -> list[Row]:
    """hooks/session-end.sh as a host runs it; each run starts a forced full scan."""
    script = REPO / "hooks" / "session-end.sh"
    program = vaultkeeper_argv()
    if len(program) != 1:
        return [Row("session-end hook return time", "skipped: no console script", "", 0, "-", None)]
    env = child_env(
        PATH=f"{Path(PYTHON).parent}{os.pathsep}/usr/bin{os.pathsep}/bin", SELF_MAINTAIN_FORCE="1"
    )
    state = vault / "state" / "self-maintain.json"
    times = []
    for _ in range(rounds):
        began_ms = int(time.time() * 1000)
        seconds, _, _ = run_once(Side("hook", (str(script), str(vault), program[0]), env))
        times.append(seconds)
        wait_for_scan(state, began_ms)  # the next run must not race the background scan
        print(".", end="", flush=True, file=sys.stderr)
    print(file=sys.stderr)
    times.sort()
    median = times[len(times) // 2]
    return [
        Row(
            f"session-end hook return time, {vault_size(vault)} entries",
            f"median {ms(median)}, max {ms(times[-1])} of {rounds}",
            "Claude Code's 1.5 s for all SessionEnd hooks",
            median,
            ms(median),
            HOOK_BUDGET_S,
            "<= 1.5 s (host bound)",
        )
    ]


def wait_for_scan(state: Path, after_ms: int, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, ValueError):
            data = json.loads(state.read_text())
            if data["state"] == "idle" and data["lastCompleted"] >= after_ms:
                return
        time.sleep(0.05)
    raise RuntimeError(f"{state}: the hook's scan did not complete in {timeout} s")


def vault_size(vault: Path) -> str:
    n = int(vault.name.split("-")[1])
    return f"{n // 1000}k"


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = ""
    with contextlib.suppress(OSError, ValueError, IndexError):
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kib / 1024 / 1024:.0f} GiB RAM"
    return (
        f"{cpu}, {os.cpu_count()} cores{mem}; {platform.system()} {platform.release()}; "
        f"Python {platform.python_version()} ({sys.executable})"
    )


DUPLICATES = "possible duplicates"
DECAY = "decay (stale lessons, unused skills)"


def _phases(vault: Path, runs: int, *flags: str) -> dict[str, float]:
    """Median milliseconds per phase of ``runs`` fresh bench/phases.py processes."""
    import statistics
    import subprocess

    got: dict[str, list[float]] = {}
    for turn in range(runs):
        done = subprocess.run(
            [PYTHON, str(Path(__file__).with_name("phases.py")), str(vault), *flags]
            + (["--turn", str(turn)] if "--edit" in flags else []),
            capture_output=True, text=True, env=child_env(), check=True,
        )  # fmt: skip
        for name, value in json.loads(done.stdout.splitlines()[-1]).items():
            got.setdefault(name, []).append(value)
    return {name: statistics.median(values) for name, values in got.items()}


def upkeep(vault: Path, runs: int) -> list[Row]:
    """The upkeep passes inside a 50k `scan --force` (bench/phases.py, fresh processes),
    each against the rest of the same scan: after a session's edits (a lesson re-worded,
    a count moved: the hook's workload), after a registry block's first sentence changed,
    and in the first scan, with no scan cache."""
    rows: list[Row] = []
    cases = [
        ("after a session's edits", ("--edit", "lesson,count"), 0.25, "<= 0.25x"),
        ("after a block's description changed", ("--edit", "block"), None, ""),
        ("in the first scan (`--fresh`)", ("--fresh",), None, ""),
    ]
    run_once(scan_side("prime", vault, "--force"))
    time.sleep(2.5)  # the vault's files settle out of the scan cache's racy window
    run_once(scan_side("prime", vault, "--force"))
    for n, (case, flags, target, shown) in enumerate(cases):
        med = _phases(vault, runs, *flags)
        total = med["imports"] + med["in all, after the imports"]
        rest = total - med[DUPLICATES] - med[DECAY]
        where = f"the rest of that 50k `scan --force` {rest:.0f} ms (median of {runs})"
        dup = med[DUPLICATES] / rest
        rows.append(
            Row(
                f"duplicates pass {case} / the scan's own time, 50k entries",
                f"{DUPLICATES} {med[DUPLICATES]:.0f} ms", where,
                dup, f"{dup:.2f}x", target, shown,
            )
        )  # fmt: skip
        if n == 0:
            decay = med[DECAY] / rest
            rows.append(
                Row(
                    "decay pass / the scan's own time, 50k entries",
                    f"stale lessons and unused skills {med[DECAY]:.0f} ms", where,
                    decay, f"{decay:.2f}x", None,
                )
            )  # fmt: skip
    return rows
