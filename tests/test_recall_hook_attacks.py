"""Issue 32's attacks on the recall hooks (items 1, 4, 6, 7, 8, 12, 13), each driven as a
host drives the hook (hooks/recall.sh, a payload on stdin), each failing on the code
before the full-text index: links and FIFOs under state/, a token split by a
line-breaking control, a backtracking glob, oversized input, a lesson whose code is gone,
a lesson archived by hand, and the usage log's ``shown`` line."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests import anchors_fixture as fx
from tests.conftest import MakeVault, recall_on
from tests.git_helper import git, isolate_git
from tests.test_recall_moment import (
    CLAUDE,
    LESSONS,
    SCRIPT,
    TOKEN,
    build,
    context,
    lesson,
    paths_in,
    recorded,
    run,
)
from vaultkeeper import config
from vaultkeeper.cli import cli
from vaultkeeper.hosts.hooks import find_program
from vaultkeeper.store import db
from vaultkeeper.store.globs import glob_matches, problem
from vaultkeeper.store.uses import read_events

ROUNDING = "projects/proj/memory/rounding.md"
PROMPT = "How should cart totals round in billing?"


@pytest.fixture
def vault(make_vault: MakeVault) -> Path:
    root = make_vault(LESSONS)
    assert build(root)
    return root


def prompt(session: str = "s1", text: str = PROMPT) -> dict[str, Any]:
    return recorded(CLAUDE, "02-UserPromptSubmit.json", prompt=text, session_id=session)


def served(vault: Path, payload: dict[str, Any]) -> list[str]:
    code, out, _ = run(vault, payload)
    assert code == 0
    return paths_in(context(out, "UserPromptSubmit")) if out else []


def run_bounded(vault: Path, payload: dict[str, Any]) -> tuple[int, str]:
    """The hook run to its end; a hang (a FIFO opened for blocking) fails the test at
    the bound instead of hanging the suite."""
    program = find_program(os.environ)
    assert program
    done = subprocess.run(
        [str(SCRIPT), str(vault), "claude-code", program],
        input=json.dumps(payload).encode(),
        capture_output=True,
        timeout=120,  # a bound on a hang, not a timing: the hook returns in well under 1 s
        check=False,
    )
    return done.returncode, done.stdout.decode()


# -- item 1: nothing written or read through a symlink ------------------------------------


@pytest.mark.parametrize(
    "name",
    [config.USES_LOG_FILE, config.HOOK_LOG_FILE, "vaultkeeper.db-wal"],
)
def test_no_file_the_hook_writes_is_followed_through_a_symlink(
    vault: Path, tmp_path: Path, name: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "victim"
    target.write_text("untouched\n")
    link = vault / config.STATE_DIR / name
    link.parent.mkdir(parents=True, exist_ok=True)
    link.unlink(missing_ok=True)
    link.symlink_to(target)
    payload = prompt("s1")
    run_bounded(vault, payload)
    if name == config.HOOK_LOG_FILE:  # the hook has something to log: a bad stdin
        program = find_program(os.environ)
        assert program
        subprocess.run([str(SCRIPT), str(vault), "claude-code", program], input=b"{{", timeout=120)
        own = Path(os.environ["XDG_STATE_HOME"]) / "vaultkeeper" / config.HOOK_LOG_FILE
        assert "stdin held no JSON object" in own.read_text()  # logged in the user's own
    assert sorted(p.name for p in outside.iterdir()) == ["victim"]
    assert (outside / "victim").read_text() == "untouched\n"
    assert link.is_symlink()  # left as it is: refused, never replaced


# -- item 6: FIFOs never hang the hook; recall.sh execs the interpreter --------------------


@pytest.mark.parametrize(
    "name",
    [
        config.USES_LOG_FILE,
        config.HOOK_LOG_FILE,
        "vaultkeeper.db-wal",
    ],
)
def test_a_fifo_under_state_never_hangs_the_hook(vault: Path, name: str) -> None:
    fifo = vault / config.STATE_DIR / name
    fifo.parent.mkdir(parents=True, exist_ok=True)
    fifo.unlink(missing_ok=True)
    os.mkfifo(fifo)
    code, out = run_bounded(vault, prompt("s1"))
    assert code == 0
    assert out == "" or ROUNDING in out
    assert fifo.exists()  # left alone


def test_recall_sh_execs_the_interpreter_so_a_kill_ends_it(vault: Path) -> None:
    """The host kills the hook's process on its timeout: with ``exec`` that process is
    the Python program itself (before, a shell whose Python child outlived the kill)."""
    program = find_program(os.environ)
    assert program
    proc = subprocess.Popen(
        [str(SCRIPT), str(vault), "claude-code", program],
        stdin=subprocess.PIPE,  # held open and empty, as a host may: the hook waits on it
        stdout=subprocess.DEVNULL,
    )
    seen = ""
    try:
        while proc.poll() is None:
            try:
                seen = Path(f"/proc/{proc.pid}/cmdline").read_bytes().decode(errors="replace")
            except OSError:
                break
            if "recall.moment" in seen:
                break
            time.sleep(0.005)  # polling for an event (the exec), not waiting out a time
    finally:
        proc.kill()
        proc.wait()
    assert "recall.moment" in seen, seen


# -- item 7: globs in bounded time; lint refuses those that cannot be ------------------------


def test_a_backtracking_glob_is_matched_in_bounded_time_and_refused_by_lint(
    make_vault: MakeVault,
) -> None:
    crafted = "/".join(["**"] * 10) + "/q/**/z.py"
    deep = "/".join(f"d{i}" for i in range(30)) + "/x.py"
    started = time.process_time()
    assert glob_matches(crafted, deep) is False  # never matched: over the bound
    assert glob_matches("/".join(["**"] * 7) + "/q/**/z.py", deep) is False
    assert glob_matches("/".join(["**"] * 7) + "/d29/**/x.py", deep) is True
    assert glob_matches("*a*a*a*a*a*a*a*a*a*a*b", "a" * 200) is False
    assert time.process_time() - started < 5  # exponential matching took 84 s on this
    assert problem(crafted) is not None and problem("src/**/*.py") is None
    root = make_vault(
        {"projects/p/memory/g.md": lesson("g", "a glob", paths=json.dumps([crafted]))}
    )
    done = CliRunner().invoke(cli, ["--vault", str(root), "lint", "--select", "VK207"])
    assert done.exit_code == 1
    assert "VK207" in done.stdout and "'**' parts" in done.stdout


# -- item 8: bounded work per call -------------------------------------------------------------


def test_a_megabyte_prompt_costs_little(vault: Path) -> None:
    words = " ".join(f"w{i:06d}x" for i in range(110_000))  # ~1 MB of distinct words
    big = prompt("s-big", f"cart totals rounding {words}")
    code, out = run_bounded(vault, big)
    assert code == 0 and ROUNDING in out  # the first words still count, within the deadline
    assert not (vault / config.STATE_DIR / config.HOOK_LOG_FILE).exists()  # nothing went wrong
    same = prompt("s-same", "cart totals rounding " + "cart " * 200_000)  # one word, 1 MB
    code, out = run_bounded(vault, same)
    assert code == 0 and ROUNDING in out
    assert not (vault / config.STATE_DIR / config.HOOK_LOG_FILE).exists()


def test_json_the_hook_reads_nested_deep_or_with_a_lone_surrogate(vault: Path) -> None:
    """Nesting past the parser's depth and a value that is not an object are no request;
    a lone surrogate escape is read as U+FFFD (SQLite takes no lone surrogate), never a
    failure."""
    deep = b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    assert run_bounded_bytes(vault, deep) == (0, "")
    log = (vault / config.STATE_DIR / config.HOOK_LOG_FILE).read_text().splitlines()
    assert "stdin held no JSON object" in log[-1]
    payload = json.dumps(prompt("s-\ud800", "cart totals rounding \u00e9t\u00e9 \ud800 \u00fcber"))
    code, out = run_bounded_bytes(vault, payload.encode("ascii"))
    assert code == 0
    text = context(out, "UserPromptSubmit")
    assert ROUNDING in paths_in(text)
    shown = [e for e in read_events(vault, ["shown"]) if e.target == ROUNDING]
    assert shown[-1].session.startswith("s-\ufffd")  # the surrogate read as U+FFFD
    code, out = run_bounded_bytes(vault, json.dumps([prompt("s-list")]).encode())
    assert (code, out) == (0, "")


def run_bounded_bytes(vault: Path, data: bytes) -> tuple[int, str]:
    program = find_program(os.environ)
    assert program
    done = subprocess.run(
        [str(SCRIPT), str(vault), "claude-code", program],
        input=data,
        capture_output=True,
        timeout=120,  # a bound on a hang, not a timing
        check=False,
    )
    return done.returncode, done.stdout.decode()


# -- item 4: neutralise, mask the whole text, then cut to lines ---------------------------


@pytest.mark.parametrize(
    "breaker",
    ["\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"],
    ids=["CR", "VT", "FF", "FS", "GS", "RS", "NEL", "U+2028", "U+2029"],
)
def test_a_token_split_by_a_line_breaking_control_is_masked(
    make_vault: MakeVault, breaker: str
) -> None:
    split = TOKEN[:20] + breaker + TOKEN[20:]
    root = make_vault(
        {
            "projects/proj/memory/key.md": lesson(
                "deploy-key", "Deploy with the bot key", f"The bot key is {split} for now."
            ).encode("utf-8")
        }
    )
    assert build(root)
    code, out, _ = run(root, prompt("s1", "deploy bot key"))
    text = context(out, "UserPromptSubmit")
    assert "[redacted: github token]" in text
    assert TOKEN[4:20] not in text and TOKEN[20:] not in text


# -- item 12: a lesson whose code is gone is served marked, as the brief marks it ------------


def test_a_lesson_whose_anchor_is_gone_is_served_as_may_be_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_git(monkeypatch, tmp_path)
    monkeypatch.setenv("VAULTKEEPER_TODAY", "2026-02-01")
    monkeypatch.setenv("SELF_MAINTAIN_FORCE", "1")
    top = tmp_path / "repo"
    commits = fx.build_repo(top)
    git(top, "checkout", "-q", commits[0])
    vault = tmp_path / "vault"
    fx.build_vault(vault, top)
    git(top, "checkout", "-q", commits[1])  # old_helper renamed away
    recall_on(vault)
    scan = CliRunner().invoke(cli, ["--vault", str(vault), "scan"])
    assert scan.exit_code == 0, scan.output
    payload = recorded(
        CLAUDE,
        "04-PreToolUse.json",
        cwd=str(top),
        tool_name="Read",
        tool_input={"file_path": str(top / "src" / "cart.py")},
    )
    code, out, log = run(vault, payload)
    assert code == 0 and log == []
    text = context(out, "PreToolUse")
    blocks = {paths_in(b)[0]: b for b in text.split("\n")[1:]}
    since = commits[0][:12]
    gone = blocks["projects/shop/memory/lesson-01.md"]
    assert f">lesson-01 (may be stale: src/cart.py::old_helper is gone since {since}):" in gone
    assert "may be stale" not in blocks["projects/shop/memory/lesson-02.md"]  # still there


# -- item 13: hand edits, the shown line, session ids -------------------------------------------


@pytest.mark.parametrize("edit", ["archived", "deleted"])
def test_a_lesson_archived_or_deleted_by_hand_is_not_served(vault: Path, edit: str) -> None:
    assert served(vault, prompt("before"))[0] == ROUNDING
    path = vault / ROUNDING
    if edit == "archived":
        path.write_text(path.read_text().replace("status: active", "status: archived"))
    else:
        path.unlink()
    after = served(vault, prompt("after"))  # no scan in between
    assert ROUNDING not in after


def test_the_shown_line_never_glues_onto_a_torn_line(vault: Path) -> None:
    uses = vault / config.STATE_DIR / config.USES_LOG_FILE
    uses.write_text('{"session": "x", "kind": "use", "target": "torn')  # a writer killed
    assert served(vault, prompt("s1"))[0] == ROUNDING
    shown = [e for e in read_events(vault, ["shown"]) if e.session == "s1"]
    assert [e.target for e in shown][:1] == [ROUNDING]
    assert uses.read_text().splitlines()[0] == '{"session": "x", "kind": "use", "target": "torn'


def test_a_huge_session_id_is_refused_and_never_logged(vault: Path) -> None:
    code, out = run_bounded(vault, prompt("s" * 300_000))
    assert (code, out) == (0, "")
    uses = vault / config.STATE_DIR / config.USES_LOG_FILE
    assert not uses.exists() or max(map(len, uses.read_text().splitlines()), default=0) < 2000
    log = (vault / config.STATE_DIR / config.HOOK_LOG_FILE).read_text().splitlines()
    assert "session id of 300000 characters" in log[-1] and len(log[-1]) < 600


def test_session_ids_that_differ_only_in_unsafe_characters_are_two_sessions(
    vault: Path,
) -> None:
    assert served(vault, prompt("a/b"))[0] == ROUNDING
    assert served(vault, prompt("a/b")) == []  # the same session: once
    assert served(vault, prompt("a_b"))[0] == ROUNDING  # another session
    assert served(vault, prompt("a/b\u2028'; DROP TABLE x"))[0] == ROUNDING
    assert not (vault / config.STATE_DIR / "recall-sessions").exists()  # rows of the store


def test_two_hooks_at_once_serve_each_lesson_once_and_never_lock_up(vault: Path) -> None:
    """Two prompts of one session at once (and a search writing the index): each lesson
    is served once, and neither hook waits on the other's database write."""
    results: list[tuple[int, str]] = []

    def one() -> None:
        results.append(run_bounded(vault, prompt("same")))

    threads = [threading.Thread(target=one) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    served_paths = [
        p for _, out in results if out for p in paths_in(context(out, "UserPromptSubmit"))
    ]
    assert served_paths.count(ROUNDING) == 1
    with db.connect(vault) as conn:  # the database is whole
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
