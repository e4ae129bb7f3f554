"""anchors/vault.py's suggestions: the suggestions kept under state/ stay bounded, and the report
lists only what is still worth accepting."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from tests import anchors_fixture as fx
from tests.git_helper import isolate_git
from vaultkeeper.anchors import repo
from vaultkeeper.anchors import vault as suggest

TODAY = dt.date(2026, 12, 1)


def test_the_kept_suggestions_are_the_newest_hundred_and_none_older_than_30_days(
    tmp_path: Path,
) -> None:
    vault = tmp_path / "vault"
    (vault / "state").mkdir(parents=True)
    entries = {
        f"projects/p/memory/e{n:03d}.md": {
            "paths": ["a.py"], "session": "s",
            "date": (TODAY - dt.timedelta(days=n % 40)).isoformat(),
        }
        for n in range(300)
    }  # fmt: skip
    suggest.save(vault, entries, TODAY)
    kept = suggest.load(vault)
    assert len(kept) == suggest.MAX_ENTRIES == 100
    oldest = min(v["date"] for v in kept.values())
    assert oldest >= (TODAY - dt.timedelta(days=suggest.MAX_AGE_DAYS)).isoformat()
    newest = sorted((v["date"] for v in entries.values()), reverse=True)[:100]
    assert sorted(v["date"] for v in kept.values()) == sorted(newest)
    assert (vault / "state/machine.json").stat().st_size < 20_000


def test_the_report_drops_what_is_anchored_gone_masked_or_of_an_archived_lesson(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_git(monkeypatch, tmp_path)
    top = tmp_path / "shop"
    fx.build_repo(top)
    (top / "src/ghp_0123456789abcdefghijklmnopqrstuvwxyzAB.py").write_text("x = 1\n")
    vault = tmp_path / "vault"
    memory = vault / "projects/shop/memory"
    memory.mkdir(parents=True)
    (vault / "state").mkdir()
    assert repo.tie(vault, "shop", str(top)) is not None
    head = "---\nname: {n}\ndescription: d\ntype: memory\nstatus: {s}\n"
    (memory / "live.md").write_text(
        head.format(n="live", s="active")
        + 'anchors:\n  - {at: "src/cart.py::round_cart"}\n---\nbody\n'
    )
    (memory / "old.md").write_text(head.format(n="old", s="archived") + "---\nbody\n")
    paths = ["src/cart.py", "src/config.py", "src/gone.py", "../x.py",
             "src/ghp_0123456789abcdefghijklmnopqrstuvwxyzAB.py"]  # fmt: skip
    entries = {
        f"projects/shop/memory/{n}.md": {"paths": paths, "session": "s", "date": "2026-12-01"}
        for n in ("live", "old", "missing")
    }
    machine = vault / "state/machine.json"  # beside the repository's path there
    kept = json.loads(machine.read_text())
    machine.write_text(json.dumps({**kept, "anchor_suggestions": entries}))
    got = suggest.for_report(vault, {})
    # src/cart.py is anchored (by a definition in it) and gone.py never was there
    assert got == [suggest.Suggestion("projects/shop/memory/live.md", "live", ("src/config.py",))]
