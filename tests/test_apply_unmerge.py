"""restore of a merge: after a later `use` of KEEP, or other edits since, it takes off exactly
what the merge added and puts DROP back; DROP's keywords come back to its index line."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import snapshot

from vaultkeeper import config
from vaultkeeper.apply.batch import apply_decision
from vaultkeeper.apply.decision import Decision, Outcome
from vaultkeeper.cli import cli
from vaultkeeper.index.build import build_index

NOW = dt.datetime(2026, 12, 1, 9, 30, tzinfo=dt.timezone.utc)
RECEIPT = "https://example.com/review/42"
KEEP = "### keep\nInject now into date logic.\n\n**success count:** 2\n**last used:** 2026-10-03\n"
DROP = (
    "### drop\nPin the clock.\nIts second line.\n\n"
    "**success count:** 3\n**last used:** 2026-11-18\n"
)
OTHER = "### other\nSomething else.\n\n**success count:** 0\n**last used:** 2026-11-01\n"
ENV = {"VAULTKEEPER_TODAY": "2026-12-01"}


def yes(plan: object) -> bool:
    return True  # the person's yes at the terminal prompt


def merged(vault: Path, keep: str = "keep", drop: str = "drop") -> str:
    decision = Decision("merge", keep, RECEIPT, drop=drop)
    done = apply_decision(vault, decision, NOW, confirm=yes)
    assert done.outcome == "act", done.reason
    return str(done.id)


def restore(vault: Path, trash_id: str) -> Outcome:
    return apply_decision(vault, Decision("restore", trash_id), NOW)


@pytest.fixture
def vault(make_vault) -> Path:
    root = make_vault(
        {
            "patterns/registry.md": "# Registry\n\n" + KEEP + "\n" + DROP + "\n" + OTHER,
            "projects/p/research/r.md": (
                "see [[patterns/registry#drop]]\nand [[patterns/registry#other]]\n"
            ),
        }
    )
    build_index(root)
    return root


def test_undo_after_a_use_of_keep_keeps_the_use_and_puts_drop_back(
    vault: Path, runner: CliRunner
) -> None:
    before = snapshot(vault)
    trash_id = merged(vault)
    used = runner.invoke(cli, ["--vault", str(vault), "use", "keep"], env=ENV)
    assert used.exit_code == 0, used.output
    back = restore(vault, trash_id)
    assert back.outcome == "act", back.reason
    assert "only the merge's lines taken off" in back.reason
    text = (vault / "patterns/registry.md").read_text()
    # exactly the use is left: KEEP's own count + 1, last used today; DROP as it was
    want = (
        before["patterns/registry.md"]
        .decode()
        .replace(
            "**success count:** 2\n**last used:** 2026-10-03",
            "**success count:** 3\n**last used:** 2026-12-01",
        )
    )
    assert text == want
    assert "[[patterns/registry#drop]]" in (vault / "projects/p/research/r.md").read_text()
    assert snapshot(vault)["projects/p/research/r.md"] == before["projects/p/research/r.md"]


def test_undo_keeps_other_edits_made_since(vault: Path) -> None:
    before = snapshot(vault)
    trash_id = merged(vault)
    note = vault / "projects/p/research/r.md"
    note.write_text(note.read_text() + "a line a person added\n")
    registry = vault / "patterns/registry.md"
    registry.write_text(
        registry.read_text().replace("Something else.", "Something else, reworded.")
    )
    assert restore(vault, trash_id).outcome == "act"
    assert (
        note.read_text() == before["projects/p/research/r.md"].decode() + "a line a person added\n"
    )
    assert registry.read_text() == before["patterns/registry.md"].decode().replace(
        "Something else.", "Something else, reworded."
    )


def test_undo_refuses_a_count_below_what_the_merge_added(vault: Path) -> None:
    trash_id = merged(vault)
    registry = vault / "patterns/registry.md"
    registry.write_text(
        registry.read_text().replace("**success count:** 5", "**success count:** 1")
    )
    changed = snapshot(vault)
    back = restore(vault, trash_id)
    assert back.outcome == "defer" and "edited since, where the merge wrote" in back.reason
    assert snapshot(vault) == changed


def test_undo_after_a_use_of_keep_in_another_file_than_drop(make_vault, runner: CliRunner) -> None:
    vault = make_vault(
        {
            "patterns/registry.md": "# R\n\n" + KEEP + "\n" + OTHER,
            "patterns/more.md": "# M\n\n" + DROP,
        }
    )
    build_index(vault)
    before = snapshot(vault)
    trash_id = merged(vault)
    assert runner.invoke(cli, ["--vault", str(vault), "use", "keep"], env=ENV).exit_code == 0
    assert restore(vault, trash_id).outcome == "act"
    assert (vault / "patterns/more.md").read_bytes() == before["patterns/more.md"]
    assert (
        "**success count:** 3\n**last used:** 2026-12-01"
        in (vault / "patterns/registry.md").read_text()
    )


def memory(name: str, desc: str, extra: str = "") -> str:
    return (
        f"---\nname: {name}\ndescription: {desc}\ntype: memory\nstatus: active\n"
        f'label: rule\nholdout_until: "2026-01-01"\n{extra}---\n\n# {name}\n\nbody of {name}\n'
    )


def test_undo_of_a_file_merge_after_keep_was_edited(make_vault) -> None:
    vault = make_vault(
        {
            "projects/p/memory/a.md": memory("a", "Retry a flaky CI job once"),
            "projects/p/memory/b.md": memory("b", "Retry flaky CI jobs once"),
        }
    )
    build_index(vault)
    before = snapshot(vault)
    trash_id = merged(vault, "projects/p/memory/a.md", "projects/p/memory/b.md")
    a = vault / "projects/p/memory/a.md"
    a.write_text(a.read_text().replace("body of a", "body of a, edited"))
    assert restore(vault, trash_id).outcome == "act"
    assert (vault / "projects/p/memory/b.md").read_bytes() == before["projects/p/memory/b.md"]
    assert a.read_text() == before["projects/p/memory/a.md"].decode().replace(
        "body of a", "body of a, edited"
    )


def _index_line(vault: Path, needle: str) -> str:
    [line] = [x for x in (vault / config.INDEX_FILE).read_text().splitlines() if needle in x]
    return line


def test_drops_keywords_on_its_index_line_come_back_with_restore(make_vault) -> None:
    vault = make_vault(
        {
            "patterns/registry.md": "# Registry\n\n" + KEEP + "\n" + DROP,
            "projects/p/memory/a.md": memory("a", "Retry a flaky CI job once"),
            "projects/p/memory/b.md": memory("b", "Retry flaky CI jobs once"),
        }
    )
    build_index(vault)
    index = vault / config.INDEX_FILE
    lines = index.read_text().splitlines()
    for i, line in enumerate(lines):
        if "#drop]]" in line or "memory/b]]" in line:
            lines[i] = line + config.INDEX_KEYWORDS_MARK + "clock, pinning"
    index.write_text("\n".join(lines) + "\n")
    block_line, file_line = _index_line(vault, "#drop]]"), _index_line(vault, "memory/b]]")
    for keep, drop, line in (
        ("keep", "drop", block_line),
        ("projects/p/memory/a.md", "projects/p/memory/b.md", file_line),
    ):
        trash_id = merged(vault, keep, drop)
        meta = json.loads(
            (vault / config.TRASH_DIR / trash_id / config.TRASH_META_FILE).read_text()
        )
        assert meta["keywords"] == "clock, pinning"
        assert restore(vault, trash_id).outcome == "act"
        assert line in index.read_text().splitlines()


def test_undo_of_a_file_merge_puts_drop_back_when_its_folder_was_removed(make_vault) -> None:
    # the merge emptied DROP's folder and a person removed it: restore makes it again,
    # instead of undoing KEEP's edit and then failing to put DROP back
    vault = make_vault(
        {
            "projects/p/memory/a.md": memory("a", "Retry a flaky CI job once"),
            "projects/p/memory/old/b.md": memory("b", "Retry flaky CI jobs once"),
        }
    )
    build_index(vault)
    before = snapshot(vault)
    trash_id = merged(vault, "projects/p/memory/a.md", "projects/p/memory/old/b.md")
    (vault / "projects/p/memory/old").rmdir()
    back = restore(vault, trash_id)
    assert back.outcome == "act", back.reason
    assert (vault / "projects/p/memory/old/b.md").read_bytes() == before[
        "projects/p/memory/old/b.md"
    ]
    assert (vault / "projects/p/memory/a.md").read_bytes() == before["projects/p/memory/a.md"]
    assert not (vault / config.TRASH_DIR / trash_id).exists()
