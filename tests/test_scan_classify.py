"""``vaultkeeper scan``: classification (the spec's Verify rows 3-8), output, guards end to end."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import MakeVault, recall_on, snapshot
from vaultkeeper import config
from vaultkeeper.cli import cli
from vaultkeeper.report.candidates import Report
from vaultkeeper.scan import classify as scan
from vaultkeeper.scan import statefile as state

NOW = dt.datetime(2026, 9, 1, 12, 0, tzinfo=dt.timezone.utc)
SUMMARY = "SELF-MAINTAIN: prune candidates {} | promote eligible {} | held-out due {}"
STATE_KEYS = ["state", "lastCompleted", "lastTriggered", "cooldownMs", "pid", "perTask"]
VK = shutil.which("vaultkeeper") or "vaultkeeper"

# what the end of a scan writes for the recall hook: the full-text index in the derived
# store (vaultkeeper/search/index.py), with SQLite's own companion files
RECALL_FILES = ("vaultkeeper.db", "vaultkeeper.db-wal", "vaultkeeper.db-shm")


def memory(name: str, until: str | None, status: str | None = "held_out", **extra: str) -> str:
    lines = [f"name: {name}", "description: a lesson", "type: memory"]
    if status is not None:
        lines.append(f"status: {status}")
    lines.append("label: inferred")
    lines.append('falsification_condition: "it stops holding"')
    if until is not None:
        lines.append(f"holdout_until: {until}")
    lines += [f"{k}: {v}" for k, v in extra.items()]
    return "---\n" + "\n".join(lines) + "\n---\n\n# " + name + "\n\nBody.\n"


def block(name: str, count: str, last_used: dt.date | str, extra: str = "") -> str:
    return (
        f"### {name}\nWhat it is.\n\n**success count:** {count}\n**last used:** {last_used}\n"
        f"{extra}\n"
    )


def spec_files(today: dt.date) -> dict[str, str]:
    """The spec's three fixtures, plus entries that must land in no list (and two problems)."""
    days = dt.timedelta(days=1)
    due = f'"{today - 31 * days}"'  # "2026-08-01" for NOW, as in the spec
    registry = "# Pattern registry\n\n" + "".join(
        [
            block("foo", "3", today - 6 * days),  # promote
            block("bar", "0", today - 100 * days),  # prune
            block("once", "1", today - 200 * days),  # count 1: nothing
            block("fresh", "0", today - 10 * days),  # count 0 but recent
            block("edge", "0", today - 90 * days),  # exactly 90 days: not *more than* 90
            block("broken", "many", today - 200 * days),  # unreadable count: problem only
            block(
                "done", "5", today - 3 * days, f"**promoted:** {today} -> [[skills/done/SKILL]]\n"
            ),
        ]
    )
    mem = "projects/p/memory/"
    return {
        "patterns/registry.md": registry,
        mem + "due.md": memory("due", due),
        mem + "future.md": memory("future", '"2099-01-01"'),
        mem + "archived.md": memory("archived", due, status="archived"),
        mem + "active.md": memory("active", due, status="active"),
        mem + "vague.md": memory("vague", '"yesterday"'),
        mem + "no-holdout.md": memory("no-holdout", None, status="active"),
        "projects/p/research/survey.md": memory("survey", due),
        mem + "plain.md": "# just notes\n\nNo frontmatter here.\n",
    }


def names(report: Report) -> tuple[list[str], list[str], list[str]]:
    return (
        [c.name for c in report.prune],
        [c.name for c in report.promote],
        [c.name for c in report.held_out],
    )


@pytest.fixture
def spec_vault(make_vault: MakeVault) -> Path:
    return make_vault(spec_files(NOW.date()))


def test_classify_puts_each_spec_fixture_in_exactly_one_list(spec_vault: Path) -> None:
    report = scan.classify(spec_vault, NOW)
    assert names(report) == (["bar"], ["foo"], ["due"])
    assert report.summary() == SUMMARY.format(1, 1, 1)


def test_unreadable_count_and_date_are_problems_never_candidates(spec_vault: Path) -> None:
    report = scan.classify(spec_vault, NOW)
    lines = [str(p) for p in report.problems]
    registry = (spec_vault / "patterns/registry.md").read_text().splitlines()
    count_line = registry.index("**success count:** many") + 1
    assert lines == [
        f"patterns/registry.md:{count_line}: ### broken: success count 'many' is not a whole "
        "number",
        "projects/p/memory/vague.md:8: holdout_until 'yesterday' is not a date (YYYY-MM-DD); "
        "skipped",
    ]


def test_candidates_carry_figures_and_the_hash_the_applier_checks(spec_vault: Path) -> None:
    report = scan.classify(spec_vault, NOW)
    (foo,), (bar,), (due,) = report.promote, report.prune, report.held_out
    text = (spec_vault / "patterns/registry.md").read_text()
    start = text.index("### foo")
    foo_text = text[start : text.index("### bar")].rstrip("\n") + "\n"  # blank lines excluded
    assert foo.hash == hashlib.sha256(foo_text.encode()).hexdigest()
    assert (foo.count, foo.last_used, foo.idle_days, foo.line) == (3, "2026-08-26", 6, 3)
    assert (bar.count, bar.idle_days, bar.path) == (0, 100, "patterns/registry.md")
    raw = (spec_vault / "projects/p/memory/due.md").read_bytes()
    assert due.hash == hashlib.sha256(raw).hexdigest()
    assert (due.holdout_until, due.days_due, due.status) == ("2026-08-01", 31, "held_out")
    assert (due.label, due.weight, due.line) == ("inferred", "hold out", 8)
    assert due.falsification_condition == "it stops holding"


@pytest.mark.parametrize(
    "value", ['"2026-08-01"', "'2026-08-01'", "2026-08-01", '"2026-08-01"  # quoted, commented']
)
def test_quoted_and_unquoted_dates_are_both_read(make_vault: MakeVault, value: str) -> None:
    vault = make_vault({"projects/p/memory/x.md": memory("x", value)})
    assert names(scan.classify(vault, NOW))[2] == ["x"]


def test_absent_status_counts_as_held_out(make_vault: MakeVault) -> None:
    vault = make_vault({"projects/p/memory/x.md": memory("x", '"2026-08-01"', status=None)})
    assert names(scan.classify(vault, NOW))[2] == ["x"]


@pytest.mark.parametrize(
    ("now", "due"),
    [
        (dt.datetime(2026, 8, 1, 0, 0, tzinfo=dt.timezone.utc), True),  # the day itself
        (dt.datetime(2026, 7, 31, 23, 59, 59, tzinfo=dt.timezone.utc), False),
        # 01:00 in UTC+5 is still 31 July in UTC: dates compare in UTC
        (dt.datetime(2026, 8, 1, 1, 0, tzinfo=dt.timezone(dt.timedelta(hours=5))), False),
        (dt.datetime(2026, 7, 31, 22, 0, tzinfo=dt.timezone(dt.timedelta(hours=-3))), True),
    ],
)
def test_due_on_the_holdout_day_itself_in_utc(
    make_vault: MakeVault, now: dt.datetime, due: bool
) -> None:
    vault = make_vault({"projects/p/memory/x.md": memory("x", '"2026-08-01"')})
    assert names(scan.classify(vault, now))[2] == (["x"] if due else [])


def test_prune_needs_more_than_90_idle_days(make_vault: MakeVault) -> None:
    today = NOW.date()
    reg = block("ninety", "0", today - dt.timedelta(days=90)) + block(
        "ninety-one", "0", today - dt.timedelta(days=91)
    )
    vault = make_vault({"patterns/registry.md": reg})
    assert names(scan.classify(vault, NOW))[0] == ["ninety-one"]


def test_bad_memory_files_are_problems_and_the_scan_goes_on(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "projects/p/memory/a-bad.md": "---\nname: [unclosed\n---\n",
            "projects/p/memory/b-binary.md": b"\x00\x01",
            "projects/p/memory/c-impossible.md": memory("c", "2026-02-30"),
            "projects/p/memory/d-due.md": memory("d", '"2026-08-01"'),
        }
    )
    report = scan.classify(vault, NOW)
    assert names(report)[2] == ["d"]
    assert [p.path for p in report.problems] == [
        "projects/p/memory/a-bad.md",
        "projects/p/memory/b-binary.md",
        "projects/p/memory/c-impossible.md",
    ]


def test_duplicate_block_names_are_a_problem(make_vault: MakeVault) -> None:
    today = NOW.date()
    vault = make_vault(
        {
            "patterns/registry.md": block("twin", "2", today),
            "patterns/more.md": block("twin", "3", today),
        }
    )
    report = scan.classify(vault, NOW)
    assert len(report.promote) == 2
    assert any("also used at" in p.reason for p in report.problems)


def test_a_readable_count_promotes_even_when_the_date_is_unreadable(
    make_vault: MakeVault, runner: CliRunner
) -> None:
    # Documented choice (spec: "the count gate alone promotes" registry entries;
    # a block whose count or date can't be read is "never a *prune* candidate"): a count
    # >= 2 is promote-eligible with or without a date, and a missing or bad date is still
    # reported as a problem. Without a date there is no proof of idleness: never pruned.
    registry = (
        "### undated\nWhat it is.\n\n**success count:** 3\n\n"
        + block("bad-date", "2", "last tuesday")
        + "### idle-undated\n**success count:** 0\n\n"
        + block("idle-bad-date", "0", "2020-02-30")
    )
    vault = make_vault({"patterns/registry.md": registry})
    report = scan.classify(vault, NOW)
    assert names(report) == ([], ["undated", "bad-date"], [])
    assert [(c.count, c.last_used, c.idle_days) for c in report.promote] == [
        (3, None, None),
        (2, None, None),
    ]
    assert [str(p) for p in report.problems] == [
        "patterns/registry.md:1: ### undated: no **last used:** line",
        "patterns/registry.md:10: ### bad-date: last used 'last tuesday' is not an ISO date"
        " (YYYY-MM-DD)",
        "patterns/registry.md:12: ### idle-undated: no **last used:** line",
        "patterns/registry.md:19: ### idle-bad-date: last used '2020-02-30' is not an ISO date"
        " (YYYY-MM-DD)",
    ]
    code, out, err = run(runner, vault, "--force", "--strict")
    assert code == 1  # --strict: the dates are problems
    assert out.splitlines()[:2] == [
        SUMMARY.format(0, 2, 0),
        "promote   undated -- success count 3, last used unreadable -- patterns/registry.md:1",
    ]
    assert "patterns/registry.md:1: ### undated: no **last used:** line" in err


def test_a_count_too_long_for_int_is_a_problem_never_a_candidate(make_vault: MakeVault) -> None:
    huge = "1" * 5000  # int() refuses more than 4300 digits
    registry = block("huge", huge, NOW.date()) + block("idle", "0" * 5000, "2020-01-01")
    report = scan.classify(make_vault({"patterns/registry.md": registry}), NOW)
    assert names(report) == ([], [], [])
    assert [str(p) for p in report.problems] == [
        "patterns/registry.md:4: ### huge: success count of 5000 digits is too long (at most 18)",
        "patterns/registry.md:10: ### idle: success count of 5000 digits is too long (at most 18)",
    ]


# -- the command ------------------------------------------------------------------------


def run(runner: CliRunner, vault: Path, *args: str, **env: str) -> tuple[int, str, str]:
    result = runner.invoke(cli, ["--vault", str(vault), "scan", *args], env=env)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def live_vault(make_vault: MakeVault) -> Path:
    """The spec fixtures dated from the real clock (the command reads the real time)."""
    return make_vault(spec_files(dt.datetime.now(dt.timezone.utc).date()))


def test_row3_forced_run_exits_0_and_prints_the_summary_first(
    runner: CliRunner, live_vault: Path
) -> None:
    code, out, err = run(runner, live_vault, SELF_MAINTAIN_FORCE="1")
    lines = out.splitlines()
    assert code == 0
    assert lines[0] == SUMMARY.format(1, 1, 1)
    assert lines[1].startswith("prune     bar -- success count 0, last used ")
    assert lines[1].endswith("(idle 100 days) -- patterns/registry.md:9")
    assert lines[2].startswith("promote   foo -- success count 3") and lines[2].endswith(":3")
    assert lines[3].startswith("held-out  due -- holdout_until ")
    assert lines[3].endswith(
        "(due 31 days ago), status held_out, label inferred (hold out) -- "
        "projects/p/memory/due.md:8"
    )
    assert len(lines) == 4
    assert "projects/p/memory/vague.md:8: holdout_until 'yesterday'" in err


def test_row5_second_run_inside_the_cooldown_is_silent_and_force_runs(
    runner: CliRunner, live_vault: Path
) -> None:
    assert run(runner, live_vault)[0] == 0
    before = (live_vault / "state" / config.STATE_FILE).read_bytes()
    assert run(runner, live_vault) == (0, "", "")
    assert (live_vault / "state" / config.STATE_FILE).read_bytes() == before
    code, out, _ = run(runner, live_vault, "--force")
    assert code == 0 and out.startswith("SELF-MAINTAIN:")
    code, out, _ = run(runner, live_vault, SELF_MAINTAIN_FORCE="1")
    assert code == 0 and out.startswith("SELF-MAINTAIN:")


def test_cooldown_override_from_the_environment(runner: CliRunner, live_vault: Path) -> None:
    assert run(runner, live_vault)[0] == 0
    code, out, _ = run(runner, live_vault, SELF_MAINTAIN_COOLDOWN_MS="0")
    assert code == 0 and out.startswith("SELF-MAINTAIN:")
    code, out, err = run(runner, live_vault, SELF_MAINTAIN_COOLDOWN_MS="soon")
    assert (code, out) == (0, "")  # the default hour applies, so this run is throttled
    assert "SELF_MAINTAIN_COOLDOWN_MS='soon' is not a whole number" in err


def test_a_corrupt_state_file_is_mentioned_and_replaced(
    runner: CliRunner, live_vault: Path
) -> None:
    path = live_vault / "state" / config.STATE_FILE
    path.write_text('{"state": "idle", "lastCompleted": 17')
    code, out, err = run(runner, live_vault)
    assert code == 0 and out.startswith("SELF-MAINTAIN:")
    assert (
        "vaultkeeper: note: state/self-maintain.json: not valid JSON; treated as idle and "
        "replaced" in err
    )
    data = json.loads(path.read_text())
    assert list(data) == STATE_KEYS and data["lastCompleted"] > 0


def test_scan_never_changes_anything_outside_state(runner: CliRunner, sample: Path) -> None:
    before = snapshot(sample)
    for _ in range(2):
        assert run(runner, sample, "--force")[0] == 0
    assert run(runner, sample, "--force", "--json")[0] == 0
    assert snapshot(sample) == before
    assert sorted(p.name for p in (sample / "state").iterdir()) == sorted(
        [
            config.DB_FILE,  # the derived store: the scan's rows, its report (scan/last.py)
            config.STATE_FILE,
            # no recall table: the recall is not on for this vault (below: with it)
        ]
    )


def test_with_the_recall_on_the_scan_keeps_its_index(runner: CliRunner, sample: Path) -> None:
    from vaultkeeper.store import db

    recall_on(sample)
    for _ in range(2):
        assert run(runner, sample, "--force")[0] == 0
    names = {p.name for p in (sample / "state").iterdir()}
    assert "vaultkeeper.db" in names  # the full-text index (search/index.py)
    assert not [n for n in names if n.startswith("recall-lookup")]  # no table of its own
    with db.connect(sample) as conn:
        lessons = conn.execute("SELECT count(*) FROM search_entries WHERE lesson = 1")
        assert lessons.fetchone()[0] == len(list(sample.glob("projects/*/memory/*.md")))


def test_a_scan_does_no_work_for_what_the_vault_does_not_use(sample: Path) -> None:
    """No recall on, no repository tied here, no auto memory adopted: the scan never
    loads the recall table's, the anchors' or the auto memory's code; each on, it does."""
    probe = (
        "import sys; from vaultkeeper.entry import main; sys.argv[1:] = ARGS\n"
        "try: main()\nexcept SystemExit: pass\n"
        "print(*(m in sys.modules for m in ('vaultkeeper.search.index',"
        " 'vaultkeeper.anchors.vault', 'vaultkeeper.native.summary')), file=sys.stderr)"
    )
    args = ["--vault", str(sample), "scan", "--force"]

    def loaded() -> str:
        code = probe.replace("ARGS", repr(args))
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        return done.stderr.splitlines()[-1]

    assert loaded() == "False False False"
    recall_on(sample)
    machine = {"repositories": {"0" * 40: "/nowhere"}, "folders": [{"project": "p", "path": "/x"}]}
    (sample / "state" / config.MACHINE_FILE).write_text(json.dumps(machine))
    assert loaded() == "True True True"


def test_json_output(runner: CliRunner, live_vault: Path) -> None:
    code, out, _ = run(runner, live_vault, "--json")
    data = json.loads(out)
    assert code == 0
    assert {"promote", "prune", "held_out", "problems", "generated_at", "vault"} <= set(data)
    foo = data["promote"][0]
    assert {"name", "path", "line", "count", "last_used", "hash"} <= set(foo)
    assert (foo["name"], foo["path"], foo["line"], foo["count"]) == (
        "foo",
        "patterns/registry.md",
        3,
        3,
    )
    assert data["vault"] == str(live_vault)
    assert data["problems"][0]["reason"].startswith("### broken")


def test_strict_exits_1_on_problems_only(runner: CliRunner, live_vault: Path, sample: Path) -> None:
    assert run(runner, live_vault, "--strict")[0] == 1
    assert run(runner, sample, "--strict")[0] == 0


def test_missing_vault_exits_2(runner: CliRunner, tmp_path: Path) -> None:
    code, out, err = run(runner, tmp_path / "nowhere")
    assert (code, out) == (2, "")
    assert "not a directory" in err
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = run(runner, empty)
    assert code == 2 and "not a vault" in err
    assert not (empty / "state").exists()


def test_the_report_shown_later_is_the_printed_one(runner: CliRunner, live_vault: Path) -> None:
    _, out, _ = run(runner, live_vault, "--json")
    later = runner.invoke(cli, ["--vault", str(live_vault), "report", "--json"])
    shown = json.loads(later.stdout)
    del shown["age_seconds"], shown["recall"]
    assert shown == json.loads(out)


# -- signals ------------------------------------------------------------------------------


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGINT"])
def test_a_signal_mid_scan_releases_the_lock_and_resets_the_state(
    runner: CliRunner, live_vault: Path, monkeypatch: pytest.MonkeyPatch, signame: str
) -> None:
    signum = getattr(signal, signame)
    before = signal.getsignal(signum)
    seen: dict[str, object] = {}

    def interrupted(vault: Path, now: dt.datetime, cache: object, parts: object) -> Report:
        seen["state"] = json.loads((vault / "state" / config.STATE_FILE).read_text())["state"]
        seen["lock"] = (vault / "state" / config.LOCK_DIR / config.LOCK_PID_FILE).read_text()
        os.kill(os.getpid(), signum)
        time.sleep(5)  # the handler raises long before this ends
        raise AssertionError("not interrupted")

    monkeypatch.setattr(scan, "classify_and_keep", interrupted)
    code, out, err = run(runner, live_vault)
    assert seen == {"state": "in-progress", "lock": f"{os.getpid()}\n"}
    assert (code, out) == (128 + signum, "")
    assert f"scan interrupted by {signame}" in err
    assert not (live_vault / "state" / config.LOCK_DIR).exists()
    data = json.loads((live_vault / "state" / config.STATE_FILE).read_text())
    assert (data["state"], data["pid"], data["lastCompleted"]) == ("idle", None, 0)
    later = runner.invoke(cli, ["--vault", str(live_vault), "report"])
    assert later.stdout.startswith("no report yet")
    assert signal.getsignal(signum) == before


def test_an_error_mid_scan_releases_the_lock(
    runner: CliRunner, live_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(vault: Path, now: dt.datetime, cache: object, parts: object) -> Report:
        raise OSError(5, "Input/output error", str(vault / "x.md"))

    monkeypatch.setattr(scan, "classify_and_keep", boom)
    code, _, err = run(runner, live_vault)
    assert code == 1 and "Input/output error" in err
    assert not (live_vault / "state" / config.LOCK_DIR).exists()
    assert json.loads((live_vault / "state" / config.STATE_FILE).read_text())["state"] == "idle"


# -- many processes ---------------------------------------------------------------------


def big_vault(root: Path, entries: int) -> Path:
    """A vault whose scan takes a while: half registry blocks, half memory files."""
    rnd = random.Random(7)
    today = dt.datetime.now(dt.timezone.utc).date()
    (root / "state").mkdir(parents=True)
    (root / "_index.md").write_text("# Index\n")
    for f in range(4):
        blocks = [
            block(
                f"p{f}-{i}",
                str(rnd.choice([0, 1, 2, 3])),
                today - dt.timedelta(rnd.randint(0, 200)),
            )
            for i in range(entries // 8)
        ]
        (root / "patterns").mkdir(exist_ok=True)
        (root / "patterns" / f"registry-{f}.md").write_text("".join(blocks))
    for i in range(entries // 2):
        folder = root / "projects" / f"p{i % 10}" / "memory"
        folder.mkdir(parents=True, exist_ok=True)
        until = today + dt.timedelta(days=rnd.randint(-60, 60))
        (folder / f"m{i}.md").write_text(memory(f"m{i}", f'"{until}"') + "Words. " * 200)
    return root


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SELF_MAINTAIN_")}
    return {**env, **extra}


@pytest.mark.parametrize("how", ["console script", "click"])
def test_a_too_long_count_or_a_fifo_is_a_problem_not_a_crash_or_a_hang(
    make_vault: MakeVault, how: str
) -> None:
    # the console script runs scan through entry.py, `-m vaultkeeper` through click
    vault = make_vault({"patterns/registry.md": block("huge", "7" * 5000, "2026-01-01")})
    fifo = hasattr(os, "mkfifo")
    if fifo:
        os.mkfifo(vault / "patterns" / "pipe.md")  # no writer: a blocking open never returns
    command = [VK] if how == "console script" else [sys.executable, "-m", "vaultkeeper"]
    for strict, code in (([], 0), (["--strict"], 1)):
        done = subprocess.run(  # a timeout, so a regression fails instead of hanging
            [*command, "--vault", str(vault), "scan", *strict],
            env=_env(SELF_MAINTAIN_FORCE="1"),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert (done.returncode, done.stdout) == (code, SUMMARY.format(0, 0, 0) + "\n"), done
        problems = ["patterns/registry.md:4: ### huge: success count of 5000 digits is too long"]
        if fifo:
            problems.insert(0, "patterns/pipe.md: not a regular file")
        found = [line for line in done.stderr.splitlines() if line.startswith("patterns/")]
        assert [line.split(" (at most")[0] for line in found] == problems
        assert "Traceback" not in done.stderr and "internal error" not in done.stderr


def test_twelve_concurrent_scans_inside_one_cooldown_scan_once(tmp_path: Path) -> None:
    vault = big_vault(tmp_path / "v", 2000)  # long enough for the others to meet the lock
    procs = [
        subprocess.Popen(
            [VK, "--vault", str(vault), "scan"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_env(),
        )
        for _ in range(12)
    ]
    outputs = [p.communicate(timeout=60) for p in procs]  # drains the pipes while waiting
    results = [(p.returncode, out, err) for p, (out, err) in zip(procs, outputs, strict=True)]
    assert [code for code, _, _ in results] == [0] * 12
    scanned = [out for _, out, _ in results if out.startswith(b"SELF-MAINTAIN:")]
    assert len(scanned) == 1
    assert [out for _, out, _ in results].count(b"") == 11
    data = json.loads((vault / "state" / config.STATE_FILE).read_text())
    assert list(data) == STATE_KEYS and data["state"] == "idle" and data["lastCompleted"] > 0
    assert not (vault / "state" / config.LOCK_DIR).exists()


def test_sigkill_at_random_moments_leaves_valid_json_and_the_next_run_recovers(
    tmp_path: Path,
) -> None:
    vault = recall_on(big_vault(tmp_path / "v", 3000))  # its index is written too
    forced = _env(SELF_MAINTAIN_FORCE="1")
    command = [VK, "--vault", str(vault), "scan"]
    clock = time.monotonic()
    subprocess.run(command, env=forced, check=True, capture_output=True)
    full = time.monotonic() - clock
    rnd = random.Random(20260901)
    state_file = vault / "state" / config.STATE_FILE
    for _ in range(30):
        proc = subprocess.Popen(
            command, env=forced, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        time.sleep(rnd.uniform(0.0, full))
        proc.kill()
        proc.wait()
        data = json.loads(state_file.read_text())  # never half written
        assert list(data) == STATE_KEYS
        # the next run gets past every guard (stale lock / dead in-progress pid)
        now_ms = int(time.time() * 1000)
        started = state.start(vault, env={}, now_ms=now_ms, force=True, pid=os.getpid())
        assert isinstance(started, state.Run), started
        state.abort(started)
        state.release(vault, os.getpid())
    final = subprocess.run(command, env=forced, capture_output=True, text=True)
    assert final.returncode == 0 and final.stdout.startswith("SELF-MAINTAIN:")
    assert json.loads(state_file.read_text())["state"] == "idle"
    leftovers = {p.name for p in (vault / "state").iterdir() if p.name != config.WRITER_LOCK_FILE}
    # the derived store, whole: SQLite's transactions (a killed writer's -wal is replayed)
    with sqlite3.connect(vault / "state" / config.DB_FILE) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT count(*) FROM search_entries").fetchone()[0] > 0
    leftovers -= {config.DB_FILE + c for c in ("", "-wal", "-shm")}
    leftovers -= set(RECALL_FILES)
    # a killed run's temp files of the files an apply writes too wait STALE_RUN_MS (an
    # apply may be writing one): hidden, and never one of the state file or the cache
    young = {n for n in leftovers if n.startswith(".") and n.endswith(".vk-tmp")}
    assert not [n for n in young if n.startswith(f".{config.STATE_FILE}.")]
    leftovers -= young
    assert sorted(leftovers) == [config.STATE_FILE]


def test_sigterm_from_outside_releases_the_lock(tmp_path: Path) -> None:
    vault = big_vault(tmp_path / "v", 3000)
    lock = vault / "state" / config.LOCK_DIR
    state_file = vault / "state" / config.STATE_FILE
    command = [VK, "--vault", str(vault), "scan", "--force"]
    subprocess.run(command, env=_env(), check=True, capture_output=True)
    codes = []
    for _ in range(5):
        proc = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_env()
        )
        deadline = time.monotonic() + 20
        while proc.poll() is None and time.monotonic() < deadline:
            if json.loads(state_file.read_text())["pid"] == proc.pid:  # scanning now
                break
            time.sleep(0.002)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        codes.append(proc.returncode)
        assert not lock.exists()
        data = json.loads(state_file.read_text())
        assert data["state"] == "idle" and data["pid"] is None
        if proc.returncode == 128 + signal.SIGTERM:
            assert b"scan interrupted by SIGTERM" in err
            break
    assert 128 + signal.SIGTERM in codes, codes


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_signal_as_the_run_starts_still_leaves_the_state_idle(
    sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGTERM landing after the state file says in-progress but before the scan holds
    its run (seen once in CI): the run is aborted all the same, the lock released."""
    real_start = state.start

    def start_then_signal(*args: object, **kwargs: object) -> object:
        started = real_start(*args, **kwargs)  # type: ignore[arg-type]
        assert json.loads((sample / "state" / config.STATE_FILE).read_text())["pid"] == 4242
        os.kill(os.getpid(), signal.SIGTERM)  # the host's kill, right here
        return started

    monkeypatch.setattr(state, "start", start_then_signal)
    with pytest.raises(scan.Interrupted):
        scan.run_scan(sample, now=NOW, env={}, force=True, pid=4242)
    data = json.loads((sample / "state" / config.STATE_FILE).read_text())
    assert data["state"] == "idle" and data["pid"] is None
    assert not (sample / "state" / config.LOCK_DIR).exists()
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL  # the handlers put back


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_signal_while_the_brief_patterns_are_read_stops_the_scan(
    sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGTERM landing while the scan reads the registry's most-used patterns: the scan
    stops (not taken for a file that changed under it, with the run completed, exit 0)."""
    from vaultkeeper.report import brief

    def top_then_signal(*args: object, **kwargs: object) -> object:
        os.kill(os.getpid(), signal.SIGTERM)
        raise AssertionError("the handler raises before this line")

    monkeypatch.setattr(brief, "top", top_then_signal)
    with pytest.raises(scan.Interrupted):
        scan.run_scan(sample, now=NOW, env={}, force=True, pid=4242)
    data = json.loads((sample / "state" / config.STATE_FILE).read_text())
    assert data["state"] == "idle" and not data.get("lastCompleted")  # never completed
    assert not (sample / "state" / config.LOCK_DIR).exists()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_no_op_path_imports_nothing_heavy(live_vault: Path) -> None:
    assert subprocess.run([VK, "--vault", str(live_vault), "scan"], env=_env()).returncode == 0
    code = (
        "import sys; from vaultkeeper.cli import main\n"
        f"sys.argv = ['vaultkeeper', '--vault', {str(live_vault)!r}, 'scan']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = {'yaml', 'mistune', 'frontmatter', 'vaultkeeper.store.model',"
        " 'vaultkeeper.registry.blocks'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=_env(), capture_output=True, text=True, check=True
    )
    assert out.stdout == "[]\n"
    # and state.py stands alone, without click (for a click-free fast path)
    code = "import sys, vaultkeeper.scan.statefile; print('click' in sys.modules)"
    assert (
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout
        == "False\n"
    )


HUGE = "9" * 4301


def huge_memory(name: str, status: str, until: str) -> str:
    return (
        f"---\nname: {name}\ndescription: a lesson\ntype: memory\nstatus: {status}\n"
        f"label: inferred\nholdout_until: {until}\n---\nBody.\n"
    )


def huge_vault(make_vault: MakeVault) -> Path:
    return make_vault(
        {
            "projects/p/memory/status.md": huge_memory("status", HUGE, '"2026-01-01"'),
            "projects/p/memory/until.md": huge_memory("until", "held_out", HUGE),
            "projects/p/memory/due.md": huge_memory("due", "held_out", '"2026-08-01"'),
        }
    )


def test_a_huge_number_is_a_problem_line_and_the_scan_goes_on(make_vault: MakeVault) -> None:
    vault = huge_vault(make_vault)
    report = scan.classify(vault, NOW)
    assert [c.path for c in report.held_out] == ["projects/p/memory/due.md"]
    reasons = {(p.path, p.line): p.reason for p in report.problems}
    for path, line in (("projects/p/memory/status.md", 5), ("projects/p/memory/until.md", 7)):
        assert reasons[(path, line)] == (
            "bad YAML frontmatter: a number too long to read (thousands of digits)"
        )


def test_the_scan_command_exits_0_with_the_problem(make_vault: MakeVault) -> None:
    vault = huge_vault(make_vault)
    env = {"VAULTKEEPER_TODAY": "2026-09-01"}
    result = CliRunner().invoke(cli, ["--vault", str(vault), "scan", "--force"], env=env)
    assert result.exit_code == 0, result.output
    assert "held-out due 1" in result.stdout
    assert "projects/p/memory/until.md:7: bad YAML frontmatter: a number too long" in (
        result.stdout + result.stderr
    )
    later = CliRunner().invoke(cli, ["--vault", str(vault), "report", "--json"], env=env)
    report = json.loads(later.stdout)
    assert len(report["problems"]) == 2


def test_classify_never_writes_and_the_scans_run_says_it_does(
    sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``classify`` with the scan's rows (and a repository tied, so the anchors are
    checked) writes nothing; the scan's own run is ``classify_and_keep``, which writes
    the scan's rows and the anchors'."""
    from vaultkeeper.anchors import vault as suggest
    from vaultkeeper.scan import cache as scancache

    (sample / "state" / config.MACHINE_FILE).write_text(
        json.dumps({"repositories": {"0" * 40: "/nowhere"}})
    )
    saved: list[str] = []
    real_rows, real_anchors = scancache.save, suggest.save_cache
    monkeypatch.setattr(scancache, "save", lambda *a: saved.append("rows") or real_rows(*a))
    monkeypatch.setattr(
        suggest, "save_cache", lambda *a: saved.append("anchors") or real_anchors(*a)
    )
    before = sorted(os.listdir(sample / "state"))
    report = scan.classify(sample, NOW, scancache.ScanCache())
    assert saved == [] and sorted(os.listdir(sample / "state")) == before
    assert scan.classify_and_keep(sample, NOW, scancache.ScanCache()) == report
    assert saved == ["anchors", "rows"]
    assert config.DB_FILE in os.listdir(sample / "state")
