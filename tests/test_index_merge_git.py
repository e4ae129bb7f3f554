"""One vault, two machines: ``git pull`` merges ``_index.md`` entry by entry.

A bare remote and two clones, each with ``hooks install git``; each clone adds, prunes
or edits entries with the real console script, commits, and the other pulls. git runs
``vaultkeeper merge-driver`` on ``_index.md``: entries added or deleted on different
sides are all taken, the list reads as ``vaultkeeper index`` writes it (``--check``
passes), a person's text outside the markers stays, and an entry changed differently
on both sides is still a conflict.
"""

from __future__ import annotations

import datetime as dt
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from git_helper import git, isolate_git

from tests.test_git_sync import Machines
from vaultkeeper import config
from vaultkeeper.apply.batch import apply_decision
from vaultkeeper.apply.decision import Decision

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
INDEX = config.INDEX_FILE
REGISTRY = (
    "# Pattern registry\n\n"
    "### idle-pattern\nIdle: never reused since it was written.\n\n"
    "**success count:** 0\n**last used:** 2025-01-01\n\n"
    "### kept-pattern\nKept: reused often.\n\n"
    "**success count:** 3\n**last used:** 2026-11-01\n"
)
KEPT = "- [[patterns/registry#kept-pattern]] - Kept: reused often."
MEMORY = "projects/api/memory"
SPEC = "- [[references/vault-spec]] - The one authoritative spec of this vault"  # init's


class Clones(Machines):
    """test_git_sync's remote and two clones, seeded with an entry both start with."""

    TODAY = "2026-11-20"

    def seed(self, seed: Path) -> None:
        (seed / config.REGISTRY_FILE).write_text(REGISTRY, encoding="utf-8")
        self.new(seed, "seed-entry", "The entry both clones start with")

    def new(self, clone: Path, name: str, description: str) -> None:
        self.vk(clone, "new", "memory", name, "-p", "api", "-d", description)

    def commit_both(self) -> None:
        for clone in (self.a, self.b):
            git(clone, "add", "-A")
            git(clone, "commit", "-qm", f"{clone.name}: change")

    def pull(self, check: bool = True) -> subprocess.CompletedProcess[str]:
        """a pushes, b pulls (a merge git runs the driver in)."""
        git(self.a, "push", "-q")
        return git(self.b, "pull", "--no-edit", check=check)

    def sync_back(self) -> None:
        git(self.b, "push", "-q")
        git(self.a, "pull", "-q", "--no-edit")

    def index(self, clone: Path) -> str:
        return (clone / INDEX).read_bytes().decode("utf-8")


@pytest.fixture
def clones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Clones:
    return Clones(tmp_path, isolate_git(monkeypatch, tmp_path))


def entry_lines(text: str) -> list[str]:
    lines = [line for line in text.splitlines() if line.startswith("- [[")]
    return [SPEC if line.startswith(SPEC) else line for line in lines]


def assert_clean_and_regenerated(c: Clones, pulled: subprocess.CompletedProcess[str]) -> None:
    assert "CONFLICT" not in pulled.stdout + pulled.stderr
    assert git(c.b, "status", "--porcelain").stdout == ""
    c.sync_back()
    assert c.index(c.a) == c.index(c.b)
    for clone in (c.a, c.b):  # the merged list is what `vaultkeeper index` writes
        c.vk(clone, "index", "--check")


def test_an_entry_new_on_each_machine_both_listed(clones: Clones) -> None:
    c = clones
    c.new(c.a, "from-a", "Written on machine a")
    c.new(c.b, "from-b", "Written on machine b")
    c.commit_both()
    pulled = c.pull()
    assert_clean_and_regenerated(c, pulled)
    assert entry_lines(c.index(c.b)) == [
        "- [[patterns/registry#idle-pattern]] - Idle: never reused since it was written.",
        KEPT,
        f"- [[{MEMORY}/from-a]] - Written on machine a",
        f"- [[{MEMORY}/from-b]] - Written on machine b",
        f"- [[{MEMORY}/seed-entry]] - The entry both clones start with",
        SPEC,
    ]


def test_a_prune_on_one_machine_and_a_new_entry_on_the_other(clones: Clones) -> None:
    c = clones
    now = dt.datetime(2026, 11, 20, 9, 0, tzinfo=dt.timezone.utc)
    done = apply_decision(c.a, Decision("prune", "idle-pattern"), now, confirm=lambda plan: True)
    assert done.outcome == "act", done
    assert "idle-pattern" not in c.index(c.a)
    # the new line lands right next to the pruned one: git alone would stop here
    c.vk(c.b, "new", "pattern", "hot-pattern", "-d", "Hot: new on machine b.")
    c.new(c.b, "from-b", "Written on machine b")
    c.commit_both()
    pulled = c.pull()
    assert_clean_and_regenerated(c, pulled)
    assert entry_lines(c.index(c.b)) == [
        "- [[patterns/registry#hot-pattern]] - Hot: new on machine b.",
        KEPT,
        f"- [[{MEMORY}/from-b]] - Written on machine b",
        f"- [[{MEMORY}/seed-entry]] - The entry both clones start with",
        SPEC,
    ]
    assert "### idle-pattern" not in (c.b / config.REGISTRY_FILE).read_text(encoding="utf-8")


def test_text_a_person_wrote_outside_the_markers_is_kept(clones: Clones) -> None:
    c = clones
    text = c.index(c.a)
    top = "Read the api entries first.\n"
    bottom = "\nWritten by hand below the list.\n"
    (c.a / INDEX).write_text(text.replace(config.INDEX_START, top + config.INDEX_START))
    (c.b / INDEX).write_text(text + bottom, encoding="utf-8")
    c.new(c.a, "from-a", "Written on machine a")
    c.new(c.b, "from-b", "Written on machine b")
    c.commit_both()
    pulled = c.pull()
    assert_clean_and_regenerated(c, pulled)
    merged = c.index(c.b)
    assert f"{top}{config.INDEX_START}\n" in merged
    assert merged.endswith(f"{config.INDEX_END}\n{bottom}")
    assert f"- [[{MEMORY}/from-a]]" in merged and f"- [[{MEMORY}/from-b]]" in merged


def test_the_same_entry_changed_differently_on_both_is_a_conflict(clones: Clones) -> None:
    c = clones
    note = f"{MEMORY}/seed-entry.md"
    old = 'description: "The entry both clones start with'

    for clone, words in ((c.a, "as a says"), (c.b, "as b says")):
        text = (clone / note).read_text(encoding="utf-8")
        assert old in text
        (clone / note).write_text(text.replace(old, f"{old}, {words}"), encoding="utf-8")
        c.vk(clone, "index")
    c.new(c.b, "from-b", "Written on machine b")
    c.commit_both()
    pulled = c.pull(check=False)
    assert pulled.returncode == 1
    assert f"CONFLICT (content): Merge conflict in {INDEX}" in pulled.stdout
    merged = c.index(c.b)
    # the driver's own fallback (git's labels would be HEAD and the commit's name)
    assert re.search(
        r"^<<<<<<< ours\n.*as b says\n.*=======\n.*as a says\n>>>>>>> theirs$",
        merged,
        re.M | re.S,
    ), merged
    unmerged = git(c.b, "diff", "--name-only", "--diff-filter=U").stdout.split()
    assert INDEX in unmerged
