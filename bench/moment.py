"""The point-of-use recall hook's cost, and how often a prompt gets a lesson.

    python bench/moment.py [SIZES...]   # default 1000 10000 50000; rows for docs/benchmarks.md

For each size: a seeded vault of that many lessons in 20 projects (a 3,000-word
vocabulary, every tenth lesson with a ``paths:`` glob, every fifth with an anchor), the
full-text index built cold in state/vaultkeeper.db and refreshed unchanged (a stat
walk), then hooks/recall.sh run as a host runs it (a fresh process, the payload on
stdin) with the recorded Claude Code payloads: half prompts, half ``Read`` calls, each
in a new session so every run does the whole work (choose, render, mark the session, log
``shown``). p50/p95 of the wall time, and of the CPU time of the processes (steadier on
a shared machine).

Then the share of prompts that get a lesson, on sample_vault/ with the 20 prompts below
(ten about its lessons' topics, ten not), from a folder that is no project's (so every
project's lessons may be chosen): which got one, and whether it was the one meant.
"""

from __future__ import annotations

import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from vaultkeeper.search.index import refresh, want  # noqa: E402
from vaultkeeper.store import db  # noqa: E402

HOOK = REPO / "hooks" / "recall.sh"
FIXTURE = REPO / "tests/fixtures/hosts/claude-code-2.1.332/hook-context/hooks"
PROJECTS = 20
# (prompt, the lesson meant or None) on sample_vault/
PROMPTS = [
    ("the CI job failed, should I just rerun it?", "flaky-ci-retries"),
    ("retry the failing pipeline step", "flaky-ci-retries"),
    ("add pagination to the users list endpoint", "paginate-with-cursors"),
    ("why do we use cursors instead of page numbers", "paginate-with-cursors"),
    ("store the created_at timestamp for orders", "use-utc-everywhere"),
    ("convert times to the user's timezone for display", "use-utc-everywhere"),
    ("the dashboard cards overlap on narrow screens", "css-grid-over-floats"),
    ("lay out the cards in a grid", "css-grid-over-floats"),
    ("add a polyfill for the legacy browsers", "vite-build"),
    ("the webpack build config needs a new loader", "vite-build"),
    ("rename the variable foo to bar", None),
    ("write a haiku about autumn", None),
    ("explain this regular expression", None),
    ("bump the version number in setup", None),
    ("fix the typo in the readme", None),
    ("add a unit test for the parser", None),
    ("what does this error message mean", None),
    ("delete the unused imports", None),
    ("make the logo bigger", None),
    ("summarise the last commit", None),
]


def build(vault: Path) -> int:
    """The full-text index asked for and brought up to date (the files it read)."""
    want(vault)
    with db.connect(vault) as conn:
        return refresh(conn, vault)


def vk() -> str:
    script = Path(sys.executable).with_name("vaultkeeper")
    if not script.is_file():
        sys.exit("run with the venv's python (its vaultkeeper script is needed)")
    return str(script)


def vault_of(size: int, root: Path) -> Path:
    rng = random.Random(size)
    words = [f"w{n}{chr(97 + n % 26)}" for n in range(3000)]
    vault = root / f"v{size}"
    (vault / "state").mkdir(parents=True)
    (vault / "_index.md").write_text("# index\n")
    (vault / "patterns").mkdir()
    for i in range(size):
        project = f"p{i % PROJECTS}"
        folder = vault / "projects" / project / "memory"
        folder.mkdir(parents=True, exist_ok=True)
        name = "-".join(rng.sample(words, 3))
        extra = f"paths: ['src/m{i % 50}/**/*.py']\n" if i % 10 == 0 else ""
        extra += f"anchors: ['src/f{i % 200}.py::fn{i}']\n" if i % 5 == 0 else ""
        body = " ".join(rng.choice(words) for _ in range(120))
        (folder / f"l{i}.md").write_text(
            f"---\nname: {name}\ndescription: {' '.join(rng.sample(words, 10))}\n"
            f"type: memory\nstatus: active\n{extra}---\n\n{body}\n"
        )
    return vault


def compiled() -> None:
    """Byte-compile the package first: an installed one is (pip compiles a wheel), and
    a run with PYTHONDONTWRITEBYTECODE set would otherwise compile every module anew in
    every hook call."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(REPO / "vaultkeeper")], env=env, check=True
    )


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def hook(vault: Path, payload: dict[str, object]) -> tuple[float, float, str]:
    """(wall ms, CPU ms of the processes, stdout) of one hook call."""
    cpu = _cpu()
    began = time.perf_counter()
    done = subprocess.run(
        [str(HOOK), str(vault), "claude-code", vk()],
        input=json.dumps(payload).encode(),
        capture_output=True,
        check=False,
    )
    wall = (time.perf_counter() - began) * 1000
    return wall, (_cpu() - cpu) * 1000, done.stdout.decode()


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p * (len(ordered) - 1)))]


def timing(size: int, root: Path, runs: int) -> None:
    vault = vault_of(size, root)
    began = time.perf_counter()
    build(vault)
    cold = time.perf_counter() - began
    time.sleep(2.1)  # files younger than 2 s are read again (racy mtime): let them settle
    build(vault)
    began = time.perf_counter()
    build(vault)
    warm = time.perf_counter() - began  # a stat walk, nothing read
    table = db.path_of(vault).stat().st_size
    prompt = json.loads((FIXTURE / "02-UserPromptSubmit.json").read_text())
    tool = json.loads((FIXTURE / "04-PreToolUse.json").read_text())
    rng = random.Random(7)
    words = [f"w{n}{chr(97 + n % 26)}" for n in range(3000)]
    times: dict[str, list[float]] = {"prompt": [], "file": []}
    cpus: list[float] = []
    bare: list[float] = []  # a bare interpreter, interleaved: the load's share of each call
    served = 0
    for r in range(runs):
        began = time.perf_counter()
        subprocess.run([sys.executable, "-S", "-c", "pass"], check=True)
        bare.append((time.perf_counter() - began) * 1000)
        if r % 2 == 0:
            text = " ".join(rng.sample(words, 4)) + " please fix the build"
            payload = {**prompt, "session_id": f"b{r}", "cwd": "/x/p3", "prompt": text}
            kind = "prompt"
        else:
            file = f"/x/p3/src/m{r % 50}/f{r % 200}.py"
            payload = {**tool, "session_id": f"b{r}", "cwd": "/x/p3", "tool_name": "Read"}
            payload["tool_input"] = {"file_path": file}
            kind = "file"
        ms, cpu, out = hook(vault, payload)
        times[kind].append(ms)
        cpus.append(cpu)
        served += bool(out)
    both = times["prompt"] + times["file"]
    print(
        f"| {size:,} | {pct(both, 0.5):.0f} | {pct(both, 0.95):.0f} | "
        f"{pct(times['prompt'], 0.95):.0f} | {pct(times['file'], 0.95):.0f} | "
        f"{pct(cpus, 0.5):.0f} / {pct(cpus, 0.95):.0f} | "
        f"{table / 1e6:.1f} MB | {cold:.1f} s | {warm * 1000:.0f} ms | {served}/{runs} | "
        f"{pct(bare, 0.5):.0f} / {pct(bare, 0.95):.0f} | {os.getloadavg()[0]:.1f} |"
    )
    shutil.rmtree(vault)


def share(root: Path) -> None:
    vault = root / "sample"
    shutil.copytree(REPO / "sample_vault", vault, ignore=shutil.ignore_patterns("state"))
    build(vault)
    prompt = json.loads((FIXTURE / "02-UserPromptSubmit.json").read_text())
    got = right = wrong = 0
    for n, (text, meant) in enumerate(PROMPTS):
        payload = {**prompt, "session_id": f"s{n}", "cwd": "/x/work", "prompt": text}
        _, _, out = hook(vault, payload)
        names = (
            []
            if not out
            else [
                part.split('\\"', 1)[0].rsplit("/", 1)[-1].removesuffix(".md")
                for part in out.split('path=\\"')[1:]
            ]
        )
        got += bool(names)
        right += meant is not None and meant in names
        wrong += meant is None and bool(names)
        print(f"  {'+' if names else '-'} {text!r}: {', '.join(names) or 'nothing'}")
    on_topic = sum(1 for _, m in PROMPTS if m)
    print(
        f"prompts given a lesson: {got}/{len(PROMPTS)}; on-topic given the one meant: "
        f"{right}/{on_topic}; off-topic given one anyway: {wrong}/{len(PROMPTS) - on_topic}"
    )


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [1000, 10000, 50000]
    compiled()
    print(
        "| lessons | p50 ms | p95 ms | p95 prompt | p95 file | CPU p50 / p95 ms |"
        " database | cold build | unchanged refresh | calls that served |"
        " bare `python -S` p50 / p95 ms | load |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="vk-moment-") as tmp:
        for size in sizes:
            timing(size, Path(tmp), 60 if size <= 10000 else 30)
        share(Path(tmp))


if __name__ == "__main__":
    main()
