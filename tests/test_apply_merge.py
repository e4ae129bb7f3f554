"""apply merge: counts add, links follow, DROP goes to .trash/, restore undoes all of it."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from conftest import snapshot

from vaultkeeper import config
from vaultkeeper.apply.batch import apply_decision
from vaultkeeper.apply.decision import Decision, Outcome
from vaultkeeper.index.build import build_index
from vaultkeeper.registry.find import find_block

NOW = dt.datetime(2026, 12, 1, 9, 30, tzinfo=dt.timezone.utc)
RECEIPT = "https://example.com/review/42"

KEEP_BLOCK = (
    "### pin-test-clock\nInject now into date logic in tests.\n\n"
    "**success count:** 2\n**last used:** 2026-10-03\n"
)
DROP_BLOCK = (
    "### pin-the-clock\nPin the clock in tests; see [[projects/p/memory/a]].\n"
    "Second line of its text.\n\n**success count:** 3\n**last used:** 2026-11-18\n"
)
OTHER_BLOCK = "### other\nSomething else.\n\n**success count:** 0\n**last used:** 2026-11-01\n"


def memory(name: str, desc: str, body: str, status: str = "active") -> str:
    return (
        f"---\nname: {name}\ndescription: {desc}\ntype: memory\nstatus: {status}\n"
        f'label: rule\nholdout_until: "2026-01-01"\nprovenance: ["{RECEIPT}"]\n---\n\n'
        f"# {name}\n\n{body}\n"
    )


def merge(vault: Path, keep: str, drop: str, **kw: object) -> Outcome:
    decision = Decision("merge", keep, evidence=kw.pop("evidence", RECEIPT), drop=drop)
    return apply_decision(vault, decision, NOW, **kw)  # type: ignore[arg-type]


def restore(vault: Path, trash_id: str) -> Outcome:
    return apply_decision(vault, Decision("restore", trash_id), NOW)


def journal(vault: Path) -> list[dict[str, object]]:
    lines = (vault / "state/journal.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


@pytest.fixture
def vault(make_vault) -> Path:
    root = make_vault(
        {
            "patterns/registry.md": "# Registry\n\n" + KEEP_BLOCK + "\n" + OTHER_BLOCK,
            "patterns/more.md": "# More\n\n" + DROP_BLOCK,
            "projects/p/memory/a.md": memory(
                "a",
                "Retry a flaky CI job once",
                "Uses [[patterns/more#pin-the-clock|the clock pattern]] and\n"
                "| t | ![[more#pin-the-clock\\|x]] |\nand [[b]] and [[projects/p/memory/b#Why]].",
            ),
            "projects/p/memory/b.md": memory(
                "b", "Retry flaky CI jobs once", "Also see [[a]].\n\n## Why\n\nBecause."
            ),
            "projects/q/memory/c.md": memory("c", "Retry a flaky CI job once", "q's copy."),
            "projects/p/research/r.md": '---\nname: r\nrelated: "[[b]]"\n---\nsee [[b|B]]\n',
        }
    )
    build_index(root)  # the index as `index` writes it, so restore can match it byte for byte
    return root


def test_blocks_merge_counts_last_used_text_and_links(vault: Path) -> None:
    before = snapshot(vault)
    done = merge(vault, "pin-test-clock", "pin-the-clock")
    assert done.outcome == "act", done.reason
    assert "3 link(s) rewritten" not in done.reason and "2 link(s) rewritten" in done.reason
    keep = find_block(vault, "pin-test-clock")
    assert (keep.count, keep.last_used) == (5, dt.date(2026, 11, 18))
    assert keep.text == (
        "### pin-test-clock\nInject now into date logic in tests.\n\n"
        "**success count:** 5\n**last used:** 2026-11-18\n\n"
        f"#### {config.MERGED_FROM} pin-the-clock\n"
        "Pin the clock in tests; see [[projects/p/memory/a]].\nSecond line of its text.\n"
    )
    assert (vault / "patterns/more.md").read_text() == "# More\n"
    a = (vault / "projects/p/memory/a.md").read_text()
    assert "[[patterns/registry#pin-test-clock|the clock pattern]]" in a
    assert "![[patterns/registry#pin-test-clock\\|x]]" in a
    # only the link lines changed in a.md
    old = before["projects/p/memory/a.md"].decode().splitlines()
    changed = [i for i, (x, y) in enumerate(zip(old, a.splitlines(), strict=True)) if x != y]
    assert len(changed) == 2
    # the trash holds DROP's lines; the journal the decision
    trash_id = str(done.id)
    kept = (vault / config.TRASH_DIR / trash_id / "pin-the-clock.md").read_text()
    assert kept.strip("\n") == DROP_BLOCK.strip("\n")
    [record] = journal(vault)
    assert (record["action"], record["target"], record["drop"], record["outcome"]) == (
        "merge", "pin-test-clock", "pin-the-clock", "act",
    )  # fmt: skip
    assert record["evidence"] == RECEIPT
    # restore puts every file back byte for byte, the index included
    back = restore(vault, trash_id)
    assert back.outcome == "act", back.reason
    assert snapshot(vault) == before


def test_blocks_of_one_file_merge_and_restore_byte_for_byte(make_vault) -> None:
    text = "# Registry\r\n\r\n" + (DROP_BLOCK + "\n" + KEEP_BLOCK).replace("\n", "\r\n")
    vault = make_vault({"patterns/registry.md": b"\xef\xbb\xbf" + text.encode()})
    build_index(vault)
    before = snapshot(vault)
    done = merge(vault, "pin-test-clock", "pin-the-clock")
    assert done.outcome == "act", done.reason
    raw = (vault / "patterns/registry.md").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf# Registry\r\n\r\n### pin-test-clock\r\n")
    assert b"**success count:** 5\r\n**last used:** 2026-11-18\r\n" in raw
    assert b"### pin-the-clock" not in raw
    assert restore(vault, str(done.id)).outcome == "act"
    assert snapshot(vault) == before


def test_memory_files_merge_links_follow_and_restore_byte_for_byte(vault: Path) -> None:
    before = snapshot(vault)
    done = merge(vault, "projects/p/memory/a.md", "projects/p/memory/b")
    assert done.outcome == "act", done.reason
    assert not (vault / "projects/p/memory/b.md").exists()
    a = (vault / "projects/p/memory/a.md").read_text()
    assert a.startswith(before["projects/p/memory/a.md"].decode().split("and [[b]]")[0])
    assert "and [[projects/p/memory/a]] and [[projects/p/memory/a#Why]]." in a
    assert a.endswith(
        f"\n## {config.MERGED_FROM} b\n\nDescription: Retry flaky CI jobs once\n"
        f"Provenance: {RECEIPT}\n\n# b\n\nAlso see [[a]].\n\n## Why\n\nBecause.\n"
    )
    r = (vault / "projects/p/research/r.md").read_text()
    assert (
        r
        == '---\nname: r\nrelated: "[[projects/p/memory/a]]"\n---\nsee [[projects/p/memory/a|B]]\n'
    )
    assert "[[projects/p/memory/b]]" not in (vault / config.INDEX_FILE).read_text()
    assert restore(vault, str(done.id)).outcome == "act"
    assert snapshot(vault) == before


@pytest.mark.parametrize(
    ("keep", "drop", "why"),
    [
        ("pin-test-clock", "projects/p/memory/b.md", "not one of each"),
        ("projects/p/memory/a.md", "projects/q/memory/c.md", "within one project only"),
        ("pin-test-clock", "pin-test-clock", "the same entry"),
        ("projects/p/research/r.md", "projects/p/memory/b.md", "memory files"),
        ("pin-test-clock", "no-such-block", "no ### no-such-block block"),
    ],
)
def test_refusals_write_nothing_and_are_journaled(
    vault: Path, keep: str, drop: str, why: str
) -> None:
    before = snapshot(vault)
    done = merge(vault, keep, drop)
    assert done.outcome == "defer" and why in done.reason, done.reason
    assert done.exit_code == 1
    assert snapshot(vault) == before
    assert journal(vault)[-1]["outcome"] == "defer"


def test_no_evidence_no_merge(vault: Path) -> None:
    before = snapshot(vault)
    done = merge(vault, "pin-test-clock", "pin-the-clock", evidence=None)
    assert done.outcome == "defer" and "no evidence" in done.reason
    assert snapshot(vault) == before


def test_a_promoted_drop_and_an_archived_entry_are_refused(make_vault) -> None:
    promoted = DROP_BLOCK + "**promoted:** 2026-11-20 -> [[skills/pin-the-clock/SKILL]]\n"
    vault = make_vault(
        {
            "patterns/registry.md": "# R\n\n" + KEEP_BLOCK + "\n" + promoted,
            "projects/p/memory/a.md": memory("a", "x", "y"),
            "projects/p/memory/z.md": memory("z", "x", "y", status="archived"),
        }
    )
    before = snapshot(vault)
    assert "promoted to a skill" in merge(vault, "pin-test-clock", "pin-the-clock").reason
    assert "archived" in merge(vault, "projects/p/memory/a.md", "projects/p/memory/z.md").reason
    assert snapshot(vault) == before


def test_dry_run_shows_the_diff_and_writes_nothing(vault: Path) -> None:
    before = snapshot(vault, skip_state=False)
    done = merge(vault, "pin-test-clock", "pin-the-clock", dry_run=True)
    assert done.outcome == "act" and done.dry_run
    assert "+**success count:** 5" in done.diff and "-### pin-the-clock" in done.diff
    assert snapshot(vault, skip_state=False) == before


def test_replaying_a_merge_changes_nothing(vault: Path) -> None:
    assert merge(vault, "pin-test-clock", "pin-the-clock").outcome == "act"
    after = snapshot(vault)
    again = merge(vault, "pin-test-clock", "pin-the-clock")
    assert again.outcome == "silence" and "already applied" in again.reason
    assert snapshot(vault) == after


def test_restore_refuses_when_keep_changed_since_and_restores_nothing(vault: Path) -> None:
    done = merge(vault, "pin-test-clock", "pin-the-clock")
    registry = vault / "patterns/registry.md"
    registry.write_text(registry.read_text() + "\nedited by hand\n")
    changed = snapshot(vault)
    back = restore(vault, str(done.id))
    assert back.outcome == "defer" and "changed since the merge" in back.reason
    assert snapshot(vault) == changed


def test_a_batch_merges_and_replaying_it_changes_nothing(vault: Path) -> None:
    from vaultkeeper.apply.batch import run_batch

    text = json.dumps(
        [
            {
                "action": "merge",
                "target": "pin-test-clock",
                "drop": "pin-the-clock",
                "evidence": RECEIPT,
            }
        ]
    )
    first = run_batch(vault, text, "b.json", NOW)
    assert [o.outcome for o in first.outcomes] == ["act"] and first.exit_code == 0
    after = snapshot(vault)
    again = run_batch(vault, text, "b.json", NOW)
    assert [o.outcome for o in again.outcomes] == ["silence"]
    assert snapshot(vault) == after
