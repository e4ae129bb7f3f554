"""A stand-in for the standard library stays only on the two paths a person waits for.

Issue 35: code written in place of what the standard library or a declared dependency
does, only to keep an import off a path, is kept on the throttled no-op (``scan``
inside the cooldown) and the recall hook (``recall-hook``) alone, where
docs/benchmarks.md ("Stand-ins") gives the figure that justifies it. The commonest one,
``TYPE_CHECKING = False`` in place of ``from typing import TYPE_CHECKING`` (with its
named tuples twinned for mypy and for the run), is checked here against what those two
runs really load: a module that carries it and is loaded by neither has no reason to.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import recall_on
from vaultkeeper import config

PACKAGE = Path(__file__).resolve().parent.parent / "vaultkeeper"

# Prints the vaultkeeper modules one console-script run loaded, last on stderr.
PROBE = (
    "import sys; sys.argv[0] = 'vaultkeeper'\n"
    "from vaultkeeper.entry import main\n"
    "try:\n    main()\nexcept SystemExit:\n    pass\n"
    "sys.stdout.flush()\n"
    "print('\\nLOADED', *sorted(m for m in sys.modules if m.startswith('vaultkeeper')),"
    " file=sys.stderr)\n"
)

# Modules of vaultkeeper/scan/ (another branch's this round) that carry the stand-in on
# neither path: listed so the lead sees them, and so a new one elsewhere still fails.
SCAN_OWNED = {
    "vaultkeeper.scan.cache",
    "vaultkeeper.scan.statefile",
    "vaultkeeper.scan.memory",
}


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != config.ENV_VAULT}


def loaded(vault: Path, *args: str, stdin: str = "") -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "--vault", str(vault), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=_env(),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    last = done.stderr.splitlines()[-1].split()
    assert last[0] == "LOADED", done.stderr
    return set(last[1:])


def twinned() -> set[str]:
    """The modules that define ``TYPE_CHECKING = False`` themselves."""
    out = set()
    for path in PACKAGE.rglob("*.py"):
        if "\nTYPE_CHECKING = False\n" in path.read_text(encoding="utf-8"):
            parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
            out.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return out


def test_the_type_checking_stand_in_sits_only_on_the_no_op_or_the_recall_hook(
    sample: Path,
) -> None:
    recall_on(sample)
    full = loaded(sample, "scan", "--force")  # builds the store; the cooldown starts
    no_op = loaded(sample, "scan")
    prompt = {"prompt": "how are the notes linked", "session_id": "s", "cwd": str(sample)}
    recall = loaded(sample, "recall-hook", "claude", stdin=json.dumps(prompt))
    # the runs are what they claim: a scan loads far more than the no-op; the hook its own
    assert {"vaultkeeper.store.plainjson", "vaultkeeper.scan.statefile"} <= no_op
    assert "vaultkeeper.report.candidates" in full - no_op
    assert "vaultkeeper.recall.moment" in recall - no_op
    assert twinned() - no_op - recall - SCAN_OWNED == set()


def test_the_removed_stand_ins_stay_removed() -> None:
    """store/lazyre.py (regexes compiled on first use) went: its users were on neither path."""
    assert not (PACKAGE / "store" / "lazyre.py").exists()
    users = [p for p in PACKAGE.rglob("*.py") if "lazyre" in p.read_text(encoding="utf-8")]
    assert users == []
