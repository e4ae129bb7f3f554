"""state/recall-lookup.bin: what the scan keeps for the recall hook, and when it writes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import MakeVault, recall_on, run_vaultkeeper
from vaultkeeper import config
from vaultkeeper.recall.lookup import Table, for_files
from vaultkeeper.recall.paths import glob_regex
from vaultkeeper.scan import lookup
from vaultkeeper.scan.lookup import anchor_file, build, lookup_path

ENTRY = "---\nname: {name}\ndescription: {d}\nstatus: {s}\n{extra}---\n\nBody of {name}.\n"


@pytest.fixture
def make_vault(make_vault: MakeVault) -> MakeVault:
    """Every vault below has the recall on: the scan keeps its table (one without: the end)."""
    return lambda files=None, **kw: recall_on(make_vault(files, **kw))


def entry(name: str, d: str = "a lesson", s: str = "active", extra: str = "") -> str:
    return ENTRY.format(name=name, d=d, s=s, extra=extra)


def table(vault: Path) -> Table:
    return Table(str(lookup_path(vault)))


def lines(vault: Path) -> list[list[str]]:
    """Each lesson's path and project, in the table's order."""
    loaded = table(vault)
    return [[(x := loaded.line(i)).path, x.project] for i in range(loaded.count)]


def never(path: str) -> bool:
    return False


def test_the_scan_builds_it_with_live_lessons_only(make_vault: MakeVault) -> None:
    root = make_vault(
        {
            "projects/api/memory/live.md": entry("live", extra="paths: src/**/*.py\n"),
            "projects/api/memory/held.md": entry("held", s="held-out"),
            "projects/api/memory/gone.md": entry("gone", s="archived"),
            "projects/api/memory/old.md": entry(
                "old", extra='superseded_by: "[[projects/api/memory/live]]"\n'
            ),
            "projects/api/research/survey.md": entry("survey"),
        }
    )
    done = run_vaultkeeper(root, "scan", "--force")
    assert done.returncode == 0, done.stderr
    assert lines(root) == [
        ["projects/api/memory/held.md", "api"],
        ["projects/api/memory/live.md", "api"],
    ]
    loaded = table(root)
    assert 'status="held-out"' in loaded.line(0).head
    assert loaded.listed("globs") == [("src/**/*.py", [1])]


def test_unchanged_is_not_rewritten_and_a_change_is_picked_up(make_vault: MakeVault) -> None:
    root = make_vault({"projects/api/memory/a.md": entry("a", "first words")})
    assert build(root) is True
    before = os.stat(lookup_path(root)).st_mtime_ns
    assert build(root) is False
    assert os.stat(lookup_path(root)).st_mtime_ns == before
    (root / "projects/api/memory/a.md").write_text(entry("a", "second words"), encoding="utf-8")
    assert build(root) is True
    assert table(root).line(0).body == "a: second words Body of a."
    (root / "projects/api/memory/a.md").unlink()
    assert build(root) is True
    assert lines(root) == []


@pytest.mark.parametrize(
    ("place", "file"),
    [
        ("src/billing/cart.py", "src/billing/cart.py"),
        ("src/billing/cart.py::round_cart", "src/billing/cart.py"),
        ('src/billing/config.py: ROUNDING = "half-even"', "src/billing/config.py"),
        ({"at": "./src/billing/", "digest": "x"}, "src/billing"),
        ({"path": "lib/a.ts::A.b", "commit": "abc"}, "lib/a.ts"),
        ("/etc/passwd", None),
        ("../outside.py", None),
        (42, None),
    ],
)
def test_an_anchor_gives_its_file_part(place: object, file: str | None) -> None:
    assert anchor_file(place) == file


def test_anchor_shapes_in_frontmatter_and_a_stale_one_leaves_the_lesson_out(
    make_vault: MakeVault,
) -> None:
    anchors = "anchors:\n  - src/a.py::f\n  - at: 'src/b.py: X = 1'\n    digest: d1\n  - src/dir/\n"
    stale = "anchors:\n  - at: src/c.py::g\n    state: gone\n"
    root = make_vault(
        {
            "projects/p/memory/a.md": entry("a", extra=anchors),
            "projects/p/memory/s.md": entry("s", extra=stale),
        }
    )
    build(root)
    loaded = table(root)
    assert loaded.listed("places") == [("src/a.py", [0]), ("src/b.py", [0]), ("src/dir", [0])]
    assert lines(root) == [["projects/p/memory/a.md", "p"]]  # not the stale s.md
    got = for_files(loaded, ["src/dir/deep/x.py"], "p", never, 4)
    assert [x.path for x in got] == ["projects/p/memory/a.md"]
    assert for_files(loaded, ["src/a.py"], "other", never, 4) == []  # another project's


@pytest.mark.parametrize(
    ("glob", "path", "hit"),
    [
        ("src/**/*.py", "src/a.py", True),
        ("src/**/*.py", "src/x/y/a.py", True),
        ("src/**/*.py", "lib/a.py", False),
        ("*.md", "docs/deep/readme.md", True),
        ("src/*.ts", "src/x/a.ts", False),
        ("src/[ab].ts", "src/b.ts", True),
        ("src/?.ts", "src/ab.ts", False),
    ],
)
def test_paths_globs_as_claude_rules_read_them(glob: str, path: str, hit: bool) -> None:
    assert bool(glob_regex(glob).match(path)) is hit


def test_old_session_files_are_removed(make_vault: MakeVault) -> None:
    root = make_vault({"projects/api/memory/a.md": entry("a")})
    folder = root / config.STATE_DIR / config.RECALL_SESSIONS_DIR
    folder.mkdir(parents=True)
    (folder / "old").write_text("x\n")
    (folder / "new").write_text("x\n")
    past = 1_000_000_000
    os.utime(folder / "old", (past, past))
    build(root)
    assert sorted(p.name for p in folder.iterdir()) == ["new"]


def test_an_upgrade_masks_the_table_again_with_its_own_patterns(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the hook serves the table's text as masked when it was built: a vaultkeeper that
    # masks more must build every lesson again, even files unchanged since
    import vaultkeeper
    from vaultkeeper.scan import lookup

    root = make_vault({"projects/api/memory/a.md": entry("a", "uses hunter2 daily")})
    monkeypatch.setattr(lookup, "RACY_NS", 0)  # the file is settled: its stat is trusted
    assert build(root) is True
    assert "hunter2" in table(root).line(0).body
    monkeypatch.setattr(vaultkeeper, "__version__", vaultkeeper.__version__ + ".next")
    monkeypatch.setattr(lookup, "mask", lambda text: text.replace("hunter2", "[redacted]"))
    assert build(root) is True
    assert "hunter2" not in table(root).line(0).body


def scan_in_process(root: Path) -> None:
    from click.testing import CliRunner

    from vaultkeeper.cli import cli

    result = CliRunner().invoke(cli, ["--vault", str(root), "scan", "--force"])
    assert result.exit_code in (0, 1), result.output


def served(root: Path) -> dict[str, str | None]:
    """What the hook serves of each lesson: the table's line, or the row written over it."""
    from vaultkeeper.scan.lookupover import over_path

    loaded = Table(str(lookup_path(root)), str(over_path(root)))
    out: dict[str, str | None] = {}
    for i in range(loaded.count):
        out[loaded.line(i).path] = loaded.line(i).body
    for path, rec in loaded.rows.items():
        out[path] = None if rec is None else f"row: {rec[5]}"
    return out


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    from vaultkeeper.scan import cache

    monkeypatch.setattr(cache, "RACY_NS", 0)  # files just written count as settled


@pytest.mark.usefixtures("settled")
def test_a_scan_finding_few_lessons_changed_writes_rows_not_the_table(
    make_vault: MakeVault,
) -> None:
    root = make_vault(
        {
            "projects/api/memory/a.md": entry("a", "first words"),
            "projects/api/memory/b.md": entry("b", "kept words"),
            "projects/api/memory/c.md": entry("c", "gone soon"),
        }
    )
    scan_in_process(root)
    built = lookup_path(root).read_bytes()
    assert served(root) == {
        "projects/api/memory/a.md": "a: first words Body of a.",
        "projects/api/memory/b.md": "b: kept words Body of b.",
        "projects/api/memory/c.md": "c: gone soon Body of c.",
    }
    (root / "projects/api/memory/a.md").write_text(entry("a", "second words"), encoding="utf-8")
    (root / "projects/api/memory/c.md").unlink()
    (root / "projects/web/memory").mkdir(parents=True)
    (root / "projects/web/memory/d.md").write_text(entry("d", "new words"), encoding="utf-8")
    scan_in_process(root)
    assert lookup_path(root).read_bytes() == built  # only rows over it
    assert served(root) == {
        "projects/api/memory/a.md": "row: second words Body of a.",
        "projects/api/memory/b.md": "b: kept words Body of b.",
        "projects/api/memory/c.md": None,  # never served again
        "projects/web/memory/d.md": "row: new words Body of d.",
    }
    over = root / config.STATE_DIR / config.RECALL_LOOKUP_OVER_FILE
    rows = over.read_bytes()
    scan_in_process(root)  # nothing changed since: nothing read, nothing written
    assert over.read_bytes() == rows and lookup_path(root).read_bytes() == built


@pytest.mark.usefixtures("settled")
def test_more_changed_lessons_than_the_limit_build_the_table_again(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lookup, "OVER_MAX", 1)
    root = make_vault({f"projects/api/memory/{n}.md": entry(n, "old words") for n in "abc"})
    scan_in_process(root)
    (root / "projects/api/memory/a.md").write_text(entry("a", "newer words"), encoding="utf-8")
    scan_in_process(root)  # one: a row
    over = root / config.STATE_DIR / config.RECALL_LOOKUP_OVER_FILE
    assert over.is_file()
    for n in "bc":
        (root / f"projects/api/memory/{n}.md").write_text(entry(n, "new words"), encoding="utf-8")
    scan_in_process(root)  # three since the table was built: built again, rows dropped
    assert not over.exists()
    assert [table(root).line(i).body for i in range(3)] == [
        "a: newer words Body of a.",
        "b: new words Body of b.",
        "c: new words Body of c.",
    ]


@pytest.mark.usefixtures("settled")
def test_without_the_lock_the_table_is_built_again(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    # an apply holding the lock may be writing its own row: the scan writes none then
    # (it could lose the apply's) and builds the table instead, which needs no lock;
    # and so on a file system without flock, where the lock is never had
    import fcntl

    from vaultkeeper.report import file as reportguard

    root = make_vault({"projects/api/memory/a.md": entry("a", "first words")})
    scan_in_process(root)
    (root / "projects/api/memory/a.md").write_text(entry("a", "gone", s="archived"))
    monkeypatch.setattr(reportguard, "WAIT_S", 0.01)
    fd = os.open(root / config.STATE_DIR / config.WRITER_LOCK_FILE, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        scan_in_process(root)
    finally:
        os.close(fd)
    over = root / config.STATE_DIR / config.RECALL_LOOKUP_OVER_FILE
    assert served(root) == {} and not over.exists()  # archived: never served


@pytest.mark.usefixtures("settled")
def test_a_scans_row_never_hides_a_newer_row_an_apply_wrote(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the scan found the lesson changed; an apply archives it and writes its row just
    # before the scan takes the lock: the scan reads the lesson under the lock, after
    # the apply, so its own row does not bring the archived lesson back
    import contextlib
    from collections.abc import Iterator

    from vaultkeeper.report import file as reportguard
    from vaultkeeper.scan import lookupover

    root = make_vault({"projects/api/memory/a.md": entry("a", "first words")})
    scan_in_process(root)
    path = root / "projects/api/memory/a.md"
    path.write_text(entry("a", "second words"), encoding="utf-8")
    real = reportguard.locked

    @contextlib.contextmanager
    def apply_first(vault: Path) -> Iterator[bool]:
        if "archived" not in path.read_text():  # the apply, between the scan's stat and lock
            path.write_text(entry("a", "second words", s="archived"), encoding="utf-8")
            lookupover.put(root, {"projects/api/memory/a.md": None})
        with real(vault) as held:
            yield held

    monkeypatch.setattr(reportguard, "locked", apply_first)
    scan_in_process(root)
    assert served(root) == {"projects/api/memory/a.md": None}


@pytest.mark.usefixtures("settled")
def test_a_lesson_new_wrote_and_a_person_removed_is_not_served(make_vault: MakeVault) -> None:
    from vaultkeeper.scan.lookuprows import refresh

    root = make_vault({"projects/api/memory/a.md": entry("a", "first words")})
    scan_in_process(root)
    extra = root / "projects/api/memory/b.md"
    extra.write_text(entry("b", "written by new"), encoding="utf-8")
    refresh(root, ["projects/api/memory/b.md"])  # what `new` does after its write
    assert served(root)["projects/api/memory/b.md"] == "row: written by new Body of b."
    extra.unlink()
    scan_in_process(root)
    assert served(root)["projects/api/memory/b.md"] is None


def _vault_with_a_lesson(tmp_path: Path) -> Path:
    from vaultkeeper.entries.create import init_vault

    root = tmp_path / "v"
    init_vault(root)
    (root / "projects/api/memory").mkdir(parents=True)
    (root / "projects/api/memory/a.md").write_text(entry("a", "retry flaky jobs once"))
    return root


def test_a_vault_without_the_recall_keeps_no_table_until_its_hook_asks(tmp_path: Path) -> None:
    from vaultkeeper.recall.moment import Quiet, serve

    root = _vault_with_a_lesson(tmp_path)
    assert run_vaultkeeper(root, "scan", "--force").returncode == 0
    state = root / config.STATE_DIR
    assert not [p.name for p in state.iterdir() if p.name.startswith("recall-lookup")]
    payload = {"hook_event_name": "UserPromptSubmit", "session_id": "s1", "prompt": "flaky"}
    with pytest.raises(Quiet, match="the next scan builds it"):
        serve(str(root), "claude-code", payload, float("inf"))
    assert (state / config.RECALL_LOOKUP_WANT_FILE).is_file()  # the hook asked
    assert run_vaultkeeper(root, "scan", "--force").returncode == 0
    assert lines(root) == [["projects/api/memory/a.md", "api"]]
    assert run_vaultkeeper(root, "scan", "--force").returncode == 0
    assert not (state / config.RECALL_LOOKUP_WANT_FILE).exists()  # a table there: no ask


def test_hooks_install_with_recall_builds_the_table(tmp_path: Path) -> None:
    root = _vault_with_a_lesson(tmp_path)
    settings = tmp_path / "settings.json"
    args = ("hooks", "install", "claude-code", "--settings", str(settings))
    assert run_vaultkeeper(root, *args).returncode == 0
    assert not lookup_path(root).exists()  # no --recall: no table
    done = run_vaultkeeper(root, *args, "--recall")
    assert done.returncode == 0, done.stderr
    assert lines(root) == [["projects/api/memory/a.md", "api"]]


def test_an_install_whose_build_fails_leaves_the_ask_for_the_next_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from vaultkeeper.cli import cli

    root = _vault_with_a_lesson(tmp_path)

    def full(vault: object, *args: object) -> bool:
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as m:
        m.setattr(lookup, "build", full)
        settings = str(tmp_path / "settings.json")
        args = ["--vault", str(root), "hooks", "install", "claude-code", "--recall"]
        done = CliRunner().invoke(cli, [*args, "--settings", settings])
    assert done.exit_code == 0, done.output
    assert "recall table not built" in done.stderr and "a scan builds it" in done.stderr
    assert (root / config.STATE_DIR / config.RECALL_LOOKUP_WANT_FILE).is_file()
    assert run_vaultkeeper(root, "scan", "--force").returncode == 0
    assert lines(root) == [["projects/api/memory/a.md", "api"]]


def test_the_hooks_ask_never_waits_on_a_fifo_nor_writes_through_a_link(tmp_path: Path) -> None:
    import threading

    from vaultkeeper.recall.moment import want_table

    root = _vault_with_a_lesson(tmp_path)
    state = root / config.STATE_DIR
    state.mkdir(exist_ok=True)
    want = state / config.RECALL_LOOKUP_WANT_FILE
    os.mkfifo(want)
    asked = threading.Thread(target=want_table, args=(str(state),), daemon=True)
    asked.start()
    asked.join(60)  # a bound on a hang, not a timing: it returns at once
    assert not asked.is_alive()
    assert run_vaultkeeper(root, "scan", "--force").returncode == 0  # the ask is there
    assert lines(root) == [["projects/api/memory/a.md", "api"]]

    other = _vault_with_a_lesson(tmp_path / "2")
    (other / config.STATE_DIR).mkdir(exist_ok=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (other / config.STATE_DIR / config.RECALL_LOOKUP_WANT_FILE).symlink_to(outside / "x")
    want_table(str(other / config.STATE_DIR))  # a dangling link: not followed
    assert list(outside.iterdir()) == []
    assert run_vaultkeeper(other, "scan", "--force").returncode == 0  # still an ask
    assert lines(other) == [["projects/api/memory/a.md", "api"]]
    assert list(outside.iterdir()) == []

    linked = _vault_with_a_lesson(tmp_path / "3")
    shutil.rmtree(linked / config.STATE_DIR, ignore_errors=True)
    (linked / config.STATE_DIR).symlink_to(outside, target_is_directory=True)
    want_table(str(linked / config.STATE_DIR))  # state/ out of the vault: nothing written
    assert list(outside.iterdir()) == []
