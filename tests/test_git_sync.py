"""One vault, two machines: a bare remote and two clones synced with system git.

Each clone counts uses (``vaultkeeper use``), promotes, prunes and adds patterns, commits,
pulls and pushes; git runs ``vaultkeeper merge-driver`` on the registry. After every
merge both clones hold the same bytes, the counts are the base plus every clone's uses,
the dates the latest, nothing else in the registry changed, and a forced scan reports
the same on both.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from git_helper import git, isolate_git

from vaultkeeper import config
from vaultkeeper.apply.batch import apply_decision
from vaultkeeper.apply.decision import Decision
from vaultkeeper.hosts.hooks import find_program

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
REGISTRY = config.REGISTRY_FILE
HEADER = (
    "# Pattern registry\n\n"
    "One `### <pattern-name>` block per reusable pattern. `vaultkeeper use NAME` counts a reuse.\n"
)


def block(name: str, count: int, last: str, extra: str = "") -> str:
    body = f"{name.capitalize()}: what to do, and when.\n"
    return f"### {name}\n{body}\n**success count:** {count}\n**last used:** {last}\n{extra}"


def registry(blocks: dict[str, tuple[int, str, str]]) -> str:
    return HEADER + "".join(f"\n{block(n, c, d, x)}" for n, (c, d, x) in blocks.items())


SEED = {
    "alpha": (2, "2026-10-01", ""),
    "beta": (0, "2025-01-01", ""),  # idle, never reused: prunable
    "gamma": (1, "2026-09-01", ""),
    "kappa": (3, "2026-08-01", ""),
    "omega": (0, "2026-11-01", ""),
}


class Machines:
    """The remote and two clones; ``vk`` runs the real console script in a clone."""

    TODAY = "2026-11-30"

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        program = find_program(env)
        assert program is not None
        self.program, self.env, self.root = program, env, root
        seed = root / "seed"
        self.vk(root, "init", str(seed))
        self.seed(seed)
        git(seed, "init", "-q")
        self.vk(seed, "hooks", "install", "git")
        git(seed, "add", "-A")
        git(seed, "commit", "-qm", "seed")
        git(root, "clone", "-q", "--bare", "seed", "remote.git")
        self.a, self.b = root / "a", root / "b"
        for clone in (self.a, self.b):
            git(root, "clone", "-q", "remote.git", clone.name)
            out = self.vk(clone, "hooks", "install", "git").stdout
            assert "kept .gitattributes" in out and "kept .gitignore" in out
            assert "set merge.vaultkeeper.driver" in out

    def seed(self, seed: Path) -> None:
        """What the vault holds before it is first committed."""
        (seed / REGISTRY).write_text(registry(SEED), encoding="utf-8")
        self.vk(seed, "index")

    def vk(
        self, where: Path, *args: str, today: str | None = None, code: int = 0
    ) -> subprocess.CompletedProcess[str]:
        env = {**self.env, "VAULTKEEPER_TODAY": today or self.TODAY}
        vault = [] if args[0] == "init" else ["--vault", str(where)]
        done = subprocess.run(
            [self.program, *vault, *args], cwd=where, env=env, capture_output=True, text=True
        )
        assert done.returncode == code, (args, done.stdout, done.stderr)
        return done

    def use(self, clone: Path, name: str, today: str, times: int = 1) -> None:
        for _ in range(times):
            self.vk(clone, "use", name, today=today)

    def commit(self, clone: Path, message: str) -> None:
        git(clone, "add", "-A")
        git(clone, "commit", "-qm", message)

    def sync(self, first: Path, second: Path) -> subprocess.CompletedProcess[str]:
        """``first`` pushes; ``second`` pulls (a merge), pushes; ``first`` pulls."""
        git(first, "push", "-q")
        pulled = git(second, "pull", "--no-edit")
        git(second, "push", "-q")
        git(first, "pull", "-q", "--no-edit")
        return pulled

    def registry(self, clone: Path) -> str:
        return (clone / REGISTRY).read_bytes().decode("utf-8")

    def scan(self, clone: Path) -> dict[str, object]:
        report = json.loads(self.vk(clone, "scan", "--force", "--json").stdout)
        for key in ("vault", "generated_at", "duration_ms"):  # per clone, per run
            report.pop(key)
        return dict(report)


@pytest.fixture
def machines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Machines:
    env = isolate_git(monkeypatch, tmp_path)
    return Machines(tmp_path, env)


def assert_same(m: Machines, expected: str) -> None:
    assert m.registry(m.a) == expected
    assert m.registry(m.b) == expected
    assert git(m.a, "rev-parse", "HEAD").stdout == git(m.b, "rev-parse", "HEAD").stdout
    assert git(m.a, "status", "--porcelain").stdout == ""  # nothing per-machine shows up
    scan_a, scan_b = m.scan(m.a), m.scan(m.b)
    assert scan_a == scan_b
    assert scan_a["problems"] == []


def journal_actions(clone: Path) -> list[tuple[str, str]]:
    lines = (clone / config.STATE_DIR / config.JOURNAL_FILE).read_text(encoding="utf-8")
    return sorted((r["action"], r["target"]) for r in map(json.loads, lines.splitlines()))


def test_two_machines_count_prune_promote_and_add_in_both_orders(machines: Machines) -> None:
    m, state = machines, dict(SEED)

    # round 1: a pushes first; both count alpha, each counts another pattern
    m.use(m.a, "alpha", "2026-11-10", times=2)
    m.use(m.a, "gamma", "2026-11-11")
    m.use(m.b, "alpha", "2026-11-12")
    m.use(m.b, "kappa", "2026-11-05")
    m.commit(m.a, "a: uses")
    m.commit(m.b, "b: uses")
    pulled = m.sync(m.a, m.b)
    assert "CONFLICT" not in pulled.stdout + pulled.stderr
    state.update(alpha=(5, "2026-11-12", ""), gamma=(2, "2026-11-11", ""))
    state.update(kappa=(4, "2026-11-05", ""))
    assert_same(m, registry(state))
    assert m.scan(m.a)["summary"] == {"prune": 1, "promote": 3, "held_out": 0}

    # round 2: b pushes first; a prunes beta while b counts a use of it; b promotes kappa
    now = dt.datetime(2026, 11, 20, 9, 0, tzinfo=dt.timezone.utc)
    done = apply_decision(m.a, Decision("prune", "beta"), now, confirm=lambda plan: True)
    assert done.outcome == "act", done
    pruned = done.id
    m.use(m.a, "alpha", "2026-11-19")
    m.use(m.b, "beta", "2026-11-20")
    m.use(m.b, "alpha", "2026-11-18")
    receipt = f"{REGISTRY}:1"
    done = apply_decision(m.b, Decision("promote", "kappa", evidence=receipt), now)
    assert done.outcome == "act", done
    m.commit(m.a, "a: prune beta")
    m.commit(m.b, "b: promote kappa")
    pulled = m.sync(m.b, m.a)
    assert "CONFLICT" not in pulled.stdout + pulled.stderr
    note = "### beta was deleted on ours and stays deleted; 1 use(s) counted on theirs"
    assert note in pulled.stderr
    del state["beta"]
    promoted = "**promoted:** 2026-11-20 -> [[skills/kappa/SKILL]]\n"
    state.update(alpha=(7, "2026-11-19", ""), kappa=(4, "2026-11-05", promoted))
    assert_same(m, registry(state))
    assert (m.b / "skills" / "kappa" / "SKILL.md").is_file()
    # the journal travels: both machines' decisions and counted uses, on both machines
    uses = [("use", "alpha")] * 5 + [("use", "beta"), ("use", "gamma"), ("use", "kappa")]
    decided = [("promote", "kappa"), ("prune", "beta"), *uses]
    assert journal_actions(m.a) == journal_actions(m.b) == decided

    # round 3: a pushes first; a adds a pattern after omega while b counts omega
    m.vk(m.a, "new", "pattern", "zeta", "-d", "Zeta: what to do, and when.", today="2026-11-21")
    m.use(m.b, "omega", "2026-11-22")
    m.use(m.b, "gamma", "2026-11-22")
    m.commit(m.a, "a: new zeta")
    m.commit(m.b, "b: uses")
    m.sync(m.a, m.b)
    state.update(omega=(1, "2026-11-22", ""), gamma=(3, "2026-11-22", ""))
    state["zeta"] = (0, "2026-11-21", "")
    assert_same(m, registry(state))

    # round 4: b pushes first; both count the new pattern, b adds one of its own
    m.use(m.a, "zeta", "2026-11-25", times=2)
    m.use(m.b, "zeta", "2026-11-24")
    m.vk(m.b, "new", "pattern", "theta", "-d", "Theta: what to do, and when.", today="2026-11-24")
    m.commit(m.a, "a: uses")
    m.commit(m.b, "b: theta")
    m.sync(m.b, m.a)
    state.update(zeta=(3, "2026-11-25", ""), theta=(0, "2026-11-24", ""))
    assert_same(m, registry(state))
    assert m.scan(m.a)["summary"] == {"prune": 0, "promote": 3, "held_out": 0}

    # .trash/ travels with the journal: the machine that did not prune can restore
    assert pruned is not None
    m.vk(m.b, "restore", pruned)
    assert block("beta", 0, "2025-01-01") in m.registry(m.b)


def test_the_same_other_line_changed_on_both_machines_is_a_conflict(machines: Machines) -> None:
    m = machines
    text = m.registry(m.a)
    (m.a / REGISTRY).write_text(text.replace("Gamma: what", "Gamma (a): what"), encoding="utf-8")
    (m.b / REGISTRY).write_text(text.replace("Gamma: what", "Gamma (b): what"), encoding="utf-8")
    m.use(m.a, "gamma", "2026-11-10")
    m.use(m.b, "gamma", "2026-11-12")
    m.commit(m.a, "a: gamma")
    m.commit(m.b, "b: gamma")
    git(m.a, "push", "-q")
    pulled = git(m.b, "pull", "--no-edit", check=False)
    assert pulled.returncode == 1
    assert f"CONFLICT (content): Merge conflict in {REGISTRY}" in pulled.stdout
    merged = m.registry(m.b)
    assert (
        "### gamma\n<<<<<<< ours\nGamma (b): what to do, and when.\n=======\n"
        "Gamma (a): what to do, and when.\n>>>>>>> theirs\n\n"
        "**success count:** 3\n**last used:** 2026-11-12\n"
    ) in merged
    unmerged = git(m.b, "diff", "--name-only", "--diff-filter=U").stdout.split()
    assert unmerged == [REGISTRY]


def test_merge_driver_command_writes_ours_and_exits_1_on_conflict(
    machines: Machines, tmp_path: Path
) -> None:
    m = machines
    files = {}
    for name, text in (
        ("base", registry(SEED)),
        ("ours", registry({**SEED, "alpha": (3, "2026-11-01", "")})),
        ("theirs", registry({**SEED, "alpha": (4, "2026-11-02", "")})),
    ):
        files[name] = tmp_path / f"{name}.md"
        files[name].write_text(text, encoding="utf-8")
    args = [str(files[n]) for n in ("base", "ours", "theirs")]
    done = m.vk(tmp_path, "merge-driver", *args, REGISTRY)
    assert done.stdout == done.stderr == ""
    assert files["ours"].read_text(encoding="utf-8") == registry(
        {**SEED, "alpha": (5, "2026-11-02", "")}
    )
    files["theirs"].write_text(registry(SEED).replace("Alpha:", "ALPHA:"), encoding="utf-8")
    files["ours"].write_text(registry(SEED).replace("Alpha:", "Alpha!"), encoding="utf-8")
    done = m.vk(tmp_path, "merge-driver", *args, REGISTRY, code=1)
    assert re.search(r"^<<<<<<< ours$", files["ours"].read_text(encoding="utf-8"), re.M)
    assert done.stderr == ""  # git itself reports the conflict (CONFLICT (content): ...)


def test_merge_driver_notes_show_a_pulled_escape_sequence_inert(tmp_path: Path) -> None:
    """A block name pulled from another clone cannot write to the person's clipboard
    (OSC 52) or terminal when git pull prints the driver's note."""
    from click.testing import CliRunner

    from vaultkeeper.cli import cli

    name = "evil\x1b]52;c;ZWNobyBoaQ==\x07x"
    block = "### {}\nbody\n\n**success count:** {}\n**last used:** 2026-01-0{}\n"
    texts = {
        "base": "# Pattern registry\n\n" + block.format(name, 1, 1),
        "ours": "# Pattern registry\n\n" + block.format(name, 2, 2),
        "theirs": "# Pattern registry\n\n",
    }
    for side, text in texts.items():
        (tmp_path / f"{side}.md").write_text(text, encoding="utf-8")
    args = [str(tmp_path / f"{side}.md") for side in texts]
    done = CliRunner().invoke(cli, ["merge-driver", *args, REGISTRY])
    assert "### evil\\x1b]52;c;ZWNobyBoaQ==\\x07x was deleted on theirs" in done.stderr
    assert "\x1b" not in done.stderr and "\x07" not in done.stderr


def test_merge_driver_on_missing_files_is_one_line(machines: Machines, tmp_path: Path) -> None:
    done = machines.vk(tmp_path, "merge-driver", "nope-base", "nope-ours", "nope-theirs", code=1)
    assert done.stderr.count("\n") == 1 and "nope-base: cannot read" in done.stderr
    assert not os.path.exists(tmp_path / "nope-ours")


def test_install_outside_git_refuses_in_one_line(machines: Machines, tmp_path: Path) -> None:
    m = machines
    loose = tmp_path / "loose"
    m.vk(tmp_path, "init", str(loose))
    env_ceiling = {**m.env, "GIT_CEILING_DIRECTORIES": str(tmp_path)}
    done = subprocess.run(
        [m.program, "--vault", str(loose), "hooks", "install", "git"],
        env=env_ceiling,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "not a git work tree" in done.stderr
    assert not (loose / ".gitattributes").exists()
