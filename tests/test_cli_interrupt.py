"""Ctrl-C in any command: one line, ``vaultkeeper: interrupted``, and exit 130.

A real SIGINT, sent by the process to itself from inside the command's work (a stand-in
for the function each command spends its time in), so the interrupt lands where a
person's Ctrl-C would: mid-command, after click has parsed the arguments. Before the
fix, every command but the scan's main phase printed click's "Aborted!" and exited 1,
the code for a refusal.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, SAMPLE_VAULT

# the module and attribute each command looks up when it runs, and its command line
CASES = {
    "lint": ("vaultkeeper.lint", "lint_vault", ["lint"]),
    "verify": ("vaultkeeper.verify", "verify_vault", ["verify"]),
    "index": ("vaultkeeper.index.build", "build_index", ["index"]),
    "index --check": ("vaultkeeper.index.build", "build_index", ["index", "--check"]),
    "status": ("vaultkeeper.status.health", "vault_status", ["status"]),
    "scan (late: printing)": ("vaultkeeper.report.candidates", "print_report", ["scan", "--force"]),
    "report": ("vaultkeeper.report.candidates", "shown_report", ["report"]),
}

_PROGRAM = """
import importlib, os, signal, sys
# as at a terminal: a run started in the background (nohup, `&`) inherits SIGINT ignored
signal.signal(signal.SIGINT, signal.default_int_handler)
module, name = sys.argv[1:3]
def interrupt(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGINT)  # a real Ctrl-C, delivered right here
    raise AssertionError("SIGINT did not interrupt")
setattr(importlib.import_module(module), name, interrupt)
sys.argv = ["vaultkeeper", *sys.argv[3:]]
from vaultkeeper.entry import main
main()
"""


@pytest.mark.parametrize("case", list(CASES))
def test_ctrl_c_is_one_line_and_exit_130(case: str, tmp_path: Path) -> None:
    module, name, argv = CASES[case]
    vault = tmp_path / "v"
    shutil.copytree(SAMPLE_VAULT, vault)
    if argv[0] in ("report", "scan"):  # a saved report to print; the first run's note said
        subprocess.run(
            [sys.executable, "-m", "vaultkeeper.cli", "--vault", str(vault), "scan"],
            capture_output=True, check=True, cwd=REPO,
        )  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", _PROGRAM, module, name, "--vault", str(vault), *argv],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, cwd=REPO, timeout=300,
    )  # fmt: skip
    assert done.returncode == 130, (done.stdout, done.stderr)
    assert done.stderr == "vaultkeeper: interrupted\n", done.stderr
    assert "Aborted" not in done.stdout + done.stderr


_STARTING = """
import os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)

class CtrlCWhileImporting:  # a Ctrl-C while Python imports click and the commands
    def find_spec(self, name, path=None, target=None):
        if name == "click":
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.argv = ["vaultkeeper", *sys.argv[1:]]
from vaultkeeper.entry import main
sys.meta_path.insert(0, CtrlCWhileImporting())
main()
"""


def test_ctrl_c_while_the_command_line_starts_is_one_line_and_exit_130(tmp_path: Path) -> None:
    # A person's Ctrl-C right after Enter lands while the console script imports click
    # and every command (tens of ms, more on a loaded machine): it printed Python's
    # traceback, not the one line every command gives.
    vault = tmp_path / "v"
    shutil.copytree(SAMPLE_VAULT, vault)
    done = subprocess.run(
        [sys.executable, "-c", _STARTING, "--vault", str(vault), "status"],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, cwd=REPO, timeout=300,
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (130, "vaultkeeper: interrupted\n")
