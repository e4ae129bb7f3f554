"""verify's rows, each on a fixture of its own in a temporary folder (never the user's
vault), and what they share: a row's ``Context`` and its ``(status, detail)`` words, the
spec's step-4 fixture and the helpers that run a scan there.

- on the vault's own setup, reading it only: 1 store present, 2 frontmatter valid,
  9 trigger registered, 12 format;
- on the scanner, the real scan on a copy of the vault's markdown or on the fixture:
  3 scheduler runs, 4 classify correct, 5 throttle, 6 re-entry guard, 7 stale recovery,
  8 atomic write;
- on the applier: 10 decision loop, 11 round-trip, 13 supersession, 14 a duplicate
  merged, then restored.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import select
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vaultkeeper import config

PASS, FAIL, SKIP = "PASS", "FAIL", "SKIP"
DAY = dt.timedelta(days=1)


@dataclass(frozen=True)
class Context:
    vault: Path
    now: dt.datetime
    env: Mapping[str, str]
    tmp: Path  # this row's own empty temporary folder

    @property
    def now_ms(self) -> int:
        return int(self.now.timestamp() * 1000)


def fixture(ctx: Context) -> Path:
    """The spec's step-4 fixture: ### foo (count 3), ### bar (count 0, 100 days idle), and a
    memory file whose quoted holdout_until has passed."""
    from vaultkeeper.entries.init import init_vault

    vault = ctx.tmp / "fixture"
    init_vault(vault)
    today = ctx.now.date()
    seed(
        vault,
        [
            ("foo", "A proven lesson.", 3, today - DAY),
            ("bar", "Never reused.", 0, today - 100 * DAY),
        ],
        "baz.md",
        "---\nname: baz\ndescription: a held-out lesson\ntype: memory\nstatus: held_out\n"
        'label: inferred\nfalsification_condition: "a counter-example turns up"\n'
        f'holdout_until: "{(today - 10 * DAY).isoformat()}"\nrelations: {{}}\nsources: []\n'
        "provenance: []\n---\n\n# baz\n\nA lesson on hold.\n",
    )
    return vault


def seed(vault: Path, blocks: list[tuple[str, str, int, dt.date]], name: str, text: str) -> Path:
    """Registry blocks (name, text, count, last used) appended; memory file ``name`` of
    project p written, and its path."""
    with (vault / config.REGISTRY_FILE).open("a", encoding="utf-8") as fh:
        for block, about, count, day in blocks:
            fh.write(f"\n### {block}\n{about}\n\n{config.COUNT_LABEL} {count}\n")
            fh.write(f"{config.LAST_USED_LABEL} {day.isoformat()}\n")
    memory = vault / config.PROJECTS_DIR / "p" / config.MEMORY_SUBDIR / name
    memory.parent.mkdir(parents=True, exist_ok=True)
    memory.write_text(text, encoding="utf-8")
    return memory


def scan(vault: Path, now: dt.datetime, env: Mapping[str, str], force: bool = False) -> Any:
    from vaultkeeper.scan.classify import run_scan

    return run_scan(vault, now=now, env=env, force=force, pid=os.getpid())


def child_env(env: Mapping[str, str], **extra: str) -> dict[str, str]:
    """``env`` for a child Python that imports this very vaultkeeper."""
    path = os.pathsep.join(p for p in sys.path if p)
    return {**env, "PYTHONPATH": path, **extra}


def unforced(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k != config.ENV_FORCE}


def store_present(ctx: Context) -> tuple[str, str]:
    dirs = (config.PROJECTS_DIR, config.PATTERNS_DIR, config.REFERENCES_DIR, config.STATE_DIR)
    missing = [d + "/" for d in dirs if not (ctx.vault / d).is_dir()]
    if not (ctx.vault / config.INDEX_FILE).is_file():
        missing.insert(0, config.INDEX_FILE)
    if missing:
        return FAIL, f"missing: {', '.join(missing)} (`vaultkeeper init` adds them)"
    return PASS, f"{config.INDEX_FILE}, " + ", ".join(d + "/" for d in dirs) + " present"


def _lint(ctx: Context, wanted: list[str]) -> tuple[str, str]:
    """The row's codes, by lint's own rules for this vault: a code `vaultkeeper lint`
    leaves off here by default (VK101 on someone's Obsidian vault) is not run either."""
    from vaultkeeper.lint import lint_vault
    from vaultkeeper.lint.codes import Selection
    from vaultkeeper.store.vault import is_ours

    default = Selection.parse(None, (), ours=is_ours(ctx.vault))
    codes = [c for c in wanted if default.enabled(c)]
    off = [c for c in wanted if c not in codes]
    not_run = f"; {'/'.join(off)} not run, as by `vaultkeeper lint` on this vault" if off else ""
    if not codes:
        return SKIP, f"{'/'.join(off)}: not run by `vaultkeeper lint` on this vault"
    result = lint_vault(ctx.vault, select=codes)
    if not result.findings:
        return PASS, f"{result.files} markdown files, no {'/'.join(codes)} findings{not_run}"
    more = len(result.findings) - 1
    tail = f" (+{more} more: vaultkeeper lint --select {','.join(codes)})" if more else ""
    return FAIL, f"{result.findings[0]}{tail}"


def frontmatter_valid(ctx: Context) -> tuple[str, str]:
    return _lint(ctx, ["VK001", "VK201"])


def format_sfs(ctx: Context) -> tuple[str, str]:
    return _lint(ctx, ["VK101", "VK102", "VK103"])


def trigger_registered(ctx: Context) -> tuple[str, str]:
    """A session-end hook or a cron line for this vault, and when the last scan completed."""
    from vaultkeeper.hosts.hooks import default_path
    from vaultkeeper.status.health import last_completed, where_installed

    hosts = {t: default_path(t, ctx.env) for t in ("claude-code", "codex")}
    where = where_installed(hosts, True, ctx.env, ctx.vault)
    here = ctx.vault.resolve()

    def ours(path: str | None) -> bool:
        return path is not None and Path(path).expanduser().resolve() == here

    found = [
        f"{h.target} SessionEnd hook in {h.path}"
        for h in where.hosts
        for handler in h.handlers
        if handler.event == "SessionEnd" and ours(handler.vault)
    ]
    found += [f"cron line ({' '.join(e.line.split()[:5])})" for e in where.cron if ours(e.vault)]
    when = last_completed(ctx.vault)
    last = f"last scan completed {when:%Y-%m-%d %H:%M} UTC" if when else "no scan completed yet"
    if not found:
        note = f"; {where.cron_note}" if where.cron_note else ""
        return FAIL, (
            "no session-end hook or cron line for this vault "
            f"(`vaultkeeper hooks install claude-code|codex|cron`){note}; {last}"
        )
    return PASS, f"{'; '.join(found)}; {last}"


_SUMMARY = re.compile(
    re.escape(config.SUMMARY_PREFIX)
    + r" prune candidates \d+ \| promote eligible \d+ \| held-out due \d+$"
)


def scheduler_runs(ctx: Context) -> Callable[[], tuple[str, str]]:
    """Row 3 started: the real command, forced past the cooldown, on a copy of the
    vault's markdown, runs while verify goes on with other rows; the function returned
    waits for it and says the row's result."""
    from vaultkeeper.store.vault import iter_markdown, rel

    copy = ctx.tmp / "vault"
    (copy / config.STATE_DIR).mkdir(parents=True)
    for path in iter_markdown(ctx.vault):
        if not path.is_file():  # a FIFO named *.md: no copy, and no false FAIL
            continue
        target = copy / rel(ctx.vault, path)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    env = child_env(ctx.env, **{config.ENV_FORCE: "1"})
    argv = [sys.executable, "-m", "vaultkeeper", "--vault", str(copy), "scan"]
    proc = subprocess.Popen(
        argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip

    def finish() -> tuple[str, str]:
        try:
            out, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        first = (out.splitlines() or [""])[0]
        if proc.returncode != 0:
            why = (err.strip().splitlines() or ["no message"])[-1]
            return FAIL, f"exit {proc.returncode}: {why}"
        if not _SUMMARY.match(first):
            return FAIL, f"first line is {first!r}, not the {config.SUMMARY_PREFIX} summary"
        return PASS, f"exit 0: {first}"

    return finish


def classify_correct(ctx: Context) -> tuple[str, str]:
    from vaultkeeper.scan.classify import classify

    report = classify(fixture(ctx), ctx.now)
    got = {k: sorted(c.name for c in v) for k, v in report.lists().items()}
    shown = f"promote {got['promote']}, prune {got['prune']}, held-out {got['held_out']}"
    if got == {"promote": ["foo"], "prune": ["bar"], "held_out": ["baz"]}:
        return PASS, f"{shown}: each in exactly one list"
    return FAIL, f"{shown}; expected promote [foo], prune [bar], held-out [baz]"


def throttle(ctx: Context) -> tuple[str, str]:
    vault, env = fixture(ctx), unforced(ctx.env)
    first = scan(vault, ctx.now, env)
    second = scan(vault, ctx.now + dt.timedelta(minutes=1), env)
    forced = scan(vault, ctx.now + dt.timedelta(minutes=2), env, force=True)
    if first.report is None:
        return FAIL, f"the first run did not scan ({first.skipped}: {first.detail})"
    if second.report is not None:
        return FAIL, "a second run 1 minute later scanned again: no cooldown in force"
    if forced.report is None:
        return FAIL, f"a forced run skipped ({forced.skipped}: {forced.detail})"
    return PASS, f"2nd run within the cooldown skipped ({second.detail}); forced run scanned"


def _behind_a_run(ctx: Context, age_ms: int, force: bool) -> tuple[Path, Any]:
    """The fixture's scan, forced or not, while the state file says a run started
    ``age_ms`` ago is in progress in a live process that is not this one."""
    from vaultkeeper.scan.statefile import IN_PROGRESS, default_state, write_state

    vault = fixture(ctx)
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    try:
        state = {"state": IN_PROGRESS, "lastTriggered": ctx.now_ms - age_ms, "pid": child.pid}
        write_state(vault, {**default_state(), **state})
        return vault, scan(vault, ctx.now, unforced(ctx.env), force=force)
    finally:
        child.communicate(b"", timeout=30)


def reentry_guard(ctx: Context) -> tuple[str, str]:
    _, outcome = _behind_a_run(ctx, 60_000, force=True)
    if outcome.report is not None:
        return FAIL, "a run started although another (live pid, 1 min old) is in progress"
    return PASS, f"skipped even when forced: {outcome.detail}"


def stale_recovery(ctx: Context) -> tuple[str, str]:
    from vaultkeeper.scan.statefile import IDLE, read_state

    vault, outcome = _behind_a_run(ctx, config.STALE_RUN_MS, force=False)
    after = read_state(vault).data
    if outcome.report is None:
        return (
            FAIL,
            f"a run {config.STALE_RUN_MS // 60_000} min stale still blocks: {outcome.detail}",
        )
    if after["state"] != IDLE or after["lastCompleted"] < ctx.now_ms:
        return (
            FAIL,
            f"state after the run: {after['state']}, lastCompleted {after['lastCompleted']}",
        )
    return PASS, "stale in-progress run reset to idle, then the scan ran and completed"


_WRITER = """
import sys
from vaultkeeper.scan import statefile as state
print("ready", flush=True)
if not sys.stdin.readline():  # "go": started early, so Python's start overlaps other rows
    sys.exit(0)  # verify went away before its turn: write nothing
i = 0
while True:
    i += 1
    state.write_state(sys.argv[1], {**state.default_state(), "lastCompleted": i,
                                    "perTask": {"pad": "x" * 200000}})
    if i == 1:
        print("wrote", flush=True)
"""


def _line(proc: subprocess.Popen[bytes], timeout: float) -> bytes:
    """The child's next line, or b"" if none comes within ``timeout`` (a bound, not a wait)."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    return proc.stdout.readline().strip() if ready else b""


def _kill_after_write(proc: subprocess.Popen[bytes], delay: float, bound: float) -> str | None:
    """SIGKILL ``proc`` ``delay`` s after its first finished write; why not, or None."""
    assert proc.stdout is not None
    started = _line(proc, bound) == b"ready"
    wrote = started and _line(proc, bound) == b"wrote"
    try:
        proc.wait(timeout=delay)
        return f"the writer process ended by itself (exit {proc.returncode})"
    except subprocess.TimeoutExpired:
        proc.kill()  # SIGKILL: no cleanup of any kind runs
    proc.wait(timeout=bound)
    if not started:
        return "the writer process did not start"
    if not wrote:
        return f"the writer finished no write in {bound:.0f} s"
    return None


def atomic_write(ctx: Context) -> Callable[[], tuple[str, str]]:
    """Row 8 started: kill a process mid-way through rewriting the state file, several
    times. Its writer processes start and wait; the function returned sets them
    writing, kills them, and checks."""
    from vaultkeeper.scan.statefile import read_state, state_path, write_state

    vault = fixture(ctx)
    path = Path(state_path(vault))
    path.parent.mkdir(parents=True, exist_ok=True)
    write_state(vault, read_state(vault).data)
    where = f"{config.STATE_DIR}/{config.STATE_FILE}"
    bound = config.VERIFY_CHILD_BOUND_S
    # Each kill comes after the writer's first finished write (an event, not a time: on
    # a busy machine starting Python alone can take longer than any fixed delay), then
    # a little later each time, to land at different points of the rewrites. The three
    # writers run at once, each on its own copy, so the row costs one start, not three.
    vaults = [vault]
    for n in (1, 2):
        copy = ctx.tmp / f"fixture-{n}"
        shutil.copytree(vault, copy)
        vaults.append(copy)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(v)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            bufsize=0,  # unbuffered: a readline takes one line, never the next one too
            stderr=subprocess.DEVNULL,
            env=child_env(ctx.env),
        )
        for v in vaults
    ]
    return lambda: _kill_and_check(procs, vaults, where, bound)


def _kill_and_check(
    procs: list[subprocess.Popen[bytes]], vaults: list[Path], where: str, bound: float
) -> tuple[str, str]:
    from vaultkeeper.scan.statefile import read_state, state_path

    try:
        for proc in procs:  # all write at once, each on its own copy
            assert proc.stdin is not None
            with contextlib.suppress(OSError):  # one that died: _kill_after_write says so
                proc.stdin.write(b"go\n")
                proc.stdin.flush()
        for delay, proc, target in zip((0.0, 0.02, 0.05), procs, vaults, strict=True):
            failed = _kill_after_write(proc, delay, bound)
            if failed:
                return FAIL, failed
            state_file = Path(state_path(target))
            try:
                data = json.loads(state_file.read_bytes())
            except ValueError as exc:
                return (
                    FAIL,
                    f"after a kill {delay} s past a write, {where} is not valid JSON: {exc}",
                )
            if read_state(target).note is not None or not data.get("lastCompleted"):
                why = read_state(target).note or "lastCompleted missing"
                return FAIL, f"after a kill {delay} s past a write: {why}"
    finally:
        for proc in procs:
            proc.kill()  # nothing for one already reaped
            proc.communicate(timeout=bound)  # reaps it and closes its pipes
    return PASS, f"killed 3 times while rewriting {where}: valid JSON every time"


_RECEIPT = f"{config.INDEX_FILE}:1"


def _apply(vault: Path, now: dt.datetime, action: str, target: str, **kw: Any) -> Any:
    from vaultkeeper.apply.batch import apply_decision
    from vaultkeeper.apply.decision import Decision

    confirm = kw.pop("confirm", None)
    return apply_decision(vault, Decision(action, target, **kw), now, confirm=confirm)


def _status(vault: Path, rel_path: str) -> str | None:
    from vaultkeeper.store.model import read_note

    return read_note(vault, vault / rel_path).get_str("status")


def _lessons(ctx: Context, *names: str, label: str | None = None) -> tuple[Path, list[Any]]:
    """A new vault in the row's folder with a held-out lesson of project p per name."""
    from vaultkeeper.entries.create import new_entry
    from vaultkeeper.entries.init import init_vault

    vault = ctx.tmp / "vault"
    init_vault(vault)
    today = ctx.now.date()
    made = [
        new_entry(vault, "memory", n, f"lesson {n}", project="p", label=label or lab, today=today)
        for n, lab in zip(names, ("inferred", "rule"), strict=False)
    ]
    return vault, made


def decision_loop(ctx: Context) -> tuple[str, str]:
    vault, now = fixture(ctx), ctx.now
    receipt = f"{config.REGISTRY_FILE}:1"
    memory = f"{config.PROJECTS_DIR}/p/{config.MEMORY_SUBDIR}/baz.md"
    steps = [
        ("promote without a receipt", _apply(vault, now, "promote", "foo"), "defer"),
        ("promote with a receipt", _apply(vault, now, "promote", "foo", evidence=receipt), "act"),
        ("prune with no person", _apply(vault, now, "prune", "bar"), "ask"),
        (
            "re-check before the hold-out ends",
            _apply(vault, now - 30 * DAY, "revalidate", memory, result="pass", evidence=receipt),
            "defer",
        ),
        (
            "re-check with the condition held off",
            _apply(vault, now, "revalidate", memory, result="pass", evidence=receipt),
            "act",
        ),
    ]
    for what, outcome, want in steps:
        if outcome.outcome != want:
            return FAIL, f"{what}: {outcome.outcome}, expected {want} ({outcome.reason})"
    if b"### bar" not in (vault / config.REGISTRY_FILE).read_bytes():
        return FAIL, "prune removed ### bar without a person's yes"
    if _status(vault, memory) != "active":
        return FAIL, f"{memory}: status {_status(vault, memory)} after a passed re-check"
    return PASS, "promote needs a receipt, prune asks a person, held-out waits and re-checks"


def round_trip(ctx: Context) -> tuple[str, str]:
    """teach (new) -> schedule (run_scan) -> scan (classify) -> decide (apply)."""
    vault, made = _lessons(ctx, "kept", "dropped")
    for entry in made:
        if _status(vault, entry.path) != "held_out":
            return (
                FAIL,
                f"new lesson {entry.path} starts {_status(vault, entry.path)}, not held_out",
            )
    later = ctx.now + (config.HOLDOUT_DAYS + 1) * DAY
    outcome = scan(vault, later, unforced(ctx.env))
    due = sorted(c.name for c in outcome.report.held_out) if outcome.report else []
    if due != ["dropped", "kept"]:
        return FAIL, f"after the hold-out the scan lists {due}, expected [dropped, kept]"
    kept, dropped = made[0].path, made[1].path
    moves = [
        (kept, "revalidate", {"result": "pass"}, "active"),
        (dropped, "revalidate", {"result": "fail"}, "archived"),
        (dropped, "reactivate", {}, "active"),
    ]
    for path, action, kw, want in moves:
        result = _apply(vault, later, action, path, evidence=_RECEIPT, **kw)
        status = _status(vault, path)
        if status != want:
            return FAIL, f"{action} {path}: status {status}, expected {want} ({result.reason})"
    return PASS, "held_out -> active (pass); held_out -> archived (fail) -> active (evidence)"


def supersession(ctx: Context) -> tuple[str, str]:
    """supersede -> OLD archived and linked, never served as held-out, lint clean ->
    reactivate -> both files byte for byte as before."""
    from vaultkeeper.lint import lint_vault
    from vaultkeeper.scan.classify import classify
    from vaultkeeper.store.model import read_note
    from vaultkeeper.upkeep.supersession import is_superseded, supersedes

    vault, (old, new) = _lessons(ctx, "old-way", "new-way", label="rule")
    files = [vault / old.path, vault / new.path]
    before = [f.read_bytes() for f in files]

    def run(action: str, by: str | None = None) -> str:
        outcome = _apply(vault, ctx.now, action, old.path, evidence=_RECEIPT, by=by)
        return "" if outcome.outcome == "act" else f"{action}: {outcome.outcome} ({outcome.reason})"

    problem = run("supersede", by=new.path)
    if problem:
        return FAIL, problem
    old_note, new_note = (read_note(vault, f) for f in files)
    if not is_superseded(old_note) or old_note.get_str("status") != "archived":
        return FAIL, f"{old.path}: not marked superseded and archived"
    if old.path.removesuffix(".md") not in supersedes(new_note):
        return FAIL, f"{new.path}: does not list {old.path} under supersedes"
    later = ctx.now + (config.HOLDOUT_DAYS + 1) * DAY
    if old.path in [c.path for c in classify(vault, later).held_out]:
        return FAIL, f"the scan still lists superseded {old.path} as held-out"
    found = [f"{f.path}:{f.line} {f.code}" for f in lint_vault(vault, select=["VK6"]).findings]
    if found:
        return FAIL, f"lint after supersede: {', '.join(found)}"
    problem = run("reactivate")
    if problem:
        return FAIL, problem
    if [f.read_bytes() for f in files] != before:
        return FAIL, "reactivate did not restore both files byte for byte"
    return PASS, "supersede links both sides and archives the old; reactivate undoes every byte"


_KEEP, _DROP = "pin-test-clock", "pin-the-clock-in-tests"


def _files(root: Path) -> dict[str, bytes]:
    skip = (config.STATE_DIR + "/", config.TRASH_DIR + "/")
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.relative_to(root).as_posix().startswith(skip)
    }


def merge(ctx: Context) -> tuple[str, str]:
    """A duplicate pair is reported; merge waits for a person's yes (ask), then adds
    counts and moves links; restore undoes it."""
    from vaultkeeper.index.build import build_index
    from vaultkeeper.registry.blocks import find_block

    vault, _ = _lessons(ctx)
    day = ctx.now.date()
    blocks = [
        (_KEEP, "Inject now into date logic in tests.", 2, day),
        (_DROP, "Pin the clock in tests: inject now into date logic.", 1, day),
    ]
    front = "---\nname: n\ndescription: a note\ntype: memory\nstatus: active\nlabel: fact\n---\n"
    note = seed(vault, blocks, "n.md", f"{front}See [[registry#{_DROP}]].\n")
    build_index(vault)
    before = _files(vault)
    found = scan(vault, ctx.now, unforced(ctx.env), force=True).report
    pairs = [(p.a_name, p.b_name) for p in (found.duplicates if found else ())]
    if pairs != [(_KEEP, _DROP)]:
        return FAIL, f"the scan lists duplicates {pairs}, expected [({_KEEP}, {_DROP})]"
    receipt = f"{config.REGISTRY_FILE}:1"
    asked = _apply(vault, ctx.now, "merge", _KEEP, evidence=receipt, drop=_DROP)  # no person
    if asked.outcome != "ask" or _files(vault) != before:
        return FAIL, f"merge without a person's yes: {asked.outcome} ({asked.reason})"
    # the fixture's own stand-in for the person's yes (a temporary vault, never the user's)
    yes = {"evidence": receipt, "drop": _DROP, "confirm": lambda plan: True}
    done = _apply(vault, ctx.now, "merge", _KEEP, **yes)
    if done.outcome != "act":
        return FAIL, f"merge: {done.outcome} ({done.reason})"
    count = find_block(vault, _KEEP).count
    linked = f"[[{config.REGISTRY_FILE.removesuffix('.md')}#{_KEEP}]]" in note.read_text()
    if count != 3 or not linked:
        return FAIL, f"after merge: count {count} (expected 3), link moved to KEEP: {linked}"
    back = _apply(vault, ctx.now, "restore", str(done.id))
    if back.outcome != "act" or _files(vault) != before:
        return FAIL, f"restore {done.id}: {back.outcome}; files not as before ({back.reason})"
    return PASS, (
        "duplicate reported; merge waits for a person, then adds counts, moves links; "
        "restore byte for byte"
    )
