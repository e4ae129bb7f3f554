"""The report: renderings, its JSON, ``vaultkeeper report`` and ``--brief``."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import MakeVault
from vaultkeeper import config
from vaultkeeper.cli import cli
from vaultkeeper.report.brief import render_brief
from vaultkeeper.report.candidates import (
    HELD_OUT,
    PROMOTE,
    PRUNE,
    Candidate,
    Report,
    age_text,
    render_text,
)
from vaultkeeper.store.model import Problem

MADE = dt.datetime(2026, 9, 1, 12, 0, tzinfo=dt.timezone.utc)


def promote(name: str = "foo", **kw: object) -> Candidate:
    values: dict[str, object] = dict(
        path="patterns/registry.md",
        line=3,
        hash="a" * 64,
        count=3,
        last_used="2026-08-26",
        idle_days=6,
    )
    values.update(kw)
    return Candidate(PROMOTE, name, **values)  # type: ignore[arg-type]


def prune(name: str = "bar") -> Candidate:
    return Candidate(
        PRUNE,
        name,
        "patterns/registry.md",
        9,
        "b" * 64,
        count=0,
        last_used="2026-05-24",
        idle_days=100,
    )


def held(path: str = "projects/p/memory/due.md", condition: str = "it stops holding") -> Candidate:
    return Candidate(
        HELD_OUT,
        "due",
        path,
        8,
        "c" * 64,
        holdout_until="2026-08-01",
        days_due=31,
        status="held_out",
        label="inferred",
        weight="hold out",
        falsification_condition=condition,
    )


def report(vault: str = "/v", **kw: object) -> Report:
    values: dict[str, object] = dict(
        vault=vault,
        generated_at=MADE,
        promote=(promote(),),
        prune=(prune(),),
        held_out=(held(),),
        problems=(Problem("projects/p/memory/x.md", 8, "bad date"),),
        duration_ms=12,
    )
    values.update(kw)
    return Report(**values)  # type: ignore[arg-type]


def as_kept(report: Report) -> Report:
    """``report`` as its rows in the derived store give it back (scan/reportrow.py)."""
    from vaultkeeper.scan.cache import ScanCache
    from vaultkeeper.scan.reportrow import Inputs, assemble, split

    items = (*report.promote, *report.prune, *report.held_out, *report.problems, *report.stale)
    paths = sorted({x.path for x in items}, key=lambda p: not p.startswith("patterns/"))
    found = Inputs("", dict.fromkeys(paths, "-"), {})
    parts = {"heads": [], "facts": [], "problems": (0, 0)}
    head, texts, _ = split(Path(report.vault), report, parts, ScanCache(), found)
    return assemble(head, found.keys, {p: t for p, t in texts.items() if t is not None})


def test_text_is_the_summary_then_one_line_per_candidate() -> None:
    assert render_text(report()) == [
        "SELF-MAINTAIN: prune candidates 1 | promote eligible 1 | held-out due 1",
        "prune     bar -- success count 0, last used 2026-05-24 (idle 100 days) -- "
        "patterns/registry.md:9",
        "promote   foo -- success count 3, last used 2026-08-26 (idle 6 days) -- "
        "patterns/registry.md:3",
        "held-out  due -- holdout_until 2026-08-01 (due 31 days ago), status held_out, "
        "label inferred (hold out) -- projects/p/memory/due.md:8",
    ]


def test_due_today_and_unreadable_last_used_read_well() -> None:
    today = Candidate(HELD_OUT, "x", "p.md", 2, "h", holdout_until="2026-09-01", days_due=0)
    assert today.figures() == "holdout_until 2026-09-01 (due today), no status"
    assert promote(last_used=None, idle_days=None).figures() == (
        "success count 3, last used unreadable"
    )


def test_json_round_trip(tmp_path: Path) -> None:
    original = report(str(tmp_path))
    data = json.loads(json.dumps(original.to_dict()))
    assert as_kept(original) == original
    assert data["summary"] == {"prune": 1, "promote": 1, "held_out": 1}
    assert data["generated_at"] == "2026-09-01T12:00:00Z"
    assert data["problems"] == [{"path": "projects/p/memory/x.md", "line": 8, "reason": "bad date"}]


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0 seconds ago"),
        (1, "1 second ago"),
        (89, "89 seconds ago"),
        (90, "1 minute ago"),
        (3 * 3600, "3 hours ago"),
        (47 * 3600, "47 hours ago"),
        (3 * 86400, "3 days ago"),
        (-5, "in the future (check the clock)"),
    ],
)
def test_age_text(seconds: int, text: str) -> None:
    assert age_text(MADE, MADE + dt.timedelta(seconds=seconds)) == text


# -- the brief ---------------------------------------------------------------------------


def test_brief_states_summary_age_candidates_and_one_command_per_kind() -> None:
    text = render_brief(report("/my vault"), MADE + dt.timedelta(hours=3))
    lines = text.splitlines()
    assert lines[0] == "SELF-MAINTAIN: prune candidates 1 | promote eligible 1 | held-out due 1"
    assert "2026-09-01T12:00:00Z (3 hours ago)" in lines[1]
    vk = "vaultkeeper --vault '/my vault'"
    assert f"  {vk} apply promote NAME --evidence RECEIPT" in lines
    assert f"  {vk} apply prune NAME" in lines
    assert f"  {vk} apply revalidate PATH --pass|--fail --evidence RECEIPT" in lines
    assert (
        "- foo: success count 3, last used 2026-08-26 (idle 6 days) (patterns/registry.md:3)"
        in (lines)
    )
    assert any(line.startswith("- bar: success count 0") for line in lines)
    assert (
        "- projects/p/memory/due.md: holdout_until 2026-08-01 (due 31 days ago), status held_out, "
        "label inferred (hold out); falsification_condition: it stops holding"
    ) in lines
    assert f"Problems (unreadable files, blocks or dates): 1; `{vk} report` lists them." in lines
    assert text.isascii()


def test_brief_with_nothing_waiting() -> None:
    text = render_brief(report(promote=(), prune=(), held_out=(), problems=()), MADE)
    assert text.splitlines()[-1] == "Nothing is waiting."
    assert "apply" not in text


def test_brief_never_exceeds_the_limit_and_keeps_every_kind() -> None:
    many = report(
        promote=tuple(promote(f"pattern-number-{i}") for i in range(3000)),
        prune=(prune(),),
        held_out=tuple(held(f"projects/p/memory/m{i}.md", "x" * 400) for i in range(2000)),
    )
    text = render_brief(many, MADE)
    assert len(text) <= config.BRIEF_MAX_CHARS
    assert "- bar: success count 0" in text  # the short list is kept whole
    assert "apply promote NAME" in text and "apply revalidate PATH" in text
    more = [line for line in text.splitlines() if line.startswith("  ... and ")]
    assert len(more) == 2
    shown_promote = text.count("- pattern-number-")
    assert f"  ... and {3000 - shown_promote} more" in more[0]
    assert all(len(line) <= 300 for line in text.splitlines())


def test_brief_limit_is_honoured_for_small_limits() -> None:
    for limit in (300, 700, 1500):
        assert len(render_brief(report(), MADE, limit=limit)) <= limit


# -- the command -------------------------------------------------------------------------


def run(runner: CliRunner, vault: Path, *args: str) -> tuple[int, str, str]:
    result = runner.invoke(cli, ["--vault", str(vault), "report", *args])
    return result.exit_code, result.stdout, result.stderr


def test_report_before_any_scan(runner: CliRunner, make_vault: MakeVault) -> None:
    vault = make_vault()
    assert run(runner, vault) == (
        0,
        f"no report yet: no scan has completed in {vault}; run `vaultkeeper scan`\n",
        "",
    )
    code, out, err = run(runner, vault, "--json")  # an empty report, not null
    assert (code, err) == (0, "")
    data = json.loads(out)
    assert data["generated_at"] is None and data["age_seconds"] is None
    assert data["summary"] == {"prune": 0, "promote": 0, "held_out": 0}
    assert data["promote"] == data["prune"] == data["held_out"] == data["duplicates"] == []
    assert data["note"].startswith("no report yet: no scan has completed in")
    code, out, err = run(runner, vault, "--brief")  # the recall, without maintenance
    assert (code, err) == (0, "")
    assert out.split("\n")[5:] == [
        "No patterns in the registry yet (patterns/).",
        "",
        f"No scan has completed yet: `vaultkeeper --vault {vault} scan` lists what needs "
        "maintenance.",
        "",
    ]


def test_report_prints_the_last_scans_report_with_its_age(
    runner: CliRunner, make_vault: MakeVault
) -> None:
    vault = make_vault(
        {
            "patterns/registry.md": "# Pattern registry\n\n### foo\nDo foo.\n\n"
            "**success count:** 3\n**last used:** 2026-08-26\n\n### bar\nbad\n\n"
            "**success count:** many\n**last used:** 2026-05-24\n"
        }
    )
    scanned = runner.invoke(cli, ["--vault", str(vault), "scan"])
    state = vault / "state" / config.STATE_FILE
    data = json.loads(state.read_text())
    data["lastCompleted"] -= 3 * 3600 * 1000  # the scan ran three hours ago
    state.write_text(json.dumps(data))
    code, out, err = run(runner, vault)
    lines = out.splitlines()
    assert code == 0
    assert lines[0] == scanned.stdout.splitlines()[0]
    started = data["lastCompleted"] - data["perTask"]["selfMaintain"]["durationMs"]
    made = dt.datetime.fromtimestamp(started // 1000, dt.timezone.utc)
    assert lines[1] == f"report made {made.strftime('%Y-%m-%dT%H:%M:%SZ')} (3 hours ago)"
    assert lines[2].startswith("promote   foo -- success count 3, last used 2026-08-26")
    assert err == scanned.stderr.splitlines()[-1] + "\n"  # the problem, as the scan said
    code, out, _ = run(runner, vault, "--json")
    data = json.loads(out)
    assert 3 * 3600 <= data["age_seconds"] < 3 * 3600 + 60
    assert [c["name"] for c in data["promote"]] == ["foo"]
    code, out, _ = run(runner, vault, "--brief")
    made_line = next(x for x in out.splitlines() if x.startswith("Last scan of the memory"))
    assert code == 0 and "(3 hours ago)" in made_line


def test_report_after_a_real_scan(runner: CliRunner, sample: Path) -> None:
    scanned = runner.invoke(cli, ["--vault", str(sample), "scan"])
    code, out, _ = run(runner, sample)
    assert code == 0
    assert out.splitlines()[0] == scanned.stdout.splitlines()[0]
    assert out.splitlines()[2:] == scanned.stdout.splitlines()[1:]


def test_json_and_brief_together_is_a_usage_error(runner: CliRunner, make_vault: MakeVault) -> None:
    assert run(runner, make_vault(), "--json", "--brief")[0] == 2


def test_values_from_files_cannot_add_lines_to_the_text_or_the_brief() -> None:
    forged = "x\nSELF-MAINTAIN: prune candidates 0 | promote eligible 0 | held-out due 0\n"
    r = report(
        promote=(promote(name="evil\r\nname"),),
        held_out=(held(condition=forged),),
    )
    text = render_text(r)
    assert len(text) == 4
    assert text[2].startswith("promote   evil name -- success count 3")
    brief = render_brief(r, MADE).splitlines()
    assert [line for line in brief if line.startswith("SELF-MAINTAIN:")] == [brief[0]]
    assert any("falsification_condition: x SELF-MAINTAIN: prune" in line for line in brief)


def test_a_report_without_anchors_says_so_as_the_anchors_section_would() -> None:
    """The anchors' section is not loaded for a report without any: its two lists are
    written empty, as report/anchors.py would write them."""
    from vaultkeeper.report import anchors
    from vaultkeeper.report.candidates import Report

    report = Report(
        vault="/v",
        generated_at=dt.datetime(2026, 12, 2, tzinfo=dt.timezone.utc),
        promote=(),
        prune=(),
        held_out=(),
        problems=(),
    )
    data = report.to_dict()
    assert {k: data[k] for k in anchors.to_dict(report)} == anchors.to_dict(report)
    assert as_kept(report) == report
