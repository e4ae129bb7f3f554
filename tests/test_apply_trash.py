"""Trash and restore round-trips: byte-identical when nothing changed, lossless when it did."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import snapshot
from pty_helper import run_on_pty

from tests.conftest import MakeVault
from vaultkeeper.apply import journal as queue
from vaultkeeper.apply import prune
from vaultkeeper.apply.batch import apply_decision
from vaultkeeper.apply.decision import Decision
from vaultkeeper.cli import cli
from vaultkeeper.registry.blocks import find_block

NOW = dt.datetime(2026, 12, 1, 9, 30, tzinfo=dt.timezone.utc)
HEAD = "# Pattern registry\n\nIntro.\n\n"
ALPHA = "### alpha\nAlpha body.\n\n**success count:** 3\n**last used:** 2026-10-01\n"
BETA = "### beta\nBeta body.\n\n**success count:** 0\n**last used:** 2025-01-01\n"
GAMMA = "### gamma\nGamma body.\n\n**success count:** 1\n**last used:** 2026-11-01\n"
REGISTRY = HEAD + ALPHA + "\n" + BETA + "\n\n" + GAMMA


def delete(vault: Path, target: str):
    """What a person's yes does (the prompt itself is tested on a real pty elsewhere)."""
    return prune.carry_out(vault, Decision("prune", target), NOW, None, "a person answered yes")


def restore(vault: Path, trash_id: str, dry_run: bool = False):
    return apply_decision(vault, Decision("restore", trash_id), NOW, dry_run=dry_run)


@pytest.mark.parametrize("name", ["alpha", "beta", "gamma"])
@pytest.mark.parametrize("nl", ["\n", "\r\n"])
@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
def test_block_round_trip_is_byte_identical(make_vault, name: str, nl: str, bom: bytes) -> None:
    original = bom + REGISTRY.replace("\n", nl).encode()
    vault = make_vault({"patterns/registry.md": original})
    done = delete(vault, name)
    registry = vault / "patterns/registry.md"
    assert done.outcome == "act"
    assert f"### {name}" not in registry.read_text(encoding="utf-8-sig")
    assert registry.read_bytes().startswith(bom)
    trashed = vault / ".trash" / done.id
    assert (trashed / f"{name}.md").read_bytes().decode().lstrip("\r\n").startswith(f"### {name}")
    meta = json.loads((trashed / "trash.json").read_text())
    assert (meta["kind"], meta["source"], meta["name"]) == ("block", "patterns/registry.md", name)
    back = restore(vault, done.id)
    assert back.outcome == "act" and "as before the prune" in back.reason
    assert registry.read_bytes() == original
    assert not trashed.exists()
    record = json.loads((vault / "state/journal.jsonl").read_text().splitlines()[-1])
    assert (record["action"], record["target"], record["id"]) == (
        "restore", "patterns/registry.md", done.id,
    )  # fmt: skip
    assert record["hash_after"] == meta["hash_before"]


def test_only_block_in_a_file(make_vault) -> None:
    vault = make_vault({"patterns/registry.md": ALPHA})
    done = delete(vault, "alpha")
    assert (vault / "patterns/registry.md").read_text() == ""
    restore(vault, done.id)
    assert (vault / "patterns/registry.md").read_text() == ALPHA


def test_file_round_trip_is_byte_identical(make_vault) -> None:
    raw = b"---\r\nname: m\r\n---\r\nbody \xe2\x80\x94 text\r\n"
    vault = make_vault({"projects/p/memory/m.md": raw})
    done = delete(vault, "projects/p/memory/m.md")
    assert done.outcome == "act"
    assert not (vault / "projects/p/memory/m.md").exists()
    assert (vault / ".trash" / done.id / "m.md").read_bytes() == raw
    restore(vault, done.id)
    assert (vault / "projects/p/memory/m.md").read_bytes() == raw


def test_restore_onto_a_file_changed_elsewhere_goes_back_to_its_place(make_vault) -> None:
    vault = make_vault({"patterns/registry.md": REGISTRY})
    done = delete(vault, "beta")
    registry = vault / "patterns/registry.md"
    delta = "\n### delta\nNew since.\n\n**success count:** 0\n**last used:** 2026-11-30\n"
    registry.write_text(registry.read_text() + delta)
    back = restore(vault, done.id)
    assert "its original place" in back.reason
    assert registry.read_text() == REGISTRY + delta


def test_restore_when_the_neighbours_changed_appends(make_vault) -> None:
    vault = make_vault({"patterns/registry.md": REGISTRY})
    done = delete(vault, "beta")
    registry = vault / "patterns/registry.md"
    edited = registry.read_text().replace("### gamma", "### gamma-renamed")
    registry.write_text(edited)
    back = restore(vault, done.id)
    assert "appended at the end" in back.reason
    assert registry.read_text() == edited + "\n" + BETA
    assert find_block(vault, "beta").count == 0


def test_restore_refuses_to_duplicate_a_recreated_block(make_vault) -> None:
    vault = make_vault({"patterns/registry.md": REGISTRY})
    done = delete(vault, "beta")
    registry = vault / "patterns/registry.md"
    registry.write_text(registry.read_text() + "\n" + BETA)
    before = snapshot(vault)
    back = restore(vault, done.id)
    assert back.outcome == "defer" and "exists again" in back.reason
    assert snapshot(vault) == before  # the trashed copy stays in .trash/


def test_restore_refuses_to_overwrite_a_recreated_file(make_vault) -> None:
    vault = make_vault({"projects/p/memory/m.md": "old\n"})
    done = delete(vault, "projects/p/memory/m.md")
    (vault / "projects/p/memory/m.md").write_text("new\n")
    back = restore(vault, done.id)
    assert back.outcome == "defer" and "exists and differs" in back.reason
    assert (vault / "projects/p/memory/m.md").read_text() == "new\n"
    assert (vault / ".trash" / done.id / "m.md").read_text() == "old\n"


def test_restore_recreates_a_vanished_registry_file(make_vault) -> None:
    vault = make_vault({"patterns/extra.md": HEAD + ALPHA})
    done = delete(vault, "alpha")
    (vault / "patterns/extra.md").unlink()
    back = restore(vault, done.id)
    assert "was gone" in back.reason
    assert (vault / "patterns/extra.md").read_text() == ALPHA


def test_restore_twice_is_silence(make_vault) -> None:
    vault = make_vault({"patterns/registry.md": REGISTRY})
    done = delete(vault, "alpha")
    assert restore(vault, done.id).outcome == "act"
    again = restore(vault, done.id)
    assert again.outcome == "silence" and "already restored" in again.reason


def test_restore_dry_run_writes_nothing(make_vault) -> None:
    vault = make_vault({"patterns/registry.md": REGISTRY})
    done = delete(vault, "beta")
    before = snapshot(vault, skip_state=False)
    dry = restore(vault, done.id, dry_run=True)
    assert dry.dry_run and "+### beta" in dry.diff
    assert snapshot(vault, skip_state=False) == before


@pytest.mark.parametrize("bad", ["../../etc", "nope", "20261201-101500-zzzzzz"])
def test_bad_or_unknown_ids(make_vault, bad: str) -> None:
    vault = make_vault({})
    outcome = restore(vault, bad)
    assert outcome.outcome == "defer"
    assert "not a trash id" in outcome.reason or "no such deletion" in outcome.reason


def test_unknown_well_formed_id(make_vault) -> None:
    vault = make_vault({})
    outcome = restore(vault, "20261201-101500-abcdef")
    assert outcome.outcome == "defer" and "no such deletion" in outcome.reason


def test_tampered_metadata_cannot_restore_outside(make_vault, tmp_path: Path) -> None:
    vault = make_vault({"projects/p/memory/m.md": "x\n"})
    done = delete(vault, "projects/p/memory/m.md")
    meta_path = vault / ".trash" / done.id / "trash.json"
    meta = json.loads(meta_path.read_text())
    meta["source"] = "../escaped.md"
    meta_path.write_text(json.dumps(meta))
    outcome = restore(vault, done.id)
    assert outcome.outcome == "defer" and "outside the vault" in outcome.reason
    assert not (tmp_path / "escaped.md").exists()


@pytest.mark.parametrize(
    "tamper",
    [
        {"start": "abc"},  # was a ValueError traceback
        {"start": -3},  # would go back 3 lines from the end, "as before the prune"
        {"start": True},
        {"start": None},
    ],
)
def test_tampered_block_position_is_refused_and_kept(make_vault, tamper: dict) -> None:
    vault = make_vault({"patterns/registry.md": REGISTRY})
    done = delete(vault, "beta")
    meta_path = vault / ".trash" / done.id / "trash.json"
    meta_path.write_text(json.dumps({**json.loads(meta_path.read_text()), **tamper}))
    before = snapshot(vault)
    outcome = restore(vault, done.id)
    assert outcome.outcome == "defer"
    assert outcome.reason == f".trash/{done.id}/trash.json: not a vaultkeeper trash record"
    assert snapshot(vault) == before


def test_a_record_without_its_id_still_restores_by_folder_name(make_vault) -> None:
    vault = make_vault({"patterns/registry.md": REGISTRY})
    done = delete(vault, "beta")
    meta_path = vault / ".trash" / done.id / "trash.json"
    meta = json.loads(meta_path.read_text())
    del meta["id"]  # was a KeyError traceback
    meta_path.write_text(json.dumps(meta))
    outcome = restore(vault, done.id)
    assert outcome.outcome == "act" and outcome.id == done.id
    assert (vault / "patterns/registry.md").read_text() == REGISTRY


@pytest.mark.parametrize(
    ("target", "link"),
    [("beta", "[[patterns/registry#beta]]"), ("projects/p/memory/m.md", "[[projects/p/memory/m]]")],
)
def test_restore_puts_the_index_line_back(make_vault, target: str, link: str) -> None:
    vault = make_vault({"patterns/registry.md": REGISTRY, "projects/p/memory/m.md": "x\n"})
    runner = CliRunner()
    done = delete(vault, target)
    assert runner.invoke(cli, ["--vault", str(vault), "index"]).exit_code == 0
    assert link not in (vault / "_index.md").read_text()
    assert restore(vault, done.id).outcome == "act"
    assert link in (vault / "_index.md").read_text()
    assert runner.invoke(cli, ["--vault", str(vault), "index", "--check"]).exit_code == 0


def test_restore_dry_run_leaves_a_stale_index_alone(make_vault) -> None:
    vault = make_vault({"patterns/registry.md": REGISTRY})
    done = delete(vault, "beta")
    (vault / "_index.md").write_text("# Index\n")  # stale: a real restore would rewrite it
    restore(vault, done.id, dry_run=True)
    assert (vault / "_index.md").read_text() == "# Index\n"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    return folder


def test_a_trash_symlink_out_of_the_vault_is_refused_before_the_question(
    make_vault: MakeVault, outside: Path
) -> None:
    vault = make_vault({"patterns/registry.md": REGISTRY})
    (vault / ".trash").symlink_to(outside)
    before = snapshot(vault)
    code, screen = run_on_pty(["--vault", str(vault), "apply", "prune", "beta"], ["y"], "[y/N]:")
    assert code == 1, screen
    assert "vaultkeeper: error: prune beta: .trash/: a symlink to" in screen
    assert "[y/N]" not in screen
    assert list(outside.iterdir()) == []
    assert snapshot(vault) == before


def test_a_trash_symlink_made_after_queueing_is_refused_at_review(
    make_vault: MakeVault, outside: Path
) -> None:
    vault = make_vault({"patterns/registry.md": REGISTRY})
    runner = CliRunner()
    assert runner.invoke(cli, ["--vault", str(vault), "apply", "prune", "beta"]).exit_code == 3
    (vault / ".trash").symlink_to(outside)
    code, screen = run_on_pty(["--vault", str(vault), "review"], ["y"], "[q]uit:")
    assert ".trash/: a symlink to" in screen, screen
    assert list(outside.iterdir()) == []
    assert "### beta" in (vault / "patterns/registry.md").read_text()
    assert len(queue.pending(vault)) == 1
