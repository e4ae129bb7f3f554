"""Two machines, one vault: the three conflicts git stopped on (issue 33), as repros.

Each test drives a bare origin and two clones through what two machines did between
two syncs, then syncs: git must not stop, both clones end identical, the counters are
what both machines counted, and lint and ``index --check`` pass on both.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from git_helper import git, isolate_git
from two_machines import Machine, Pair

from vaultkeeper import config
from vaultkeeper.status.health import leftovers

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
REGISTRY = config.REGISTRY_FILE
SKILL = "skills/flaky-retry/SKILL.md"


def seed_registry(pair: Pair, vault: Path) -> None:
    (vault / REGISTRY).write_text(
        "# Pattern registry\n\n"
        "### flaky-retry\nRetry a flaky CI job once, then read the log.\n\n"
        "**success count:** 1\n**last used:** 2026-10-01\n\n"
        "### pin-clock\nPin the test clock instead of sleeping.\n\n"
        "**success count:** 3\n**last used:** 2026-09-01\n",
        encoding="utf-8",
    )
    pair.vk(pair.seed_machine, "index")


@pytest.fixture
def pair(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Pair:
    return Pair(tmp_path, isolate_git(monkeypatch, tmp_path), seed_registry, "2026-11-01")


def assert_identical_and_clean(pair: Pair) -> None:
    head = [git(m.vault, "rev-parse", "HEAD").stdout for m in (pair.a, pair.b)]
    assert head[0] == head[1]
    for machine in (pair.a, pair.b):
        assert git(machine.vault, "status", "--porcelain").stdout == ""
        lint = pair.vk(machine, "lint", code=None)
        assert lint.exit_code == 0, lint.stdout
        pair.vk(machine, "index", "--check")
    assert git(pair.a.vault, "diff", "--stat", "HEAD", "--").stdout == ""


def block_of(text: str, name: str) -> str:
    start = text.index(f"### {name}\n")
    end = text.find("\n### ", start + 1)
    return text[start : end + 1 if end != -1 else len(text)].rstrip("\n") + "\n"


def promote(pair: Pair, machine: Machine, receipt: str, today: str) -> None:
    pair.vk(machine, "apply", "promote", "flaky-retry", "--evidence", receipt, today=today)


def test_both_machines_promote_the_same_pattern(pair: Pair) -> None:
    """Repro 1: A promotes; B uses once more and promotes; B pulls (add/add SKILL.md)."""
    a, b = pair.a, pair.b
    pair.vk(a, "use", "flaky-retry", today="2026-11-02")
    promote(pair, a, f"{REGISTRY}:3", "2026-11-02")
    pair.vk(b, "use", "flaky-retry", today="2026-11-03")
    pair.vk(b, "use", "flaky-retry", today="2026-11-04")
    promote(pair, b, "references/vault-spec.md:1", "2026-11-04")
    theirs = pair.read(a, SKILL)
    assert theirs != pair.read(b, SKILL)  # the figures the promotion wrote differ
    pair.sync(a, b)
    assert_identical_and_clean(pair)
    skill = pair.read(b, SKILL)
    # the earlier promotion's words, and both machines' evidence
    assert "on 2026-11-02 (success count 2)." in skill
    assert "2026-11-04" not in skill.split("## Evidence")[0]
    assert skill.endswith(
        "## Evidence\n\n"
        f"- {REGISTRY}:3 (added 2026-11-02)\n"
        "- references/vault-spec.md:1 (added 2026-11-04)\n"
    )
    block = block_of(pair.read(a, REGISTRY), "flaky-retry")
    assert "**success count:** 4\n**last used:** 2026-11-04\n" in block
    assert block.count("**promoted:**") == 1 and "**promoted:** 2026-11-02" in block


def test_a_split_index_root_line_changes_on_both_machines(
    pair: Pair, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Repro 2: the root index links sub-indexes; each machine adds lessons to projects/."""
    a, b = pair.a, pair.b
    monkeypatch.setattr(config, "INDEX_MAX_LINES", 12)
    for machine in (a, b):
        pair.vk(machine, "index")  # both split the same way: no conflict from that alone
    pair.sync(a, b)
    for i in range(3):
        pair.vk(a, "new", "memory", f"from-a-{i}", "-p", "api", "-d", f"Lesson {i} from a")
    pair.vk(b, "new", "memory", "from-b", "-p", "api", "-d", "Lesson from b")
    root = pair.read(a, config.INDEX_FILE)
    assert "## sub-indexes\n- [[_index-patterns]]" in root
    pair.sync(a, b)
    assert_identical_and_clean(pair)
    projects = pair.read(b, "_index/_index-projects.md")
    for name in ("from-a-0", "from-a-1", "from-a-2", "from-b"):
        assert f"- [[projects/api/memory/{name}]]" in projects
    # nothing on the root's line that two machines change independently
    assert "- [[_index-projects]] - projects/\n" in pair.read(b, config.INDEX_FILE)


def test_both_machines_append_a_pattern_the_same_day(pair: Pair) -> None:
    """Repro 3: each appends a block at the end; each block keeps its own counters."""
    a, b = pair.a, pair.b
    pair.vk(a, "new", "pattern", "from-a", "-d", "Made on machine a.", today="2026-11-05")
    pair.vk(b, "new", "pattern", "from-b", "-d", "Made on machine b.", today="2026-11-05")
    pair.vk(a, "use", "from-a", today="2026-11-05")
    pair.vk(b, "use", "from-b", today="2026-11-05")
    pair.vk(b, "use", "from-b", today="2026-11-06")
    pair.vk(b, "use", "pin-clock", today="2026-11-06")
    pair.vk(a, "use", "pin-clock", today="2026-11-05")
    pair.sync(a, b)
    assert_identical_and_clean(pair)
    text = pair.read(a, REGISTRY)
    assert block_of(text, "from-a") == (
        "### from-a\nMade on machine a.\n\n**success count:** 1\n**last used:** 2026-11-05\n"
    )
    assert block_of(text, "from-b") == (
        "### from-b\nMade on machine b.\n\n**success count:** 2\n**last used:** 2026-11-06\n"
    )
    assert "**success count:** 5\n**last used:** 2026-11-06\n" in block_of(text, "pin-clock")


def test_hooks_status_names_a_clone_without_the_driver_config(pair: Pair) -> None:
    """A clone made after install has .gitattributes (it travels) but not the driver."""
    git(pair.root, "clone", "-q", "origin.git", "c")
    c = Machine("c", pair.root / "c", pair.root / "home-c")
    c.home.mkdir()
    shown = pair.vk(c, "hooks", "status", "git").stdout
    assert f"{c.vault / '.gitattributes'}: installed" in shown
    assert (
        "merge.vaultkeeper.driver: not set in this clone, though .gitattributes names it: "
        "git merges vaultkeeper's files as plain text and stops on their conflicts; "
        f"run `vaultkeeper --vault {c.vault} hooks install git` in this clone"
    ) in shown
    assert f"post-merge hook: absent (run `vaultkeeper --vault {c.vault} hooks" in shown
    pair.vk(c, "hooks", "install", "git")
    shown = pair.vk(c, "hooks", "status", "git").stdout
    assert "merge-driver %O %A %B %P" in shown and "not set" not in shown
    assert "post-merge hook: installed" in shown


def test_a_merge_finished_by_hand_is_a_lint_error_and_status_fails(pair: Pair) -> None:
    """Keeping both sides of the old conflict hunk (what a person does) left the first
    block without counters; a hunk left unresolved leaves markers. Both are named."""
    a = pair.a
    pair.vk(a, "status", "--json", code=None)
    registry = pair.read(a, REGISTRY)
    kept_both = registry + (
        "\n### from-a\nMade on machine a.\n### from-b\nMade on machine b.\n\n"
        "**success count:** 0\n**last used:** 2026-11-05\n"
    )
    (a.vault / REGISTRY).write_text(kept_both, encoding="utf-8")
    index = pair.read(a, config.INDEX_FILE)
    marked = index.replace(
        "- [[patterns/registry#pin-clock]]",
        "<<<<<<< HEAD\n- [[patterns/registry#pin-clock]] - a\n=======\n"
        "- [[patterns/registry#pin-clock]] - b\n>>>>>>> theirs\n- [[patterns/registry#pin-clock]]",
    )
    (a.vault / config.INDEX_FILE).write_text(marked, encoding="utf-8")
    line = kept_both.splitlines().index("### from-a") + 1
    marker = marked.splitlines().index("<<<<<<< HEAD") + 1
    lint = pair.vk(a, "lint", code=1).stdout
    assert f"{REGISTRY}:{line}:1: VK401 ### from-a: no **success count:** line" in lint
    assert f"{config.INDEX_FILE}:{marker}:1: VK106 conflict markers left by a merge" in lint
    status = pair.vk(a, "status", code=1).stdout
    assert "merge leftovers" in status and "fail" in status
    assert f"{config.INDEX_FILE}:{marker}: conflict markers" in status
    shown = pair.vk(a, "status", "--json", code=1).stdout
    assert '"merge_leftovers"' in shown and "(and 1 more)" in shown
    assert f"{REGISTRY}:{line}: ### from-a: no counter" in "\n".join(leftovers(a.vault))


def test_the_same_use_counted_on_both_machines_makes_the_same_bytes_and_both_count(
    pair: Pair,
) -> None:
    """Each machine counts one use of one pattern the same day and changes nothing else in
    the registry: both files are the same bytes, git merges them without the driver, and
    the post-merge hook adds the second use (committed on its own, pushed with the sync)."""
    a, b = pair.a, pair.b
    pair.vk(a, "use", "pin-clock", today="2026-11-03")
    pair.vk(b, "use", "pin-clock", today="2026-11-03")
    assert pair.read(a, REGISTRY) == pair.read(b, REGISTRY)
    said = pair.sync(a, b)
    assert "patterns/registry.md: counters both machines changed the same way, added up" in said
    assert_identical_and_clean(pair)
    assert "**success count:** 5\n**last used:** 2026-11-03\n" in pair.read(a, REGISTRY)
    log = git(a.vault, "log", "--format=%s", "-2").stdout.splitlines()
    assert log[0] == "vaultkeeper: counters both machines changed the same way, added up"
    # uninstall takes the hook out again; a hook someone else wrote is never touched
    hook = b.vault / ".git" / "hooks" / "post-merge"
    assert hook.is_file()
    pair.vk(b, "hooks", "uninstall", "git")
    assert not hook.exists()
    hook.write_text("#!/bin/sh\necho mine\n", encoding="utf-8")
    out = pair.vk(b, "hooks", "install", "git").stdout
    assert "kept your own" in out and "post-merge" in out
    assert hook.read_text(encoding="utf-8") == "#!/bin/sh\necho mine\n"
    assert (
        "post-merge hook: yours, without vaultkeeper's line"
        in pair.vk(b, "hooks", "status", "git").stdout
    )


def test_post_merge_outside_git_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from vaultkeeper.cli import cli

    isolate_git(monkeypatch, tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    loose = tmp_path / "loose"
    loose.mkdir()
    monkeypatch.chdir(loose)
    done = CliRunner().invoke(cli, ["post-merge"])
    assert done.exit_code == 1
    assert done.stderr == f"vaultkeeper: error: {loose}: not a git work tree\n"
    assert list(loose.iterdir()) == []


def test_a_clone_that_fast_forwards_to_another_clones_merge_adds_nothing(pair: Pair) -> None:
    """Only the clone that made the merge adds up (its hook); one fast-forwarding to that
    merge later must not (both would, and the next merge would count it twice)."""
    a, b = pair.a, pair.b
    (b.vault / ".git" / "hooks" / "post-merge").unlink()  # b merges without the hook
    pair.vk(a, "use", "pin-clock", today="2026-11-03")
    pair.vk(b, "use", "pin-clock", today="2026-11-03")
    pair.sync(a, b)  # b merges (identical sides: git alone), a fast-forwards to it
    merge = git(b.vault, "rev-parse", "HEAD").stdout
    assert git(a.vault, "rev-parse", "HEAD").stdout == merge
    assert git(a.vault, "status", "--porcelain").stdout == ""
    assert "**success count:** 4\n" in pair.read(a, REGISTRY)  # the limit without the hook
