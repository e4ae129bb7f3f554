"""`report --brief` without click (recall/startrun.py, entry.py): the session-start hook's
form prints the same bytes, notes, errors and exit codes as through click."""

from __future__ import annotations

import re
import shutil
import sqlite3
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
            elif prepare == "corrupt":  # the report's row in the derived store
                run(CLICK, ["--vault", str(root / "v"), "scan", "--force"], root, _env())
                with sqlite3.connect(root / "v" / config.STATE_DIR / config.DB_FILE) as conn:
                    conn.execute("UPDATE scan_report SET report = '{nope'")
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
    args = ["--vault", str(tmp_path / "bad" / "entry" / "v"), "report", "--brief"]
    _, out, err = run(CLICK, args, tmp_path, _env())
    assert err == "" and "SELF-MAINTAIN:" in out  # the bad row is derived again


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
    _, out, err = run(
        ENTRY, ["--vault", str(tmp_path / "copies" / "entry" / "v"), "report", "--brief"],
        tmp_path, _env(),
    )  # fmt: skip
    assert err == "" and f"--vault {tmp_path / 'copies' / 'entry' / 'v'} " in out


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


def _program(tmp_path: Path, calls: Path) -> Path:
    """A console script as pip writes one, except that an ``ingest`` it is asked for is
    only written down (the catch-up the hook's form starts)."""
    prog = tmp_path / "bin" / "vaultkeeper"
    prog.parent.mkdir(parents=True, exist_ok=True)
    prog.write_text(
        f"#!{sys.executable}\nimport sys\n"
        "if 'ingest' in sys.argv:\n"
        f"    open({str(calls)!r}, 'a').write(' '.join(sys.argv[1:]) + '\\n')\n"
        "    sys.exit(0)\n"
        "from vaultkeeper.entry import main\nmain()\n"
    )
    prog.chmod(0o755)
    return prog


def _hook(prog: Path, vault: Path, stdin: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(prog), "--vault", str(vault), "start-hook"],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=_env(),
        timeout=60,
    )


def test_the_hooks_form_reads_the_hosts_json_then_starts_the_catch_up(
    tmp_path: Path, vault: Path
) -> None:
    import json
    import time

    calls = tmp_path / "calls"
    prog = _program(tmp_path, calls)
    run(CLICK, ["--vault", str(vault), "scan", "--force"], tmp_path, _env())
    folder, transcript = vault / "projects" / "q", tmp_path / "session.jsonl"
    transcript.write_text("{}\n")
    payload = json.dumps(
        {"session_id": "s", "cwd": str(folder), "transcript_path": str(transcript)}
    )
    got = _hook(prog, vault, payload, tmp_path)
    brief = ["--vault", str(vault), "report", "--brief", "--cwd", str(folder)]
    same = _normal(run(CLICK, brief, tmp_path, _env())[1], tmp_path)  # the scan's age aside
    assert (got.returncode, _normal(got.stdout, tmp_path)) == (0, same)
    want = f"--vault {vault} ingest --missed-beside {transcript} --cwd {folder}"
    deadline = time.monotonic() + 60  # detached: it runs after the brief has returned
    while time.monotonic() < deadline and not (calls.exists() and want in calls.read_text()):
        time.sleep(0.05)
    assert calls.read_text().splitlines() == [want]
    here = run(CLICK, ["--vault", str(vault), "report", "--brief"], tmp_path, _env())[1]
    for stdin in ("", "not json", json.dumps({"cwd": 7}), json.dumps({"cwd": "a\nb"})):
        got = _hook(prog, vault, stdin, tmp_path)  # no folder given: the brief of here
        assert (got.returncode, _normal(got.stdout, tmp_path)) == (0, _normal(here, tmp_path))
    assert calls.read_text().splitlines() == [want]  # no transcript named: no catch-up
    deep = '{"cwd": "/x", "more": ' + "[" * 100_000 + "]" * 100_000 + "}"
    got = _hook(prog, vault, deep, tmp_path)  # past the parser's depth: still a brief
    assert (got.returncode, _normal(got.stdout, tmp_path)) == (0, _normal(here, tmp_path))
    assert "Traceback" not in got.stderr
