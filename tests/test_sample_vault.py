"""sample_vault/: pure ASCII, every note parses, and a scan finds one of each kind any day."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from tests.conftest import REPO, SAMPLE_VAULT
from tests.reference import load_vault
from vaultkeeper import config
from vaultkeeper.registry.blocks import load_registry
from vaultkeeper.store.model import parse_date
from vaultkeeper.store.templates import render
from vaultkeeper.store.vault import is_memory_path

NOW = dt.datetime.now(dt.timezone.utc)
# today, and days far enough ahead that every "recent" date in the sample has aged
DAYS = [NOW + dt.timedelta(days=d) for d in (0, 1, 91, 365, 5 * 365, 30 * 365)]


def test_every_file_is_pure_ascii() -> None:
    files = [p for p in SAMPLE_VAULT.rglob("*") if p.is_file()]
    assert files
    for path in files:
        raw = path.read_bytes()
        assert raw.isascii(), f"{path.relative_to(REPO)}: non-ASCII byte"
        assert b"\r" not in raw and b"\t" not in raw, path


def test_every_note_parses_and_every_entry_has_the_required_keys() -> None:
    model = load_vault(SAMPLE_VAULT)
    assert model.problems == ()
    entries = {n.rel: n for n in model.entries}
    assert set(entries) == {
        n.rel for n in model.notes if n.rel not in (config.INDEX_FILE, config.REGISTRY_FILE)
    }
    for rel, note in entries.items():
        for key in config.REQUIRED_KEYS:
            assert note.meta.get(key), f"{rel}: no {key}"
        assert note.meta["name"] == Path(rel).stem
        assert note.meta.get("status") in config.STATUSES
        assert note.meta["label"] in config.LABELS
        assert set(note.meta) <= set(config.SCHEMA_KEYS + config.OPTIONAL_KEYS), rel
        if "holdout_until" in note.meta:
            # quoted in the file, a real date once parsed
            assert re.search(r'^holdout_until: "\d{4}-\d\d-\d\d"$', note.text, re.M), rel
            assert parse_date(note.meta["holdout_until"]) is not None
    blocks, problems = load_registry(SAMPLE_VAULT)
    assert problems == []
    assert len(blocks) >= 4
    for block in blocks:
        assert block.problems() == [], block.name


def test_shape_two_projects_a_decision_research_and_the_spec() -> None:
    entries = load_vault(SAMPLE_VAULT).entries
    projects = {n.rel.split("/")[1] for n in entries if n.rel.startswith("projects/")}
    assert len(projects) >= 2
    types = [n.meta["type"] for n in entries]
    for kind in ("memory", "decision", "research", "reference"):
        assert kind in types
    assert (SAMPLE_VAULT / config.SPEC_FILE).read_text() == render("vault-spec.md", {}), (
        "sample_vault/references/vault-spec.md is a stale copy: regenerate it with "
        "`vaultkeeper init` in an empty folder and copy references/vault-spec.md"
    )


def test_index_links_every_entry_and_every_link_resolves() -> None:
    index = (SAMPLE_VAULT / config.INDEX_FILE).read_text()
    start, end = index.index(config.INDEX_START), index.index(config.INDEX_END)
    links = re.findall(r"^- \[\[([^\]|#]+)[^\]]*\]\] - \S", index[start:end], re.M)
    for link in links:
        assert (SAMPLE_VAULT / f"{link}.md").is_file(), link
    entries = {n.rel[: -len(".md")] for n in load_vault(SAMPLE_VAULT).entries}
    assert entries <= set(links)


def test_state_is_ignored_by_git() -> None:
    assert "/state/" in (SAMPLE_VAULT / ".gitignore").read_text().split("\n")
    assert "sample_vault/state/" in (REPO / ".gitignore").read_text().split("\n")


def spec_classify(vault: Path, now: dt.datetime) -> tuple[set[str], set[str], set[str]]:
    """The spec's scheduler rules, computed here from the model, independent of scan.py."""
    today = now.date()
    blocks, _ = load_registry(vault)
    promote = {
        b.name for b in blocks if b.count is not None and b.count >= config.PROMOTE_MIN_COUNT
    }
    prune = {
        b.name
        for b in blocks
        if b.count == 0
        and b.last_used is not None
        and (today - b.last_used).days > config.PRUNE_IDLE_DAYS
    }
    held_out = set()
    for note in load_vault(vault).entries:
        until = parse_date(note.meta.get("holdout_until"))
        if (
            is_memory_path(note.rel)
            and note.meta.get("status") == "held_out"
            and until is not None
            and today >= until
        ):
            held_out.add(note.rel)
    return promote, prune, held_out


@pytest.mark.parametrize("now", DAYS, ids=lambda d: d.date().isoformat())
def test_one_of_each_kind_whatever_day_it_runs(now: dt.datetime) -> None:
    promote, prune, held_out = spec_classify(SAMPLE_VAULT, now)
    assert promote and prune and held_out, (promote, prune, held_out)
    assert not promote & prune  # each block lands in one list


@pytest.mark.parametrize("now", DAYS, ids=lambda d: d.date().isoformat())
def test_the_scanner_agrees(now: dt.datetime) -> None:
    scan = pytest.importorskip("vaultkeeper.scan.classify")
    report = scan.classify(SAMPLE_VAULT, now)
    assert report.problems == ()
    promote, prune, held_out = spec_classify(SAMPLE_VAULT, now)
    assert {c.name for c in report.promote} == promote
    assert {c.name for c in report.prune} == prune
    assert {c.path for c in report.held_out} == held_out
    assert report.summary().startswith(config.SUMMARY_PREFIX)


def test_one_supersession_pair_the_scan_and_lint_respect() -> None:
    from vaultkeeper.lint import lint_vault
    from vaultkeeper.upkeep.supersession import is_superseded, superseded_by, supersedes

    entries = {n.rel: n for n in load_vault(SAMPLE_VAULT).entries}
    old = [rel for rel, note in entries.items() if is_superseded(note)]
    assert old == ["projects/web/memory/old-webpack-config.md"]
    newer = superseded_by(entries[old[0]])
    assert newer == "projects/web/memory/vite-build"
    assert supersedes(entries[f"{newer}.md"]) == [old[0].removesuffix(".md")]
    assert entries[old[0]].meta["status"] == "archived"
    assert entries[f"{newer}.md"].meta["status"] == "active"
    index = (SAMPLE_VAULT / config.INDEX_FILE).read_text()
    assert f"- [[{old[0][:-3]}]] - (superseded by [[{newer}]]) " in index
    assert lint_vault(SAMPLE_VAULT, select=["VK5", "VK6"]).findings == ()


@pytest.mark.parametrize("now", DAYS, ids=lambda d: d.date().isoformat())
def test_the_quick_start_shows_a_duplicate_pair_and_a_stale_lesson(now: dt.datetime) -> None:
    from vaultkeeper.scan.classify import classify

    report = classify(SAMPLE_VAULT, now)
    assert [(p.target("a"), p.target("b")) for p in report.duplicates] == [
        ("pin-test-clock", "pin-the-clock-in-tests")
    ]
    assert "projects/api/memory/paginate-with-cursors.md" in {s.path for s in report.stale}
    assert report.skills_unused == ()  # nothing in the sample is promoted


def test_the_index_is_as_index_generates_it() -> None:
    from vaultkeeper.index.build import generate

    index = (SAMPLE_VAULT / config.INDEX_FILE).read_text()
    assert generate(SAMPLE_VAULT) == {config.INDEX_FILE: index}, "run `vaultkeeper index`"
