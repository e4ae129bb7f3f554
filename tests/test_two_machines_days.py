"""Two machines, one vault, 60 simulated days (issue 33's "Done when").

A bare origin and two clones, each with its own home. Machine a works two sessions a
day, machine b one on most days; a session does a few of: ``new`` (patterns and
lessons), ``use``, ``ingest`` of Claude Code-shaped transcripts (citations in the
model's text and ``Skill`` calls of promoted patterns' skills; the same link in a
person's prompt and in a tool's output, which never count, history injected by an SDK
caller, a transcript ingested again), ``scan``,
``apply promote|supersede|revalidate``, ``merge`` and ``prune`` with a person's yes,
``native adopt`` and ``<cc-memory>`` citations of Claude Code's auto memory, and a
person's own edits of their notes. Both sync twice a day (commit, ``git pull
--no-rebase``, push), in a random order. git must never stop on a conflict; at the end
both clones are identical, every counter is what the test counted, and lint and
``status`` are clean. Seeded: the same run every time.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import os
import random
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from git_helper import git, isolate_git
from transcript_fixtures import claude, text, tool, tool_result
from two_machines import Machine, Pair

from vaultkeeper import config
from vaultkeeper.apply.batch import apply_decision
from vaultkeeper.apply.decision import Decision
from vaultkeeper.registry.blocks import parse_blocks

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
START = dt.date(2026, 6, 1)
DAYS = 60
CWD = "/srv/api"  # the project's folder on both machines
PROJECT = "srv-api"  # its auto memory's name in the counters
NATIVE = ("testing.md", "deploy.md", "ports.md")
SEED = {  # name -> (count, last used): four idle ones to prune, the rest in use
    "bisect-first": (1, "2026-05-20"),
    "pin-clock": (3, "2026-05-28"),
    "retry-once": (0, "2026-05-10"),
    "stale-one": (0, "2025-11-01"),
    "stale-two": (0, "2025-12-01"),
    "stale-three": (0, "2026-01-15"),
    "stale-four": (0, "2026-02-01"),
}
RECEIPT = "references/vault-spec.md:1"


@dataclass
class Counter:
    count: int
    last: str
    promoted: bool = False


View = dict[str, Counter]  # registry block name -> what it should hold


def seed(pair: Pair, vault: Path) -> None:
    blocks = "".join(
        f"\n### {name}\n{name.replace('-', ' ').capitalize()}: what to do, and when.\n\n"
        f"**success count:** {count}\n**last used:** {last}\n"
        for name, (count, last) in SEED.items()
    )
    (vault / config.REGISTRY_FILE).write_text("# Pattern registry\n" + blocks, encoding="utf-8")
    pair.vk(pair.seed_machine, "index")


class World:
    """The clones and what the test knows should be in them."""

    def __init__(self, pair: Pair, rng: random.Random) -> None:
        self.pair, self.rng = pair, rng
        base = {n: Counter(c, d) for n, (c, d) in SEED.items()}
        self.base: dict[str, View] = {"registry": base, "native": {}}
        self.views = {m.name: copy.deepcopy(self.base) for m in (pair.a, pair.b)}
        self.lessons: dict[str, str] = {}  # lesson name -> the machine that wrote it
        self.sessions = 0
        self.made = 0
        self.day = START

    # -- the truth ---------------------------------------------------------------------

    def today(self) -> str:
        return self.day.isoformat()

    def count(self, m: Machine, kind: str, name: str) -> None:
        view = self.views[m.name][kind]
        found = view.setdefault(name, Counter(0, self.today()))
        found.count += 1
        found.last = max(found.last, self.today())

    def merge_views(self) -> None:
        """What a sync must make of both machines' work: the documented merge rules."""
        merged: dict[str, View] = {}
        for kind, base in self.base.items():
            a, b = self.views["a"][kind], self.views["b"][kind]
            out: View = {}
            for name in dict.fromkeys([*base, *a, *b]):
                x, y, o = a.get(name), b.get(name), base.get(name)
                if x is not None and y is not None:
                    start = o.count if o is not None else 0
                    out[name] = Counter(
                        x.count + y.count - start, max(x.last, y.last), x.promoted or y.promoted
                    )
                elif o is None:  # new on one side
                    out[name] = copy.deepcopy(x or y)  # type: ignore[arg-type]
                # else: deleted on a side (pruned, merged away): stays deleted
            merged[kind] = out
        self.base = merged
        self.views = {m: copy.deepcopy(merged) for m in ("a", "b")}

    def live(self, m: Machine) -> list[str]:
        return sorted(self.views[m.name]["registry"])

    # -- a session's operations ------------------------------------------------------

    def vk(self, m: Machine, *args: str, code: int | None = 0) -> str:
        return self.pair.vk(m, *args, today=self.today(), code=code).stdout

    def new_pattern(self, m: Machine) -> None:
        self.made += 1
        name = f"{m.name}-pattern-{self.made}"
        self.vk(m, "new", "pattern", name, "-d", f"Pattern {self.made} written on {m.name}.")
        self.views[m.name]["registry"][name] = Counter(0, self.today())

    def use(self, m: Machine) -> None:
        name = self.rng.choice(self.live(m))
        self.vk(m, "use", name)
        self.count(m, "registry", name)

    def ingest(self, m: Machine) -> None:
        """A Claude Code session citing patterns and auto memories, with the lines that
        must not count; sometimes the same transcript is ingested again."""
        self.sessions += 1
        session = f"{m.name}-session-{self.sessions:04d}"
        ts = f"{self.today()}T10:00:00.000Z"
        cited = self.rng.sample(self.live(m), k=min(len(self.live(m)), self.rng.randint(1, 3)))
        memories = self.rng.sample(NATIVE, k=self.rng.randint(0, 2))
        not_counted = self.rng.choice(self.live(m))
        link = " ".join(f"[[patterns/registry#{n}]]" for n in cited)
        tag = f'<cc-memory filenames="{",".join(memories)}">noted</cc-memory> ' if memories else ""
        lines = [
            claude(
                "user", f"use [[patterns/registry#{not_counted}]]", ts, session=session, cwd=CWD
            ),
            claude(
                "assistant", [text(f"{tag}Following {link} here.")], ts, session=session, cwd=CWD
            ),
            claude("assistant", [tool("Bash", command="make test")], ts, session=session, cwd=CWD),
            claude(
                "user",
                [tool_result(f"see [[patterns/registry#{not_counted}]]")],
                ts,
                session=session,
                cwd=CWD,
            ),
        ]
        promoted = [n for n, c in self.views[m.name]["registry"].items() if c.promoted]
        if promoted and self.rng.random() < 0.4:  # a Skill call of a promoted pattern's skill
            skill = self.rng.choice(sorted(promoted))
            call = claude("assistant", [tool("Skill", skill=skill)], ts, session=session, cwd=CWD)
            lines.append(call)
            cited = [*cited, *([skill] if skill not in cited else [])]
        if self.rng.random() < 0.3:  # history an SDK caller injected: not this session's use
            lines.insert(
                0,
                claude(
                    "assistant",
                    [text(f"[[patterns/registry#{not_counted}]]")],
                    ts,
                    session=session,
                    cwd=CWD,
                    madeBy="input",
                ),
            )
        folder = m.home / ".claude" / "projects" / "-srv-api"
        path = folder / f"{session}.jsonl"
        path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
        self.vk(m, "ingest", str(path))
        for name in cited:
            self.count(m, "registry", name)
        for memory in memories:
            self.count(m, "native", f"{PROJECT}/{memory}")
        if self.rng.random() < 0.2:
            self.vk(m, "ingest", str(path))  # again: nothing counts twice

    def new_lesson(self, m: Machine) -> None:
        self.made += 1
        name = f"{m.name}-lesson-{self.made}"
        self.vk(
            m, "new", "memory", name, "-p", "api", "-d", f"Lesson {self.made} from {m.name}",
            "--falsify", "the build no longer does this",
        )  # fmt: skip
        self.lessons[name] = m.name

    def lesson_status(self, m: Machine, name: str) -> str:
        found = re.search(r"^status: (\S+)", self.lesson_text(m, name), re.M)
        return found.group(1) if found else ""

    def holdout(self, m: Machine, name: str) -> str:
        found = re.search(r'^holdout_until: "(\S+)"', self.lesson_text(m, name), re.M)
        return found.group(1) if found else "9999-12-31"

    def due(self, m: Machine) -> list[str]:
        return [
            n
            for n in sorted(self.lessons)
            if self.lesson_status(m, n) == "held_out" and self.holdout(m, n) <= self.today()
        ]

    def revalidate(self, m: Machine) -> None:
        due = self.due(m)
        if not due:
            return
        name = self.rng.choice(due)
        verdict = "--pass" if sum(map(ord, name)) % 3 else "--fail"  # the lesson's own truth
        receipt = f"references/vault-spec.md:{self.rng.randint(1, 9)}"  # each its own
        self.vk(m, "apply", "revalidate", name, verdict, "--evidence", receipt)

    def supersede(self, m: Machine) -> None:
        """An older active lesson of this machine's replaced by its newest live one."""
        mine = [n for n in sorted(self.lessons, key=_made) if self.lessons[n] == m.name]
        live = [n for n in mine if self.lesson_status(m, n) in ("active", "held_out")]
        live = [n for n in live if "superseded_by" not in self.lesson_text(m, n)]
        old = [n for n in live[:-1] if self.lesson_status(m, n) == "active"]
        if old:
            self.vk(m, "apply", "supersede", old[0], "--by", live[-1], "--evidence", RECEIPT)

    def lesson_text(self, m: Machine, name: str) -> str:
        """The lesson's text on ``m`` ("" before a sync brought it there)."""
        path = m.vault / "projects" / "api" / "memory" / f"{name}.md"
        return path.read_text(encoding="utf-8") if path.exists() else ""

    def promote(self, m: Machine) -> None:
        """A pattern the last sync already showed eligible (as the report does)."""
        eligible = [
            n
            for n, c in self.base["registry"].items()
            if c.count >= 2 and not self.views[m.name]["registry"][n].promoted
            and n in self.views[m.name]["registry"]
        ]  # fmt: skip
        if not eligible:
            return
        name = self.rng.choice(sorted(eligible))
        receipt = f"references/vault-spec.md:{self.rng.randint(1, 5)}"
        self.vk(m, "apply", "promote", name, "--evidence", receipt)
        self.views[m.name]["registry"][name].promoted = True

    def decide(self, m: Machine, decision: Decision) -> None:
        """A person at the terminal says yes."""
        now = dt.datetime.combine(self.day, dt.time(12), tzinfo=dt.timezone.utc)
        with machine_home(m):
            done = apply_decision(m.vault, decision, now, confirm=lambda plan: True)
        assert done.outcome == "act", done

    def prune(self, m: Machine) -> None:
        idle = (self.day - dt.timedelta(days=config.PRUNE_IDLE_DAYS)).isoformat()
        view = self.views[m.name]["registry"]
        candidates = [
            n
            for n, c in self.base["registry"].items()
            if c.count == 0 and c.last < idle and n in view and view[n].count == 0
        ]
        if candidates:
            name = self.rng.choice(sorted(candidates))
            self.decide(m, Decision("prune", name))
            del view[name]

    def merge(self, m: Machine) -> None:
        """Fold a never-used pattern this machine wrote into another of its own."""
        view = self.views[m.name]["registry"]
        own = [
            n
            for n, c in self.base["registry"].items()
            if n.startswith(f"{m.name}-") and n in view and not view[n].promoted and c.count == 0
        ]
        if len(own) < 2:
            return
        keep, drop = self.rng.sample(sorted(own), k=2)
        self.decide(m, Decision("merge", keep, drop=drop, evidence=RECEIPT))
        kept, dropped = view[keep], view.pop(drop)
        kept.count += dropped.count
        kept.last = max(kept.last, dropped.last)

    def hand_edit(self, m: Machine) -> None:
        """A person adds a line to one of their own lessons."""
        mine = [n for n in sorted(self.lessons) if self.lessons[n] == m.name]
        mine = [n for n in mine if self.lesson_text(m, n)]
        if mine:
            path = m.vault / "projects" / "api" / "memory" / f"{self.rng.choice(mine)}.md"
            with path.open("a", encoding="utf-8") as fh:
                fh.write(f"\nChecked again on {self.today()}.\n")

    def scan(self, m: Machine) -> None:
        self.vk(m, "scan", "--force", code=None)

    def session(self, m: Machine) -> None:
        ops = [
            (self.use, 3), (self.ingest, 4), (self.new_pattern, 1), (self.new_lesson, 1),
            (self.revalidate, 1), (self.promote, 1), (self.prune, 2), (self.merge, 1),
            (self.supersede, 1), (self.hand_edit, 1), (self.scan, 1),
        ]  # fmt: skip
        for op in self.rng.choices([o for o, _ in ops], [w for _, w in ops], k=3):
            op(m)


def _made(name: str) -> int:
    return int(name.rsplit("-", 1)[1])


@contextmanager
def machine_home(m: Machine) -> Iterator[None]:
    old = os.environ.get("HOME")
    os.environ["HOME"] = str(m.home)
    try:
        yield
    finally:
        if old is not None:
            os.environ["HOME"] = old


def native_setup(world: World, m: Machine) -> None:
    memory = m.home / ".claude" / "projects" / "-srv-api" / "memory"
    memory.mkdir(parents=True)
    for name in NATIVE:
        (memory / name).write_text(
            f"---\nname: {name[:-3]}\ndescription: how {name[:-3]} works here\n---\n\nBody.\n",
            encoding="utf-8",
        )
    (memory / "MEMORY.md").write_text(
        "".join(f"- [{n}]({n}) - how {n[:-3]} works here\n" for n in NATIVE), encoding="utf-8"
    )
    world.vk(m, "native", "adopt", "--cwd", CWD)


def counters(pair: Pair, m: Machine, rel: str) -> View:
    path = m.vault / rel
    if not path.exists():
        return {}
    out: View = {}
    for block in parse_blocks(path, rel, path.read_text(encoding="utf-8")):
        assert block.name not in out, f"{rel}: ### {block.name} twice"
        assert block.count is not None and block.last_used is not None, block
        out[block.name] = Counter(block.count, block.last_used.isoformat(), bool(block.promoted))
    return out


def assert_counters(world: World, m: Machine) -> None:
    assert counters(world.pair, m, config.REGISTRY_FILE) == world.base["registry"]
    native = counters(world.pair, m, config.NATIVE_REGISTRY_FILE)
    assert {n: (c.count, c.last) for n, c in native.items()} == {
        n: (c.count, c.last) for n, c in world.base["native"].items()
    }


def files(m: Machine) -> dict[str, bytes]:
    listed = git(m.vault, "ls-files").stdout.splitlines()
    return {p: (m.vault / p).read_bytes() for p in listed}


@pytest.fixture
def pair(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Pair:
    monkeypatch.setenv(config.ENV_HOLDOUT_DAYS, "5")
    return Pair(tmp_path, isolate_git(monkeypatch, tmp_path), seed, START.isoformat())


def test_sixty_days_on_two_machines_git_never_stops(pair: Pair) -> None:
    world = World(pair, random.Random(33))
    a, b = pair.a, pair.b
    for m in (a, b):
        native_setup(world, m)
    merges = 0
    for day in range(DAYS):
        world.day = START + dt.timedelta(days=day)
        for half in range(2):  # morning and evening: work, then sync
            world.session(a)
            if half == 0 and world.rng.random() < 0.75:  # b: one session, most days
                world.session(b)
            first, second = (a, b) if world.rng.random() < 0.5 else (b, a)
            said = pair.sync(first, second)
            merges += "Merge made" in said or "Auto-merging" in said
            world.merge_views()
            assert_counters(world, a)  # after every sync, not only at the end
    while world.due(a):  # the last day's agent re-checks every held-out lesson due
        world.revalidate(a)
    pair.sync(a, b)
    assert merges > 25  # the syncs did merge files both machines changed
    # both clones identical, nothing left to commit
    assert git(a.vault, "rev-parse", "HEAD").stdout == git(b.vault, "rev-parse", "HEAD").stdout
    assert files(a) == files(b)
    for m in (a, b):
        assert git(m.vault, "status", "--porcelain").stdout == ""
    # every counter is what the test counted
    for m in (a, b):
        assert_counters(world, m)
    assert any(c.promoted for c in world.base["registry"].values())
    journal = (a.vault / config.STATE_DIR / config.JOURNAL_FILE).read_text(encoding="utf-8")
    done = {json.loads(line)["action"] for line in journal.splitlines()}
    assert done >= {"use", "promote", "prune", "merge", "supersede", "revalidate"}
    assert len([n for n in world.base["registry"] if n.startswith("stale-")]) < 4
    # lint and status clean, the index what `index` writes
    for m in (a, b):
        lint = pair.vk(m, "lint", "--json", today=world.today(), code=None)
        found = json.loads(lint.stdout)
        assert lint.exit_code == 0, [f for f in found["findings"] if f["severity"] == "error"]
        pair.vk(m, "index", "--check", today=world.today())
        pair.vk(m, "scan", "--force", today=world.today(), code=None)
        status = pair.vk(m, "status", "--json", today=world.today(), code=None)
        signals = {s["name"]: s for s in json.loads(status.stdout)["signals"]}
        assert signals["merge_leftovers"]["verdict"] == "ok"
        assert status.exit_code == 0, [s for s in signals.values() if s["verdict"] == "fail"]
