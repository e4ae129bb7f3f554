"""`report --brief` without click (recall/startrun.py, entry.py): the session-start hook's
form prints the same bytes, notes, errors and exit codes as through click."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import MakeVault
from tests.test_entry import CLICK, ENTRY, TODAY, _env, run
from tests.test_scan_classify import block, memory, spec_files
from vaultkeeper import config
from vaultkeeper.entry import brief_args


def _normal(text: str, root: Path) -> str:
    text = text.replace(str(root), "ROOT")
    return re.sub(r"\d{4}-\d\d-\d\dT[\d:]+Z \([^)]*\)", "WHEN", text)


def both(tmp_path: Path, vault: Path | None, args: list[str], prepare: str = "") -> None:
    seen = []
    for name, code in (("entry", ENTRY), ("click", CLICK)):
        root = tmp_path / name
        root.mkdir(parents=True)
        if vault is not None:
            shutil.copytree(vault, root / "v")
            if prepare == "scan":
                run(CLICK, ["--vault", str(root / "v"), "scan", "--force"], root, _env())
            elif prepare == "corrupt":
                (root / "v" / config.STATE_DIR).mkdir(exist_ok=True)
                (root / "v" / config.STATE_DIR / config.LAST_REPORT_FILE).write_text("{nope")
        given = [a.replace("VAULT", str(root / "v")) for a in args]
        got, out, err = run(code, given, root, _env())
        seen.append((got, _normal(out, root), _normal(err, root)))
    assert seen[0] == seen[1]
    assert "Traceback" not in seen[0][2]


@pytest.fixture
def vault(make_vault: MakeVault) -> Path:
    files: dict[str, str | bytes] = dict(spec_files(TODAY))
    files["patterns/more.md"] = block("\x1b[31mred\x1b[0m", "2", TODAY) + block("foo", "2", TODAY)
    files["projects/q/memory/caf\u00e9.md"] = memory("caf\u00e9 \u2014 lesson", '"2020-01-01"')
    return make_vault(files)


@pytest.mark.parametrize(
    "args",
    [
        ["--vault", "VAULT", "report", "--brief"],
        ["--vault=VAULT", "report", "--brief"],
        ["--vault", "VAULT", "report", "--brief", "--cwd", "VAULT/projects/q"],
        ["--vault", "VAULT", "report", "--brief", "--cwd", "/nowhere/q"],
    ],
)
def test_the_brief_is_the_same_both_ways(tmp_path: Path, vault: Path, args: list[str]) -> None:
    both(tmp_path, vault, args, prepare="scan")


def test_no_report_yet_and_a_corrupt_one_are_the_same(tmp_path: Path, vault: Path) -> None:
    both(tmp_path / "none", vault, ["--vault", "VAULT", "report", "--brief"])
    both(tmp_path / "bad", vault, ["--vault", "VAULT", "report", "--brief"], prepare="corrupt")


def test_a_folder_that_is_no_vault_goes_to_click(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    both(tmp_path, None, ["--vault", str(tmp_path / "plain"), "report", "--brief"])
    both(tmp_path / "2", None, ["--vault", str(tmp_path / "gone"), "report", "--brief"])


def test_a_copied_vault_says_so_on_both_ways(tmp_path: Path, vault: Path) -> None:
    scanned = tmp_path / "orig"
    shutil.copytree(vault, scanned)
    subprocess.run(
        [sys.executable, "-m", "vaultkeeper", "--vault", str(scanned), "scan", "--force"],
        capture_output=True,
        env=_env(),
    )
    both(tmp_path / "copies", scanned, ["--vault", "VAULT", "report", "--brief"])
    _, _, err = run(
        ENTRY, ["--vault", str(tmp_path / "copies" / "entry" / "v"), "report", "--brief"],
        tmp_path, _env(),
    )  # fmt: skip
    assert "made for the vault at" in err


def test_brief_args_takes_only_the_hooks_forms() -> None:
    assert brief_args(["--vault", "V", "report", "--brief"]) == ("V", None)
    assert brief_args(["--vault=V", "report", "--brief", "--cwd", "D"]) == ("V", "D")
    assert brief_args(["report", "--brief"]) == (None, None)
    for other in (
        ["report"],
        ["report", "--json"],
        ["report", "--brief", "--json"],
        ["report", "--brief", "--cwd"],
        ["report", "--brief", "--cwd", ""],
        ["report", "--brief", "--cwd", "--help"],
        ["report", "--cwd", "D", "--brief"],
        ["report", "--brief", "--help"],
        ["--vault", "V", "scan"],
    ):
        assert brief_args(other) is None, other
