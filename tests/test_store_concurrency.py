"""Twenty processes on one vault at once: the hooks, scans, ``use``, ``ingest``, the brief
and an ``apply``. None may surface "database is locked" or a traceback, none may fail
for want of the writer, and no count may be lost: the registry's counters afterwards are
what was counted, exactly.

Each process is a real console-script run, as hosts and cron start them; the test waits
for each to exit (never for a time).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from tests.conftest import REPO, SAMPLE_VAULT
from tests.pty_helper import vaultkeeper_argv
from tests.transcript_fixtures import claude, text

HOOKS = REPO / "hooks"
COUNTED = ("pin-test-clock", "grep-the-config-value")
BAD = re.compile(r"database is locked|Traceback", re.I)  # a writer that waits says so: allowed


def count_of(registry: str, name: str) -> int:
    block = registry.split(f"### {name}\n", 1)[1].split("\n### ", 1)[0]
    found = re.search(r"\*\*success count:\*\* (\d+)", block)
    assert found, name
    return int(found.group(1))


def test_twenty_processes_at_once_lose_nothing(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(SAMPLE_VAULT, vault, ignore=shutil.ignore_patterns("state", ".trash"))
    prog = vaultkeeper_argv()
    env = {k: v for k, v in os.environ.items() if k != "VAULTKEEPER_VAULT"}
    env["VAULTKEEPER_TODAY"] = "2026-12-01"
    before = (vault / "patterns" / "registry.md").read_text("utf-8")
    subprocess.run([*prog, "--vault", str(vault), "scan", "--force"], env=env, check=False)

    transcripts = []
    for n in range(3):
        path = tmp_path / f"t{n}.jsonl"
        cite = text("Applying [[patterns/registry#grep-the-config-value]] here.")
        path.write_text(
            claude("user", "go", session=f"sess-{n}")
            + "\n"
            + claude("assistant", [cite], session=f"sess-{n}")
            + "\n",
            encoding="utf-8",
        )
        transcripts.append(path)
    prompt = json.dumps(
        {"hook_event_name": "UserPromptSubmit", "session_id": "s1", "prompt": "pin the clock"}
    ).encode()

    jobs: list[tuple[list[str], bytes | None]] = []
    jobs += [([*prog, "--vault", str(vault), "use", "pin-test-clock"], None)] * 8
    jobs += [([*prog, "--vault", str(vault), "ingest", str(t)], None) for t in transcripts]
    jobs += [([*prog, "--vault", str(vault), "scan", "--force"], None)] * 3
    jobs += [([*prog, "--vault", str(vault), "report", "--brief"], None)] * 2
    jobs += [([*prog, "--vault", str(vault), "index"], None)]
    jobs += [
        (
            [
                *prog,
                "--vault",
                str(vault),
                "apply",
                "promote",
                "bisect-before-reading-diffs",
                "--evidence",
                "_index.md:1",
            ],
            None,
        )
    ]
    jobs += [([str(HOOKS / "recall.sh"), str(vault), "claude-code", prog[0]], prompt)] * 2
    assert len(jobs) == 20

    procs = [
        subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if data is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=vault,
        )
        for argv, data in jobs
    ]
    outcomes = []
    for proc, (argv, data) in zip(procs, jobs, strict=True):
        out, err = proc.communicate(input=data, timeout=600)
        outcomes.append((argv[3:] if len(argv) > 3 else argv, proc.returncode, out, err))

    for argv, code, out, err in outcomes:
        both = (out + err).decode("utf-8", "replace")
        assert not BAD.search(both), f"{argv}: {both}"
        assert code in (0, 1), f"{argv} exited {code}: {both}"
    log = vault / "state" / "hooks.log"
    if log.exists():
        assert not BAD.search(log.read_text("utf-8", "replace"))

    after = (vault / "patterns" / "registry.md").read_text("utf-8")
    assert count_of(after, "pin-test-clock") == count_of(before, "pin-test-clock") + 8
    assert count_of(after, "grep-the-config-value") == count_of(before, "grep-the-config-value") + 3
    done = subprocess.run(
        [*prog, "--vault", str(vault), "lint"], env=env, capture_output=True, check=False
    )
    assert not BAD.search((done.stdout + done.stderr).decode("utf-8", "replace"))
