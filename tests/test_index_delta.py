"""An apply's writes carried into the index line by line (index/rows.py, delta.py): the
index files end exactly as a whole regeneration writes them, whatever was written."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.conftest import MakeVault
from tests.test_index_rows import BASE, note, put, registry
from vaultkeeper import config
from vaultkeeper.index import delta, rows
from vaultkeeper.index import delta as quick
from vaultkeeper.index.build import build_index
from vaultkeeper.store.fsio import atomic_write, move, writer_lock
from vaultkeeper.store.model import Note


@pytest.fixture(autouse=True)
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files a test has just written count as settled: else no stamp is ever kept."""
    monkeypatch.setattr(rows, "RACY_NS", 0)


@pytest.fixture
def carried(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each reindex was carried line by line (True) or regenerated (False)."""
    done: list[bool] = []
    real = delta.carry

    def counting(*args: object) -> object:
        got = real(*args)  # type: ignore[arg-type]
        done.append(got is not None)
        return got

    monkeypatch.setattr(quick, "carry", counting)
    return done


def up_to_date(vault: Path, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Whether a regeneration reading every note would change no index file."""
    with monkeypatch.context() as m:
        m.setattr(rows, "_load", lambda vault, query: None)
        return build_index(vault, check=True).changed == ()


def apply_like(vault: Path, write: object) -> None:
    """What an apply does: check, write, reindex, in one hold of the writer lock."""
    with writer_lock(vault):
        quick.check(vault)
        write()  # type: ignore[operator]
        quick.reindex(vault)


PLAIN = {k: v for k, v in BASE.items() if "ghp_" not in k}  # every line [[as written]]


@pytest.mark.parametrize("budget", [config.INDEX_MAX_LINES, 9], ids=["whole", "split"])
@pytest.mark.parametrize("files", [PLAIN, BASE], ids=["plain", "a-token-name"])
def test_random_writes_carried_give_what_a_regeneration_writes(
    make_vault: MakeVault,
    monkeypatch: pytest.MonkeyPatch,
    carried: list[bool],
    budget: int,
    files: dict[str, str],
) -> None:
    monkeypatch.setattr(config, "INDEX_MAX_LINES", budget)
    vault = make_vault(files)
    build_index(vault)
    rng = random.Random(budget)
    broken: list[str] = []  # notes left unparseable: no stamp is kept while one is
    for step in range(60):
        notes = sorted(p.relative_to(vault).as_posix() for p in vault.glob("projects/**/*.md"))
        target = rng.choice(notes)
        action = rng.choice(
            ["edit", "add", "skill", "delete", "blocks", "supersede", "bad", "person", "words"]
        )
        if action == "delete" and len(notes) < 4:
            action = "add"
        if broken and (action == "bad" or rng.random() < 0.5):  # mended: stamps again
            action, target = "edit", broken.pop()
        if action == "bad":
            broken.append(target)

        def write(
            target: str = target, action: str = action, step: int = step, first: str = notes[0]
        ) -> None:
            if action == "edit":
                atomic_write(vault / target, note("x", f"Edited {step}" + "w" * (step % 3)))
            elif action == "add":
                folder = f"projects/p{rng.randint(0, 2)}/memory"
                atomic_write(vault / folder / f"n{step}.md", note(f"n{step}", "New"))
            elif action == "skill":
                atomic_write(vault / f"skills/s{step}/SKILL.md", note(f"s{step}", "A skill"))
            elif action == "delete":
                (vault / ".trash").mkdir(exist_ok=True)
                move(vault / target, vault / ".trash" / f"{step}.md")
            elif action == "blocks":
                count = rng.randint(0, 3)
                blocks = [(f"b{i}-{step % 2}", f"Block {i} at {step}.") for i in range(count)]
                atomic_write(vault / "patterns/registry.md", registry(*blocks))
            elif action == "supersede":
                link = f"superseded_by: '[[{first[:-3]}]]'\n"
                atomic_write(vault / target, note("y", "Old", link))
            elif action == "bad":
                atomic_write(vault / target, "---\nname: [oops\n---\n")

        if action == "person":  # a note edited by hand: the stamp no longer holds
            (vault / target).write_text(note("p", f"By hand {step}"))  # no mtime ahead
        elif action == "words":  # a person's keywords on some index line
            index = rng.choice(sorted(vault.glob("_index*.md")))
            lines = index.read_text().split("\n")
            at = [i for i, line in enumerate(lines) if line.startswith("- [[projects/")]
            if at:
                i = rng.choice(at)
                lines[i] = lines[i].split(config.INDEX_KEYWORDS_MARK)[0] + f" -- keywords: k{step}"
                index.write_text("\n".join(lines))
            build_index(vault)  # the person's next `index` keeps them
        else:
            apply_like(vault, write)
        if action != "person":  # by hand: stale until the next apply regenerates it
            assert up_to_date(vault, monkeypatch), (step, action, target)
    if files is PLAIN:  # most applies never regenerated it all (a line served otherwise,
        assert carried.count(True) >= 15, carried  # a token in a name: regenerated)


def test_keywords_stay_on_a_note_carried_line_by_line(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch, carried: list[bool]
) -> None:
    vault = make_vault(PLAIN)
    build_index(vault)
    text = (vault / "_index.md").read_text()
    line = "- [[projects/api/memory/alpha]] - First"
    (vault / "_index.md").write_text(text.replace(line, line + " -- keywords: first, one"))
    build_index(vault)
    edit = lambda: atomic_write(vault / "projects/api/memory/alpha.md", note("a", "Changed"))  # noqa: E731
    apply_like(vault, edit)
    assert carried == [True]
    assert (
        "- [[projects/api/memory/alpha]] - Changed -- keywords: first, one"
        in (vault / "_index.md").read_text()
    )
    assert up_to_date(vault, monkeypatch)


def test_a_check_on_a_stamped_vault_reads_no_note(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = make_vault(PLAIN)
    build_index(vault)
    read: list[str] = []
    real = rows.read_note

    def counting(vault: Path, path: Path) -> Note:
        read.append(str(path))
        return real(vault, path)

    monkeypatch.setattr(rows, "read_note", counting)
    quick.check(vault)
    assert read == []
    put(vault, "projects/api/memory/beta.md", note("beta", "Edited by hand"))
    quick.check(vault)  # the stamp no longer holds: regenerated, as before
    assert read


def test_a_name_two_files_share_is_regenerated_not_carried(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch, carried: list[bool]
) -> None:
    vault = make_vault({**PLAIN, "projects/api/memory/Alpha.md": note("A", "Upper")})
    build_index(vault)
    edit = lambda: atomic_write(vault / "projects/api/memory/alpha.md", note("a", "Changed"))  # noqa: E731
    apply_like(vault, edit)
    assert carried == [False]
    assert up_to_date(vault, monkeypatch)


@pytest.mark.parametrize(
    "other",
    ["PROJECTS/api/memory/alpha.md", "projects/API/memory/alpha", "projects/api/memory/alpha#x.md"],
)
def test_a_name_a_file_in_another_folder_shares_is_regenerated_not_carried(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch, carried: list[bool], other: str
) -> None:
    vault = make_vault({**PLAIN, other: note("A", "Upper")})
    build_index(vault)
    edit = lambda: atomic_write(vault / "projects/api/memory/alpha.md", note("a", "Changed"))  # noqa: E731
    apply_like(vault, edit)
    assert carried == [False]
    assert up_to_date(vault, monkeypatch)


def test_a_registry_edit_that_changes_no_line_renders_no_index_file(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch, carried: list[bool]
) -> None:
    monkeypatch.setattr(config, "INDEX_MAX_LINES", 9)  # split: patterns/ has its own file
    blocks = [(f"b{i}", f"Block {i}.") for i in range(4)]
    vault = make_vault({**PLAIN, "patterns/registry.md": registry(*blocks)})
    build_index(vault)
    rendered: list[str] = []
    real = delta.Listing.new_text

    def counting(self: delta.Listing) -> str:
        rendered.append(self.name)
        return real(self)

    monkeypatch.setattr(delta.Listing, "new_text", counting)
    path = vault / "patterns/registry.md"
    marked = path.read_text().replace("**success count:** 1", "**success count:** 2", 1)
    apply_like(vault, lambda: atomic_write(path, marked))
    assert carried == [True] and rendered == [config.INDEX_FILE]
    assert up_to_date(vault, monkeypatch)


def test_a_use_keeps_the_stamp_so_the_next_apply_reads_no_note(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch, carried: list[bool]
) -> None:
    """A use changes counter lines only, which the index never lists: its write carries
    the registry file's new key into the stamp's rows (with the digest of its bytes), so
    the apply after it reads no note. Before, the stamp no longer held and the apply
    regenerated the whole index (4-5 s at 50,000 entries, issue 35)."""
    import datetime as dt

    from vaultkeeper.learn.count import record_uses

    vault = make_vault(PLAIN)
    build_index(vault)
    record_uses(vault, {"bisect-first": (1, dt.date(2026, 6, 1))})
    assert "**success count:** 2" in (vault / "patterns/registry.md").read_text()
    read: list[str] = []
    real = rows.read_note

    def counting(vault: Path, path: Path) -> Note:
        read.append(str(path))
        return real(vault, path)

    monkeypatch.setattr(rows, "read_note", counting)
    added = vault / "projects/api/memory/delta.md"
    apply_like(vault, lambda: atomic_write(added, note("delta", "Added")))
    assert carried == [True] and read == []  # carried: the new note parsed by delta.py alone
    assert up_to_date(vault, monkeypatch)


def test_a_hand_edit_after_a_use_still_breaks_the_stamp(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    import datetime as dt

    from vaultkeeper.learn.count import record_uses

    vault = make_vault(PLAIN)
    build_index(vault)
    record_uses(vault, {"bisect-first": (1, dt.date(2026, 6, 1))})
    path = vault / "patterns/registry.md"
    text = path.read_text().replace("Bisect first.", "Bisect firsT.")  # same size
    path.write_text(text)
    assert rows.check(vault) is None  # the digest kept for the use's bytes differs
    quick.check(vault)  # regenerated, as before
    apply_like(vault, lambda: None)
    assert "Bisect firsT." in (vault / "_index.md").read_text()


def test_a_use_right_after_an_apply_wrote_its_registry_keeps_the_stamp(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An apply that wrote a registry file leaves the stamp vouching for it by its bytes
    (just written: its key alone can't be trusted); a use of a block in it then carries
    that digest over to the bytes it writes when it read the bytes the digest names. Before,
    a use right after such an apply broke the stamp, and the next apply regenerated the
    whole index (1.3 s at 10,000 entries in every sequence, issue 35)."""
    import datetime as dt

    from vaultkeeper.learn.count import record_uses

    vault = make_vault(PLAIN)
    build_index(vault)
    import time

    since = time.time_ns()  # what is written from now on is racy, as within 2 s of a read
    monkeypatch.setattr(
        rows, "is_racy", lambda key, now: key is not None and max(key[3], key[4]) >= since
    )
    path = vault / "patterns/registry.md"
    edited = path.read_text().replace("Logs.", "Read the logs.")
    apply_like(vault, lambda: atomic_write(path, edited))
    assert "patterns/registry.md" in rows.LAST[str(vault)].racy
    record_uses(vault, {"bisect-first": (1, dt.date(2026, 6, 1))})
    assert rows.check(vault) is not None
    assert up_to_date(vault, monkeypatch)
    path.write_text(path.read_text().replace("Bisect first.", "Bisect firsT."))  # same size
    assert rows.check(vault) is None  # a hand edit after it still breaks the stamp


@pytest.mark.parametrize("budget", [config.INDEX_MAX_LINES, 9], ids=["whole", "split"])
def test_index_on_a_stamped_vault_reads_no_note_and_says_what_a_regeneration_says(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch, budget: int
) -> None:
    """``index`` when nothing changed since the stamp: no note read (1.4 s at 50,000
    entries before, issue 35), and the same result as a regeneration reading them all."""
    monkeypatch.setattr(config, "INDEX_MAX_LINES", budget)
    vault = make_vault(BASE)
    build_index(vault)
    added = vault / "projects/api/memory/delta.md"
    apply_like(vault, lambda: atomic_write(added, note("delta", "Added")))
    from vaultkeeper.index import build

    read: list[Path] = []  # each regeneration's plan: every note's rows or text read
    real = build._plan

    def counting(vault: Path, *args: object) -> object:
        read.append(vault)
        return real(vault, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(build, "_plan", counting)
    for check in (True, False):
        got = build_index(vault, check=check)
        assert read == []
        with monkeypatch.context() as m:  # every note read: no rows
            m.setattr(rows, "_load", lambda vault, query: None)
            cold = build_index(vault, check=check, stamped=False)
        assert read != [] and got == cold and cold.entries == 9
        read.clear()


@pytest.mark.parametrize("budget", [config.INDEX_MAX_LINES, 9], ids=["whole", "split"])
def test_new_on_a_stamped_vault_carries_its_entry_and_renders_nothing_else(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch, budget: int
) -> None:
    """``new`` follows its own write as an apply does: the new entry's line goes where a
    regeneration puts it, and no regeneration runs (2 s CPU at 50,000 entries before)."""
    import datetime as dt

    from vaultkeeper.entries.create import new_entry
    from vaultkeeper.index import build

    monkeypatch.setattr(config, "INDEX_MAX_LINES", budget)
    vault = make_vault(PLAIN)
    build_index(vault)
    build_index(vault)  # a split's new sub-index files are stamped by the next one
    plans: list[Path] = []
    real = build._plan

    def counting(vault: Path, *args: object) -> object:
        plans.append(vault)
        return real(vault, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(build, "_plan", counting)

    made = new_entry(vault, "memory", "epsilon", "Fifth", project="api", today=dt.date(2026, 6, 1))
    assert plans == []
    assert made.index_line == "- [[projects/api/memory/epsilon]] - Fifth" and made.problems == ()
    assert up_to_date(vault, monkeypatch)


def test_a_carry_lists_no_folder_symlinked_out_of_the_vault(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A folder whose name folds as the written path's does (``PROJECTS`` beside
    ``projects``) but that is a symlink out of the vault is never listed by the name-clash
    check: nothing out of the vault is read, and the index is what a regeneration writes."""
    import os

    vault = make_vault(PLAIN)
    outside = tmp_path / "outside"
    (outside / "api" / "memory").mkdir(parents=True)
    (outside / "api" / "memory" / "private.md").write_text("x\n")
    (vault / "PROJECTS").symlink_to(outside, target_is_directory=True)
    build_index(vault)
    listed: list[str] = []
    real = os.listdir

    def spy(path: str = ".") -> list[str]:
        listed.append(os.path.realpath(path))
        return real(path)

    monkeypatch.setattr(os, "listdir", spy)
    edit = lambda: atomic_write(vault / "projects/api/memory/alpha.md", note("a", "Changed"))  # noqa: E731
    apply_like(vault, edit)
    monkeypatch.setattr(os, "listdir", real)
    assert not [p for p in listed if p.startswith(os.path.realpath(outside))]
    assert up_to_date(vault, monkeypatch)
