"""restore reads only what .trash/<id>/ holds: a record's
``edits[].original`` or ``content`` that is absolute, climbs out with ``..`` or is a
symlink is refused in one line, and nothing is written; vault://index is confined."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner

from tests.conftest import MakeVault, snapshot
from tests.mcp_harness import connect
from tests.test_apply_merge import DROP_BLOCK, KEEP_BLOCK, memory, merge, restore
from vaultkeeper import config
from vaultkeeper.apply.batch import apply_decision
from vaultkeeper.apply.decision import Decision
from vaultkeeper.cli import cli
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


NOW = dt.datetime(2026, 12, 1, 9, 30, tzinfo=dt.timezone.utc)


BETA = "### beta\nBeta body.\n\n**success count:** 0\n**last used:** 2025-01-01\n"


REGISTRY = "# Pattern registry\n\n" + BETA


MEMORY = "---\nname: m\ndescription: a lesson\ntype: memory\nlabel: inferred\n---\nbody\n"


def yes(plan: object) -> bool:
    return True


def invoke(vault: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--vault", str(vault), *args])
    return result.exit_code, result.output


def add_keywords(vault: Path, link: str, words: str) -> None:
    index = vault / "_index.md"
    lines = index.read_text().split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith(f"- [[{link}]]"))
    lines[at] += f" -- keywords: {words}"
    index.write_text("\n".join(lines))


def test_prune_then_restore_keeps_the_index_keywords(make_vault: MakeVault) -> None:
    vault = make_vault({"patterns/registry.md": REGISTRY, "projects/p/memory/m.md": MEMORY})
    assert invoke(vault, "index")[0] == 0
    add_keywords(vault, "patterns/registry#beta", "bisect, blame")
    add_keywords(vault, "projects/p/memory/m", "flaky ci")
    before = (vault / "_index.md").read_text()
    ids = []
    for target in ("beta", "projects/p/memory/m.md"):
        outcome = apply_decision(vault, Decision("prune", target), NOW, confirm=yes)
        assert outcome.outcome == "act", outcome.reason
        ids.append(str(outcome.id))
    assert "keywords" not in (vault / "_index.md").read_text().split("start -->")[1]
    for trash_id in ids:
        code, output = invoke(vault, "restore", trash_id)
        assert code == 0, output
    after = (vault / "_index.md").read_text()
    assert "- [[patterns/registry#beta]] - Beta body. -- keywords: bisect, blame" in after
    assert "- [[projects/p/memory/m]] - a lesson -- keywords: flaky ci" in after
    assert after == before


@pytest.mark.parametrize("path", ["projects/p/memory/.hidden.md", "projects/p/.drafts/m.md"])
def test_a_pruned_dot_file_restores(make_vault: MakeVault, path: str) -> None:
    vault = make_vault({path: MEMORY})
    outcome = apply_decision(vault, Decision("prune", path), NOW, confirm=yes)
    assert outcome.outcome == "act", outcome.reason
    assert not (vault / path).exists()
    code, output = invoke(vault, "restore", str(outcome.id))
    assert code == 0, output
    assert f"act: restore {path}: restored {path}" in output
    assert (vault / path).read_text() == MEMORY


def test_a_block_named_without_ascii_letters_prunes_and_restores(make_vault: MakeVault) -> None:
    snow = "### \u2603\nSnow.\n\n**success count:** 0\n**last used:** 2025-01-01\n"
    vault = make_vault({"patterns/registry.md": REGISTRY + "\n" + snow})
    before = (vault / "patterns/registry.md").read_bytes()
    outcome = apply_decision(vault, Decision("prune", "\u2603"), NOW, confirm=yes)
    assert outcome.outcome == "act", outcome.reason
    assert "\u2603" not in (vault / "patterns/registry.md").read_text()
    code, output = invoke(vault, "restore", str(outcome.id))
    assert code == 0, output
    assert (vault / "patterns/registry.md").read_bytes() == before


def test_a_restore_that_wrote_nothing_says_nothing_changed(make_vault: MakeVault) -> None:
    path = "projects/p/memory/m.md"
    vault = make_vault({path: MEMORY})
    outcome = apply_decision(vault, Decision("prune", path), NOW, confirm=yes)
    assert outcome.outcome == "act", outcome.reason
    (vault / "projects/p/memory").rmdir()
    (vault / "projects/p/memory").write_text("a file where the folder was\n")
    result = CliRunner().invoke(cli, ["--vault", str(vault), "restore", str(outcome.id)])
    assert result.exit_code == 1
    [line] = result.stderr.splitlines()
    assert line.endswith("(deferred; nothing changed)"), line
    assert "part-way" not in line
    assert (vault / ".trash" / str(outcome.id) / "m.md").read_text() == MEMORY


def test_a_trash_record_nested_past_jsons_depth_is_unreadable_not_a_crash(
    make_vault: MakeVault,
) -> None:
    # .trash/ travels with the vault; json.loads raises RecursionError (not ValueError)
    # on nesting past its depth, and restore said "internal error ... a bug".
    vault = make_vault()
    folder = vault / config.TRASH_DIR / "20260101-000000-abcdef"
    folder.mkdir(parents=True)
    deep = '{"kind": ' + "[" * 100_000 + "]" * 100_000 + "}"
    (folder / config.TRASH_META_FILE).write_text(deep)
    for extra in ([], ["--dry-run"]):
        done = CliRunner().invoke(
            cli, ["--vault", str(vault), "restore", "20260101-000000-abcdef", *extra]
        )
        assert done.exit_code == 1, done.output
        assert "internal error" not in done.stderr
        assert f"{config.TRASH_META_FILE}: unreadable" in done.stderr
    assert (folder / config.TRASH_META_FILE).read_text() == deep


@pytest.mark.parametrize(
    "source",
    [
        ".git/hooks/pre-commit",  # run by the person's next commit
        ".obsidian/plugins/x/main.js",  # run by Obsidian
        "projects/p/.git/hooks/post-checkout",
        "projects/p/.git/info/x.md",  # a nested repository's .git/ too
        ".obsidian/x.md",
        "state/machine.json",  # this machine's own, never committed
        "STATE/machine.json",  # the same folder on a case-insensitive disk
        "projects/p/memory/run.sh",  # nothing vaultkeeper trashes is not markdown
    ],
)
def test_restore_puts_back_only_a_vault_entry_never_a_hook_or_state(
    make_vault: MakeVault, source: str
) -> None:
    """A .trash/ record comes with the vault (git pull): one naming a file vaultkeeper
    never trashes (a git hook, Obsidian's plugins, state/) restores nothing."""
    vault = make_vault({"projects/p/memory/m.md": MEMORY})
    (vault / ".git/hooks").mkdir(parents=True)
    done = apply_decision(vault, Decision("prune", "projects/p/memory/m.md"), NOW, confirm=yes)
    assert done.outcome == "act", done.reason
    folder = vault / config.TRASH_DIR / str(done.id)
    tamper(folder, {"source": source}, where="record")
    machine = vault / "state/machine.json"
    before = snapshot(vault), machine.read_bytes() if machine.exists() else None
    outcome = restore(vault, folder.name)
    assert outcome.outcome == "defer" and "not a vault entry" in outcome.reason, outcome
    assert (snapshot(vault), machine.read_bytes() if machine.exists() else None) == before


@pytest.mark.parametrize("path", [".git/config", "projects/p/config.md"])
def test_restore_of_a_merge_writes_back_only_vault_entries(
    merged: tuple[Path, Path], path: str
) -> None:
    """A merge record's edited path, as written or through a committed symlink inside the
    vault (projects/p/config.md -> ../../.git/config), must be an entry."""
    vault, folder = merged
    (vault / ".git").mkdir()
    (vault / ".git/config").write_text("")  # an empty file's digest is easy to forge
    (vault / "projects/p").mkdir(parents=True)
    (vault / "projects/p/config.md").symlink_to("../../.git/config")
    empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    tamper(folder, {"path": path, "after": empty})
    before = snapshot(vault)
    outcome = restore(vault, folder.name)
    assert outcome.outcome == "defer" and "not a vault entry" in outcome.reason, outcome
    assert snapshot(vault) == before


@pytest.mark.parametrize("kind", ["file", "block"])
def test_restore_onto_a_fifo_refuses_at_once(make_vault: MakeVault, kind: str) -> None:
    """Where the pruned file stood, a FIFO now (an agent's mkfifo): restore refuses in one
    line, never waiting for a writer that does not come."""
    import os

    from tests.conftest import run_bounded

    path = "projects/p/memory/m.md" if kind == "file" else "patterns/registry.md"
    vault = make_vault({"projects/p/memory/m.md": MEMORY, "patterns/registry.md": REGISTRY})
    done = apply_decision(
        vault, Decision("prune", path if kind == "file" else "beta"), NOW, confirm=yes
    )
    assert done.outcome == "act", done.reason
    (vault / path).unlink(missing_ok=True)
    os.mkfifo(vault / path)
    result = run_bounded(["--vault", str(vault), "restore", str(done.id)], "restore read a FIFO")
    assert result.returncode == 1, result
    assert "not a regular file" in result.stderr or "exists and differs" in result.stderr
    assert (vault / config.TRASH_DIR / str(done.id)).is_dir()
