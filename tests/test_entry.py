"""The click-free console entry gives exactly what the click CLI gives, byte for byte.

Each case runs once through ``vaultkeeper.entry.main`` (the console script) and once
through ``vaultkeeper.cli.main`` (click), on two copies of the same vault, as fresh
processes, and compares exit codes, stdout, stderr and what ends up in ``state/``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import MakeVault
from tests.test_scan_classify import block, memory, spec_files
from vaultkeeper import config
from vaultkeeper.entry import ScanArgs, parse

TODAY = dt.datetime.now(dt.timezone.utc).date()
ENTRY = "import sys; sys.argv[0] = 'vaultkeeper'; from vaultkeeper.entry import main; main()"
CLICK = "import sys; sys.argv[0] = 'vaultkeeper'; from vaultkeeper.cli import main; main()"


def run(code: str, args: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True
    )
    return done.returncode, done.stdout, done.stderr


def _env(**extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("SELF_MAINTAIN_") and k != config.ENV_VAULT
    }
    return {**env, **extra}


def normal(text: str, root: Path) -> str:
    """Run-specific parts out: the vault's folder, times, durations and pids."""
    text = text.replace(str(root), "ROOT")
    text = re.sub(r'"(generated_at|lastCompleted|lastTriggered)": ("[^"]*"|\d+)', r'"\1": T', text)
    text = re.sub(r'"(duration_ms|durationMs|pid)": \d+', r'"\1": N', text)
    text = re.sub(r'\[("[^"]*"), "[0-9T:-]+Z", \d+, ', r"[\1, T, N, ", text)  # a report row's
    text = re.sub(r"\d+ s ago", "N s ago", text)
    text = re.sub(r"\d+ s of cooldown", "N s of cooldown", text)  # a second may pass between
    text = re.sub(r'"(id|base)":"[0-9a-f]+-[0-9a-f]+"', r'"\1":I', text)  # the scan cache's
    head, crash, tail = text.partition("Traceback (most recent call last):\n")
    # both paths may crash alike (a latin-1 terminal and an em dash): the frames differ
    return head + crash + tail.strip().splitlines()[-1] if crash else text


def state_of(root: Path) -> dict[str, str]:
    folder = root / "v" / config.STATE_DIR
    if not folder.is_dir():
        return {}
    # the database is compared by its rows less their stat keys (which hold inodes)
    skip = (config.DB_FILE + "-wal", config.DB_FILE + "-shm")  # SQLite's, read with it
    readers = {config.DB_FILE: lambda p: normal(_rows(p), root)}
    return {
        p.name: readers[p.name](p) if p.name in readers else normal(p.read_text(), root)
        for p in sorted(folder.iterdir())
        if p.is_file() and p.name not in skip
    }


def _rows(path: Path) -> str:
    """The derived store's rows, less their stat keys (which hold inodes)."""
    conn = sqlite3.connect(path)
    try:
        tables = [
            r[0]
            for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
            if not r[0].startswith("search_text")  # the full-text index's own b-trees
        ]
        out = []
        for table in sorted(tables):
            cursor = conn.execute(f'SELECT * FROM "{table}"')
            run = ("key", "started", "inputs", "racy", "basis")  # inodes, this run's time, paths
            keep = [i for i, d in enumerate(cursor.description) if d[0] not in run]
            rows = sorted(repr([row[i] for i in keep]) for row in cursor)
            out.append(f"{table}: {rows}")
        return "\n".join(out)
    finally:
        conn.close()


def _settle(folder: Path) -> None:
    """Date every copied file an hour back: a file changed within the last two seconds is
    read more closely (its digest kept), and on a loaded machine one copy may be past that
    window and the other not; the two runs must differ only in how they were started."""
    past = time.time() - 3600
    for path in [folder, *folder.rglob("*")]:
        os.utime(path, (past, past), follow_symlinks=False)


def both(
    tmp_path: Path,
    vault: Path | None,
    args: list[str],
    *,
    env: dict[str, str] | None = None,
    cwd: str = "",
    before: list[list[str]] | None = None,
) -> None:
    """Run ``args`` both ways on copies of ``vault`` and assert every observable is equal."""
    seen = []
    for name, code in (("entry", ENTRY), ("click", CLICK)):
        root = tmp_path / name
        root.mkdir(parents=True)
        if vault is not None:
            shutil.copytree(vault, root / "v")
            _settle(root / "v")
        given = [a.replace("VAULT", str(root / "v")) for a in args]
        run_env = {k: v.replace("VAULT", str(root / "v")) for k, v in (env or _env()).items()}
        for earlier in before or []:  # e.g. a completed scan, so the next one is throttled
            run(code, [a.replace("VAULT", str(root / "v")) for a in earlier], root, run_env)
        code_, out, err = run(code, given, root / cwd, run_env)
        seen.append((code_, normal(out, root), normal(err, root), state_of(root)))
    assert seen[0] == seen[1]


@pytest.fixture
def vault(make_vault: MakeVault) -> Path:
    files: dict[str, str | bytes] = dict(spec_files(TODAY))
    files["patterns/more.md"] = block("\x1b[31mred\x1b[0m", "2", TODAY) + block("foo", "2", TODAY)
    files["projects/q/memory/caf\u00e9.md"] = memory("caf\u00e9 \u2014 lesson", '"2020-01-01"')
    return make_vault(files)


@pytest.mark.parametrize(
    "args",
    [
        ["--vault", "VAULT", "scan", "--force"],
        ["--vault=VAULT", "scan", "--json", "--force"],
        ["--vault", "VAULT", "scan", "--force", "--strict"],
        ["--vault", "VAULT", "scan", "--strict", "--json", "--force"],
        ["--vault", "VAULT", "scan"],  # no state yet: a full scan
    ],
)
def test_scans_print_the_same(tmp_path: Path, vault: Path, args: list[str]) -> None:
    both(tmp_path, vault, args)


def test_throttled_no_op_is_the_same(tmp_path: Path, vault: Path) -> None:
    scan = ["--vault", "VAULT", "scan"]
    both(tmp_path, vault, scan, before=[scan])
    both(tmp_path / "json", vault, [*scan, "--json"], before=[scan])


def test_environment_forms(tmp_path: Path, vault: Path) -> None:
    both(tmp_path / "a", vault, ["scan"], env=_env(VAULTKEEPER_VAULT="VAULT"))
    both(tmp_path / "b", vault, ["scan"], cwd="v/projects")  # found upwards from here
    both(tmp_path / "b2", vault, ["--vault", "v/projects/..", "scan"])  # relative, with ..
    both(tmp_path / "b3", vault, ["--vault=./v/", "scan"])
    both(tmp_path / "b4", vault, ["scan"], env=_env(VAULTKEEPER_VAULT="v//"))
    # "now" from clock.now() (a moved date) instead of epoch nanoseconds, and a bad day
    moved = ["--vault", "VAULT", "scan", "--force", "--json"]
    both(tmp_path / "e1", vault, moved, env=_env(VAULTKEEPER_TODAY="2027-03-01"))
    both(tmp_path / "e2", vault, ["--vault", "VAULT", "scan"], env=_env(VAULTKEEPER_TODAY="x"))
    both(tmp_path / "c", vault, ["--vault", "VAULT", "scan"], env=_env(SELF_MAINTAIN_FORCE="1"))
    odd = _env(SELF_MAINTAIN_COOLDOWN_MS="soon")  # a note on stderr, then the default
    both(tmp_path / "d", vault, ["--vault", "VAULT", "scan"], env=odd, before=[["scan"]])


@pytest.mark.parametrize("encoding", ["ascii", "latin-1", "utf-8:strict"])
def test_streams_click_would_rewrap(tmp_path: Path, vault: Path, encoding: str) -> None:
    env = _env(PYTHONIOENCODING=encoding)  # non-ASCII names in the report meet these streams
    both(tmp_path, vault, ["--vault", "VAULT", "scan", "--force"], env=env)


def test_guards_and_state_problems(tmp_path: Path, vault: Path) -> None:
    state_file = vault / config.STATE_DIR / config.STATE_FILE
    state_file.write_text("{not json")
    both(tmp_path / "corrupt", vault, ["--vault", "VAULT", "scan"])
    now_ms = int(dt.datetime.now(dt.timezone.utc).timestamp() * 1000)
    running = {
        "state": "in-progress",
        "lastCompleted": 0,
        "lastTriggered": now_ms,
        "cooldownMs": config.COOLDOWN_MS,
        "pid": os.getpid(),  # this test's process: alive, and not the scan's own
        "perTask": {},
    }
    state_file.write_text(json.dumps(running))
    both(tmp_path / "running", vault, ["--vault", "VAULT", "scan", "--force"])


def test_what_goes_to_click_is_reported_the_same(tmp_path: Path, vault: Path) -> None:
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "empty").mkdir()
    cases = [
        ["--vault", str(tmp_path / "a-file"), "scan"],  # click.Path refuses a file
        ["--vault", str(tmp_path / "missing"), "scan"],
        ["--vault", str(tmp_path / "empty"), "scan"],  # a folder that is not a vault
        ["--vault=", "scan"],
        ["scan"],  # nothing to find from here
        ["--vault", "VAULT", "scan", "--bogus"],
        ["--vault", "VAULT", "scan", "--json", "--json"],
        ["--vault", "VAULT", "scan", "-h"],
        ["--version"],
        ["--vault", "VAULT", "report"],
    ]
    for i, args in enumerate(cases):
        both(tmp_path / f"case{i}", vault, args)


def test_parse_takes_only_the_scan_forms() -> None:
    assert parse(["scan"]) == ScanArgs(None, False, False, False)
    assert parse(["--vault", "v", "scan", "--json", "--force"]) == ScanArgs("v", True, False, True)
    assert parse(["--vault=v", "scan", "--strict"]) == ScanArgs("v", False, True, False)
    for args in (
        [],
        ["--vault", "v"],
        ["--vault", "scan"],
        ["scan", "--vault", "v"],
        ["--vault", "a", "--vault", "b", "scan"],
        ["scan", "--force", "--force"],
        ["scan", "--force=1"],
        ["scan", "--"],
        ["report"],
        ["-h"],
    ):
        assert parse(args) is None, args


def test_the_console_script_is_the_entry() -> None:
    text = (Path(__file__).parent.parent / "pyproject.toml").read_text()
    assert 'vaultkeeper = "vaultkeeper.entry:main"' in text


# What the throttled no-op must not import: each costs a noticeable part of a run that is
# otherwise starting Python and reading one small file (see docs/benchmarks.md).
HEAVY = (
    "click", "yaml", "frontmatter", "mistune", "dataclasses", "typing", "pathlib",
    "datetime", "json", "urllib.parse", "ipaddress", "fnmatch", "signal", "hashlib",
    "vaultkeeper.cli", "vaultkeeper.store.model", "vaultkeeper.registry.blocks",
    "vaultkeeper.report.candidates",
    "sqlite3", "vaultkeeper.store.db",  # the derived store: never opened by the no-op
)  # fmt: skip
# Only what the run added counts: a host's start-up hooks (.pth files, sitecustomize)
# may have imported some of these before vaultkeeper was.
NO_OP = (
    "import sys; sys.argv[0] = 'vaultkeeper'; before = set(sys.modules)\n"
    "from vaultkeeper.entry import main\n"
    "try:\n    main()\nexcept SystemExit as exc:\n    assert not exc.code\n"
    f"print(sorted(set({HEAVY!r}) & (set(sys.modules) - before)))\n"
)


def test_the_throttled_no_op_imports_only_what_it_needs(vault: Path) -> None:
    scan = ["--vault", str(vault), "scan"]
    assert run(ENTRY, scan, vault, _env())[0] == 0  # completes a scan: the next one is a no-op
    assert run(NO_OP, scan, vault, _env()) == (0, "[]\n", "")
    assert run(NO_OP, ["scan"], vault / "projects", _env()) == (0, "[]\n", "")  # found upwards
    assert run(NO_OP, ["scan"], vault, _env(VAULTKEEPER_VAULT=str(vault))) == (0, "[]\n", "")


def test_the_check_sees_a_real_scan_import_them(vault: Path) -> None:
    """The same check on a run that scans lists them: it is not vacuous."""
    _, out, _ = run(NO_OP, ["--vault", str(vault), "scan", "--force"], vault, _env())
    imported = out.splitlines()[-1]  # after the report's lines
    assert all(
        f"'{name}'" in imported for name in ("pathlib", "datetime", "vaultkeeper.report.candidates")
    )


# What a scan that reads the vault must not import either: dataclasses brings inspect (and
# ast, dis, tokenize) and each frozen dataclass costs building its methods, about a tenth of
# a session-end scan together. The scan's records are named tuples (typing.NamedTuple).
NOT_IN_A_SCAN = ("dataclasses", "inspect")
A_SCAN = NO_OP.replace(repr(HEAVY), repr(NOT_IN_A_SCAN))


def test_a_scan_imports_neither_dataclasses_nor_inspect(vault: Path) -> None:
    """A first scan, one from the scan cache, one with --json: every section filled
    (a duplicate pair, a stale lesson, an unused skill, a usage log, problems)."""
    old = (TODAY - dt.timedelta(days=400)).isoformat()
    promoted = f"**promoted:** {old} -> [[skills/old/SKILL]]\n"
    with (vault / "patterns" / "more.md").open("a") as fh:
        fh.write(block("old-skill", "4", old, promoted))
    event = {"session": "s", "source": "cli", "kind": "cite", "target": "foo"}
    log = vault / config.STATE_DIR / config.USES_LOG_FILE
    log.parent.mkdir(exist_ok=True)
    log.write_text(json.dumps({**event, "date": old, "receipt": "cli:1"}) + "\n")
    for extra in ([], [], ["--json"]):  # the second and third read the scan cache
        args = ["--vault", str(vault), "scan", "--force", *extra]
        code, out, err = run(A_SCAN, args, vault, _env())
        assert (code, out.splitlines()[-1]) == (0, "[]"), (out, err)
    report = json.loads(out.removesuffix("[]\n"))
    assert all(report[k] for k in ("duplicates", "stale", "skills_unused", "problems")), report


def test_an_undecodable_file_name_never_comes_out_as_a_raw_8_bit_csi(
    make_vault: MakeVault,
) -> None:
    # Issue 21 item 13: a name holding byte 0x9b decodes to \udc9b; in the C.UTF-8 locale
    # Python wrote it back raw, and 0x9b is a CSI to a terminal. It is shown escaped.
    vault = make_vault()
    folder = os.fsencode(vault / "projects" / "p" / "memory")
    os.makedirs(folder, exist_ok=True)
    with open(folder + b"/a\x9b2J.md", "w") as fh:
        fh.write("---\nname: a\ndescription: d\n---\n")
    done = subprocess.run(
        [sys.executable, "-m", "vaultkeeper", "--vault", str(vault), "lint"],
        capture_output=True,
        timeout=600,
        env={**os.environ, "LC_ALL": "C.UTF-8", "PYTHONIOENCODING": ""},
        check=False,
    )
    out = done.stdout + done.stderr
    assert b"a\\udc9b2J.md" in out, out
    assert b"\x9b" not in out.decode("utf-8").encode("latin-1", "replace"), out
