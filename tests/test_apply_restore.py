"""restore reads only what .trash/<id>/ holds: a record's
``edits[].original`` or ``content`` that is absolute, climbs out with ``..`` or is a
symlink is refused in one line, and nothing is written; vault://index is confined."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from tests.conftest import MakeVault, snapshot
from tests.mcp_harness import connect
from tests.test_apply_merge import DROP_BLOCK, KEEP_BLOCK, memory, merge, restore
from vaultkeeper import config
from vaultkeeper.errors import UnsafePathError
from vaultkeeper.index.build import build_index


def refused(vault: Path, trash_id: str) -> None:
    try:
        outcome = restore(vault, trash_id)
    except UnsafePathError as exc:
        assert "refused" in str(exc)
    else:
        assert outcome.outcome != "act" and "refused" in outcome.reason, outcome


@pytest.fixture
def merged(make_vault: MakeVault) -> tuple[Path, Path]:
    vault = make_vault({"patterns/registry.md": "# Registry\n\n" + KEEP_BLOCK + "\n" + DROP_BLOCK})
    build_index(vault)
    done = merge(vault, "pin-test-clock", "pin-the-clock")
    assert done.outcome == "act", done.reason
    return vault, vault / config.TRASH_DIR / str(done.id)


def tamper(folder: Path, change: dict[str, object], where: str = "edits") -> None:
    meta_path = folder / config.TRASH_META_FILE
    meta = json.loads(meta_path.read_text())
    if where == "edits":
        meta["edits"][0].update(change)
    else:
        meta.update(change)
    meta_path.write_text(json.dumps(meta))


@pytest.mark.parametrize("how", ["absolute", "dotdot", "symlink"])
def test_restore_refuses_an_original_from_outside_the_trash_folder(
    merged: tuple[Path, Path], tmp_path: Path, how: str
) -> None:
    vault, folder = merged
    secret = tmp_path / "outside.txt"
    secret.write_text("# Registry\n\nread from outside the vault\n")
    if how == "absolute":
        tamper(folder, {"original": str(secret)})
    elif how == "dotdot":
        tamper(folder, {"original": "../../../outside.txt"})
    else:
        name = json.loads((folder / config.TRASH_META_FILE).read_text())["edits"][0]["original"]
        (folder / name).unlink()
        (folder / name).symlink_to(secret)
    before = snapshot(vault)
    refused(vault, folder.name)
    assert snapshot(vault) == before
    assert "outside the vault" not in (vault / "patterns/registry.md").read_text()


def test_restore_refuses_a_trashed_file_that_is_a_symlink(
    make_vault: MakeVault, tmp_path: Path
) -> None:
    vault = make_vault(
        {
            "projects/p/memory/a.md": memory("a", "pin the clock", "A."),
            "projects/p/memory/b.md": memory("b", "pin the clock too", "B."),
        }
    )
    build_index(vault)
    done = merge(vault, "projects/p/memory/b.md", "projects/p/memory/a.md")
    assert done.outcome == "act", done.reason
    folder = vault / config.TRASH_DIR / str(done.id)
    content = json.loads((folder / config.TRASH_META_FILE).read_text())["content"]
    outside = tmp_path / "outside.md"
    outside.write_text("---\nname: a\ndescription: from outside\n---\n")
    (folder / content).unlink()
    (folder / content).symlink_to(outside)
    before = snapshot(vault)
    refused(vault, folder.name)
    assert snapshot(vault) == before and not (vault / "projects/p/memory/a.md").exists()


def test_vault_index_refuses_an_index_symlinked_out_of_the_vault(
    make_vault: MakeVault, tmp_path: Path
) -> None:
    vault = make_vault()
    outside = tmp_path / "elsewhere.md"
    outside.write_text("private notes from outside the vault\n")
    (vault / config.INDEX_FILE).unlink()
    (vault / config.INDEX_FILE).symlink_to(outside)

    async def main() -> None:
        async with connect(vault, tmp_path / "home") as s:
            with pytest.raises(Exception, match="outside the vault"):
                await s.read_resource("vault://index")

    anyio.run(main)
