"""What verify's rows share: a row's ``Context`` and its ``(status, detail)`` words, the
result's records, the spec's step-4 fixture and the helpers that run a scan in a row's
own temporary folder, so that verify never changes the user's vault.
"""

from __future__ import annotations

import datetime as dt
import os
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from vaultkeeper import config

PASS, FAIL, SKIP = "PASS", "FAIL", "SKIP"
DAY = dt.timedelta(days=1)


@dataclass(frozen=True)
class Check:
    number: int
    name: str
    status: str  # PASS | FAIL | SKIP
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class VerifyResult:
    vault: str
    checks: tuple[Check, ...]

    @property
    def failed(self) -> bool:
        return any(c.status == FAIL for c in self.checks)


@dataclass(frozen=True)
class Context:
    vault: Path
    now: dt.datetime
    env: Mapping[str, str]
    tmp: Path  # this row's own empty temporary folder

    @property
    def now_ms(self) -> int:
        return int(self.now.timestamp() * 1000)


def fixture(ctx: Context) -> Path:
    """The spec's step-4 fixture: ### foo (count 3), ### bar (count 0, 100 days idle), and a
    memory file whose quoted holdout_until has passed."""
    from vaultkeeper.entries.init import init_vault

    vault = ctx.tmp / "fixture"
    init_vault(vault)
    today = ctx.now.date()
    seed(
        vault,
        [
            ("foo", "A proven lesson.", 3, today - DAY),
            ("bar", "Never reused.", 0, today - 100 * DAY),
        ],
        "baz.md",
        "---\nname: baz\ndescription: a held-out lesson\ntype: memory\nstatus: held_out\n"
        'label: inferred\nfalsification_condition: "a counter-example turns up"\n'
        f'holdout_until: "{(today - 10 * DAY).isoformat()}"\nrelations: {{}}\nsources: []\n'
        "provenance: []\n---\n\n# baz\n\nA lesson on hold.\n",
    )
    return vault


def seed(vault: Path, blocks: list[tuple[str, str, int, dt.date]], name: str, text: str) -> Path:
    """Registry blocks (name, text, count, last used) appended; memory file ``name`` of
    project p written, and its path."""
    with (vault / config.REGISTRY_FILE).open("a", encoding="utf-8") as fh:
        for block, about, count, day in blocks:
            fh.write(f"\n### {block}\n{about}\n\n{config.COUNT_LABEL} {count}\n")
            fh.write(f"{config.LAST_USED_LABEL} {day.isoformat()}\n")
    memory = vault / config.PROJECTS_DIR / "p" / config.MEMORY_SUBDIR / name
    memory.parent.mkdir(parents=True, exist_ok=True)
    memory.write_text(text, encoding="utf-8")
    return memory


def scan(vault: Path, now: dt.datetime, env: Mapping[str, str], force: bool = False) -> Any:
    from vaultkeeper.scan.classify import run_scan

    return run_scan(vault, now=now, env=env, force=force, pid=os.getpid())


def child_env(env: Mapping[str, str], **extra: str) -> dict[str, str]:
    """``env`` for a child Python that imports this very vaultkeeper."""
    path = os.pathsep.join(p for p in sys.path if p)
    return {**env, "PYTHONPATH": path, **extra}


def unforced(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k != config.ENV_FORCE}
