"""The report patched where files changed (scan/last.py) is the full classification's.

Seeded random sequences of hand edits (counters, dates, promoted lines, a block's words,
a lesson's status, date and description, lessons added, broken and gone, the usage log
and the journal) and commands (`use`, `apply promote`, `apply supersede`): after each,
the report `derived` gives (with the brief's patterns and status's blocks) equals the one
classified whole from the files, the one read back from the rows the patch wrote, and
the one given with the database deleted; and a counter edit is patched, not classified
whole. Half the runs take stat keys as a file system with 2-second mtimes would, where
a hand edit in the tick of a command's write keeps size and mtime: only the bytes' digest
kept with a racy key tells. A command that writes keeps the rows of what it wrote: the
next reader patches nothing.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from vaultkeeper.cli import cli
from vaultkeeper.scan import last, reportrow
from vaultkeeper.scan.statefile import read_state
from vaultkeeper.store import db

WORDS = ["retry", "clock", "flaky", "cursor", "cache", "socket", "deploy", "token", "batch"]
WORDS += ["lock", "pool", "merge"]


def _block(rng: random.Random, n: int) -> str:
    words = " ".join(rng.sample(WORDS, 4))
    count, day = rng.choice([0, 1, 2, 3, 7]), f"2025-{rng.randint(1, 12):02d}-11"
    counters = f"**success count:** {count}\n**last used:** {day}\n"
    return f"### p{n}\nUse {words} first. Then more.\n\n{counters}"


def _lesson(rng: random.Random, n: int) -> str:
    status = rng.choice(["active", "held_out", "archived"])
    until = f"202{rng.randint(4, 7)}-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}"
    words = " ".join(rng.sample(WORDS, 4))
    return (
        f"---\nname: l{n}\ndescription: {words}\ntype: memory\nstatus: {status}\nlabel: fact\n"
        f'falsification_condition: "x"\nholdout_until: "{until}"\nprovenance: []\n---\nBody.\n'
    )


def _vault(make_vault: Any, rng: random.Random) -> Path:
    files = {
        f"patterns/registry{k}.md": "# R\n\n" + "\n".join(_block(rng, 10 * k + i) for i in range(6))
        for k in range(2)
    }
    for n in range(12):
        files[f"projects/p{n % 3}/memory/l{n}.md"] = _lesson(rng, n)
    vault: Path = make_vault(files)
    return vault


def coarse_key(info: os.stat_result, limit: int) -> tuple[str, bool]:
    """db.stat_key on a file system with FAT's clock: mtimes in 2-second ticks, and a
    ctime that is the file's creation (a rewrite keeps it)."""
    mtime = info.st_mtime_ns // 2_000_000_000 * 2_000_000_000
    return f"[{info.st_dev},{info.st_ino},{info.st_size},{mtime},0]", mtime < limit


def _same_tick(path: Path, old: str, new: str) -> None:
    """A hand edit of ``path`` that keeps its size and mtime: only its bytes say it changed."""
    assert len(old) == len(new)
    before = path.stat()
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def _edit(vault: Path, rng: random.Random, runner: CliRunner, step: int) -> None:
    registry = [p for p in sorted((vault / "patterns").glob("*.md")) if "\n**" in p.read_text()]
    lessons = sorted((vault / "projects").glob("*/memory/*.md"))
    what = rng.randrange(12)
    if what == 11:  # in the tick of the last write: size and mtime kept, bytes changed
        path = rng.choice(registry + lessons) if registry or lessons else None
        text = "" if path is None else path.read_text()
        for old, new in (("count:** ", "count:**x"), ("status: active", "status: Active")):
            if old in text:
                _same_tick(path, old, new)  # type: ignore[arg-type]
                return
        what = 10
    if what <= 3 and registry:  # a counter, a date, a promoted line: the registry's words unchanged
        path = rng.choice(registry)
        lines = path.read_text().split("\n")
        at = rng.choice([i for i, x in enumerate(lines) if x.startswith("**")])
        if what == 0:
            lines[at] = f"**success count:** {rng.choice([0, 1, 2, 5, 'many'])}"
        elif what == 1:
            lines[at] = f"**last used:** 202{rng.randint(3, 6)}-0{rng.randint(1, 9)}-11"
        else:
            lines.insert(at + 1, "**promoted:** 2025-01-01 -> [[skills/x/SKILL]]")
        path.write_text("\n".join(lines))
    elif what == 4 and registry:  # a block's first sentence: its words change
        path = rng.choice(registry)
        path.write_text(path.read_text().replace("Use ", f"Use {rng.choice(WORDS)} ", 1))
    elif what in (5, 6) and lessons:  # a lesson's status, hold-out date or description
        path = rng.choice(lessons)
        text = path.read_text().split("---\n")[1].split("\n")
        key = rng.choice(["status", "holdout_until", "description"])
        value = {
            "status": rng.choice(["active", "held_out", "archived"]),
            "holdout_until": f'"202{rng.randint(4, 7)}-05-05"',
            "description": " ".join(rng.sample(WORDS[:6], 5)),
        }[key]
        text = [f"{key}: {value}" if x.startswith(f"{key}:") else x for x in text]
        path.write_text("---\n" + "\n".join(text) + "---\nBody.\n")
    elif what == 7:  # a lesson added, broken or gone
        pick = rng.randrange(3)
        if pick == 0 or not lessons:
            new = vault / f"projects/p{rng.randrange(4)}/memory/n{step}.md"
            new.parent.mkdir(parents=True, exist_ok=True)
            new.write_text(_lesson(rng, 100 + step))
        elif pick == 1:
            rng.choice(lessons).write_text("---\nname: [broken\n---\n")
        else:
            rng.choice(lessons).unlink()
    elif what == 8:  # the usage log and the journal, as ingest and a re-check write them
        state = vault / "state"
        target = rng.choice([*(str(p.relative_to(vault)) for p in lessons), "p1", "p12"])
        event = {"kind": "cite", "target": target, "date": "2026-11-01", "session": f"s{step}"}
        with (state / "uses.jsonl").open("a") as fh:
            fh.write(json.dumps(event) + "\n")
        record = {"ts": "2026-11-02T00:00:00Z", "path": target, "to": "active", "outcome": "act"}
        with (state / "journal.jsonl").open("a") as fh:
            fh.write(json.dumps(record) + "\n")
    else:  # a command
        report = json.loads(runner.invoke(cli, ["--vault", str(vault), "report", "--json"]).stdout)
        active = [str(p.relative_to(vault)) for p in lessons if "status: active" in p.read_text()]
        if what == 9:
            argv = ["use", f"p{rng.choice([0, 1, 2, 10, 11])}"]
        elif report["promote"] and rng.random() < 0.5:
            argv = ["apply", "promote", report["promote"][0]["name"], "--evidence", "_index.md:1"]
        elif len(active) >= 2:
            argv = ["apply", "supersede", active[0], "--by", active[1], "--evidence", "_index.md:1"]
        else:
            return
        runner.invoke(cli, ["--vault", str(vault), *argv])


def _derived_whole(vault: Path) -> Any:
    """What `derived` gives when it classifies the vault whole (the rows left as they were)."""
    data = read_state(vault).data
    when = last.started(data)
    assert when is not None
    got = last._whole(vault, when, reportrow.inputs(vault), keep=False)
    report = last._handled(vault, got.report._replace(vault=str(vault)), last.journal_mark(data))
    return got._replace(report=report)


def _whole(vault: Path) -> Any:
    return _derived_whole(vault).report


@pytest.mark.parametrize("seed", range(8))
def test_the_patched_report_is_the_full_classifications(
    seed: int, make_vault: Any, runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if seed % 2:  # a file system with 2-second mtimes: a same-tick edit keeps the stat key
        monkeypatch.setattr(db, "stat_key", coarse_key)
    rng = random.Random(seed)
    vault = _vault(make_vault, rng)
    done = runner.invoke(cli, ["--vault", str(vault), "scan", "--force"])
    assert done.exit_code == 0, done.output
    for step in range(14):
        _edit(vault, rng, runner, step)
        got = last.derived(vault)
        assert got is not None
        patched = got.report
        assert got == _derived_whole(vault), f"step {step}"
        assert last.derived(vault) == got, f"step {step}"  # the rows the patch wrote, read back
        copy = tmp_path / f"copy{step}"
        shutil.copytree(vault, copy, symlinks=True)
        for stored in (copy / "state").glob("vaultkeeper.db*"):
            stored.unlink()
        alone = last.derived(copy)
        assert alone is not None and alone.report._replace(vault=str(vault)) == patched
        assert alone[1:] == got[1:], f"step {step}"  # the brief's patterns, status's blocks
        if rng.random() < 0.2:
            runner.invoke(cli, ["--vault", str(vault), "scan", "--force"])


def test_a_counter_edit_is_patched_not_classified_whole(
    make_vault: Any, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = _vault(make_vault, random.Random(1))
    runner.invoke(cli, ["--vault", str(vault), "scan", "--force"])
    assert last.last_report(vault) is not None
    runner.invoke(cli, ["--vault", str(vault), "use", "p1"])

    def whole(*args: Any) -> Any:
        raise AssertionError("classified whole")

    monkeypatch.setattr(last, "_whole", whole)
    report = last.last_report(vault)
    assert report is not None
    monkeypatch.undo()
    assert report == _whole(vault)


def test_a_basis_of_another_shape_is_classified_whole_not_a_traceback(
    make_vault: Any, runner: CliRunner
) -> None:
    import sqlite3

    vault = _vault(make_vault, random.Random(2))
    runner.invoke(cli, ["--vault", str(vault), "scan", "--force"])
    with sqlite3.connect(vault / "state" / "vaultkeeper.db") as conn:
        rows = conn.execute(
            "SELECT path, basis FROM report_files WHERE path LIKE 'patterns/%' AND basis NOT NULL"
        )
        for path, text in rows.fetchall():
            shape = json.loads(text)[0]
            conn.execute(
                "UPDATE report_files SET basis = ? WHERE path = ?", (json.dumps([[shape[0]]]), path)
            )
    runner.invoke(cli, ["--vault", str(vault), "use", "p1"])
    assert last.last_report(vault) == _whole(vault)


def test_a_lesson_whose_date_json_cannot_carry_is_patched_or_classified_whole_alike(
    make_vault: Any, runner: CliRunner
) -> None:
    vault = _vault(make_vault, random.Random(3))
    lesson = vault / "projects/p0/memory/l0.md"
    lesson.write_text(
        lesson.read_text().replace('holdout_until: "', "holdout_until: 2025-01-01 10:00:00 #")
    )
    assert runner.invoke(cli, ["--vault", str(vault), "scan", "--force"]).exit_code in (0, 1)
    for edit in range(2):
        runner.invoke(cli, ["--vault", str(vault), "use", "p1"])
        if edit:
            (vault / "projects/p1/memory/l1.md").write_text(_lesson(random.Random(4), 1))
        assert last.last_report(vault) == _whole(vault)


def test_a_patch_writes_only_the_changed_files_rows(make_vault: Any, runner: CliRunner) -> None:
    import sqlite3

    vault = _vault(make_vault, random.Random(5))
    runner.invoke(cli, ["--vault", str(vault), "scan", "--force"])

    def rows() -> dict[str, tuple[Any, ...]]:
        with sqlite3.connect(vault / "state" / "vaultkeeper.db") as conn:
            found = conn.execute("SELECT path, key, items, basis FROM report_files")
            return {r[0]: r[1:] for r in found}

    before = rows()
    assert any(p.startswith("projects/") for p in before)
    done = runner.invoke(cli, ["--vault", str(vault), "use", "p1"])
    assert done.exit_code == 0, done.output
    got = last.derived(vault)
    assert got is not None and got.report == _whole(vault)
    after = rows()
    changed = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
    assert changed == {"patterns/registry0.md", "state/uses.jsonl", "state/journal.jsonl"}


def test_a_reader_with_nothing_changed_reads_no_registry_row(
    make_vault: Any, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The top patterns and blocks without counters come with the report's own row: a
    registry row's basis past reading leaves a reader with nothing changed unmoved."""
    import sqlite3

    vault = _vault(make_vault, random.Random(3))
    runner.invoke(cli, ["--vault", str(vault), "scan", "--force"])
    kept = last.derived(vault)
    assert kept is not None and kept.patterns is not None
    with sqlite3.connect(vault / "state" / "vaultkeeper.db") as conn:
        conn.execute("UPDATE report_files SET basis = '{' WHERE path LIKE 'patterns/%'")

    def whole(*args: Any) -> Any:
        raise AssertionError("classified whole")

    monkeypatch.setattr(last, "_whole", whole)
    assert last.derived(vault) == kept


@pytest.mark.parametrize("action", ["promote", "supersede"])
def test_a_command_keeps_the_rows_of_what_it_wrote(
    action: str, make_vault: Any, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rows are kept by the writer, right after its write (within the racy window):
    the next reader patches nothing; a same-tick hand edit after it (size and mtime kept,
    on a file system with 2-second mtimes) is still seen, by the bytes' digest."""
    monkeypatch.setattr(db, "stat_key", coarse_key)
    vault = _vault(make_vault, random.Random(6))
    runner.invoke(cli, ["--vault", str(vault), "scan", "--force"])
    report = json.loads(runner.invoke(cli, ["--vault", str(vault), "report", "--json"]).stdout)
    if action == "promote":
        argv = ["promote", report["promote"][0]["name"], "--evidence", "_index.md:1"]
        path = vault / report["promote"][0]["path"]
        old, new = "count:** ", "count:**x"
    else:
        active = [
            str(p.relative_to(vault))
            for p in sorted((vault / "projects").glob("*/memory/*.md"))
            if "status: active" in p.read_text()
        ]
        argv = ["supersede", active[0], "--by", active[1], "--evidence", "_index.md:1"]
        path = vault / active[1]
        old, new = "name: l", "name: ["  # a broken frontmatter: a problem
    done = runner.invoke(cli, ["--vault", str(vault), "apply", *argv])
    assert done.exit_code == 0, done.output

    def patched(*args: Any) -> Any:
        raise AssertionError("patched by the reader")

    with monkeypatch.context() as m:
        m.setattr(last, "_patched", patched)
        m.setattr(last, "_whole", patched)
        kept = last.derived(vault)
    assert kept == _derived_whole(vault)
    _same_tick(path, old, new)
    got = last.derived(vault)
    assert got == _derived_whole(vault)
    assert got is not None and kept is not None and got.report != kept.report


@pytest.mark.parametrize("when", ["after the scan", "before the writer keeps its rows"])
def test_a_file_swapped_for_a_symlink_out_of_the_vault_is_reported_never_read(
    when: str, make_vault: Any, runner: CliRunner, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A registry or memory file replaced by a symlink out of the vault: the report says
    so (as a full classification does) and nothing is read through it, whether the link
    came after the scan or between a command's write and the rows it keeps."""
    vault = _vault(make_vault, random.Random(3))
    runner.invoke(cli, ["--vault", str(vault), "scan", "--force"])
    report = json.loads(runner.invoke(cli, ["--vault", str(vault), "report", "--json"]).stdout)
    name, rel = report["promote"][0]["name"], report["promote"][0]["path"]
    lesson = sorted((vault / "projects").glob("*/memory/*.md"))[0]
    away = tmp_path / "away"
    away.mkdir()

    def swap() -> None:
        for path in (vault / rel, lesson):
            outside = away / path.name
            outside.write_text(path.read_text().replace("count:** ", "count:**9"))
            path.unlink()
            path.symlink_to(outside)

    reads: list[str] = []
    real_open = os.open

    def watched(path: Any, *args: Any, **kw: Any) -> Any:
        fd = real_open(path, *args, **kw)
        reads.append(os.path.realpath(path))  # opened: read through
        return fd

    if when == "after the scan":
        swap()
    else:
        wrote = last.wrote

        def swapped(vault: Path, written: list[str]) -> None:
            swap()
            with monkeypatch.context() as m:
                m.setattr(os, "open", watched)
                wrote(vault, written)

        monkeypatch.setattr(last, "wrote", swapped)
        argv = ["apply", "promote", name, "--evidence", "_index.md:1"]
        assert runner.invoke(cli, ["--vault", str(vault), *argv]).exit_code == 0
    with monkeypatch.context() as m:
        m.setattr(os, "open", watched)
        got = last.derived(vault)
    assert not [p for p in reads if p.startswith(str(away.resolve()) + os.sep)]
    assert got == _derived_whole(vault)
    out = {p.path for p in got.report.problems if "symlink to outside" in p.reason}
    assert out == {rel, str(lesson.relative_to(vault))}


def test_a_symlink_out_of_the_vault_at_the_scan_is_reported_until_it_goes(
    make_vault: Any, runner: CliRunner, tmp_path: Path
) -> None:
    vault = _vault(make_vault, random.Random(3))
    (tmp_path / "away.md").write_text("### q\nUse it.\n")
    links = [vault / "patterns/linked.md", vault / "projects/p0/memory/linked.md"]
    for link in links:
        link.symlink_to(tmp_path / "away.md")
    runner.invoke(cli, ["--vault", str(vault), "scan", "--force"])
    for n in range(len(links) + 1):
        got = last.derived(vault)
        assert got == _derived_whole(vault)
        out = {p.path for p in got.report.problems if "symlink to outside" in p.reason}
        assert out == {str(link.relative_to(vault)) for link in links[n:]}
        if n < len(links):
            links[n].unlink()
