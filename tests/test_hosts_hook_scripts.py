"""hooks/session-end.sh and hooks/session-start.sh, run the way a host runs them.

A host pipes the session's JSON to the hook's stdin, gives it no terminal, runs it as
the leader of its own process group and kills that whole group the moment the hook
returns (Claude Code does, whatever the timeout). ``run_hook`` does exactly that.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from vaultkeeper import config
from vaultkeeper.entries.init import init_vault
from vaultkeeper.hosts.hooks import find_program, script_path
from vaultkeeper.status.health import where_installed
from vaultkeeper.store.uses import read_events

END = script_path("SessionEnd")
MISSING_TRANSCRIPT = "/nonexistent/vaultkeeper-test/transcript.jsonl"
START = script_path("SessionStart")
PAYLOAD = json.dumps(
    {
        "session_id": "abc123",
        "transcript_path": MISSING_TRANSCRIPT,
        "cwd": "/tmp",
        "hook_event_name": "SessionEnd",
        "reason": "prompt_input_exit",
    }
).encode()
SYSTEM_PATH = "/usr/bin:/bin"  # python3 and coreutils, but no vaultkeeper


@dataclass(frozen=True)
class Hook:
    code: int
    stdout: str
    stderr: str
    seconds: float
    session: int  # the hook's session (and process group) id


def run_hook(script: Path, args: list[str], env: dict[str, str], stdin: bytes = PAYLOAD) -> Hook:
    proc = subprocess.Popen(
        [str(script), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,  # no terminal; the hook leads its own process group
    )
    began = time.monotonic()
    out, err = proc.communicate(stdin, timeout=30)
    seconds = time.monotonic() - began
    with contextlib.suppress(ProcessLookupError):  # what the host does when a hook returns
        os.killpg(proc.pid, signal.SIGKILL)
    return Hook(proc.returncode, out.decode(), err.decode(), seconds, proc.pid)


def wait_for(check: Callable[[], bool], seconds: float = 60) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is not running
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def executable(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


@pytest.fixture
def env(home: Path) -> dict[str, str]:
    return {"PATH": SYSTEM_PATH, "HOME": str(home), "LC_ALL": "C"}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    init_vault(tmp_path / "vault")
    return tmp_path / "vault"


# A stand-in for `vaultkeeper --vault V scan` that runs until the test releases it
# (or 60 s pass, so a failed test leaves nothing running).
SLOW_SCAN = """#!/bin/sh
state="$2/state"
echo $$ >"$state/fake.pid.tmp" && mv "$state/fake.pid.tmp" "$state/fake.pid"  # never seen empty
i=0
while [ ! -e "$state/release" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
echo "scanned $*" >"$state/fake.done"
"""


def test_the_host_harness_kills_a_plain_background_job(
    tmp_path: Path, vault: Path, env: dict[str, str]
) -> None:
    """The check below can fail: a shell ``&`` dies with the hook's process group."""
    fake = executable(tmp_path / "bin" / "vaultkeeper", SLOW_SCAN)
    naive = executable(
        tmp_path / "naive.sh",
        '#!/bin/sh\ncat >/dev/null\n"$2" --vault "$1" scan </dev/null >/dev/null 2>&1 &\n',
    )
    hook = run_hook(naive, [str(vault), str(fake)], env)
    assert hook.code == 0
    pid_file = vault / "state" / "fake.pid"
    if wait_for(pid_file.exists, 2):
        assert wait_for(lambda: not alive(int(pid_file.read_text())), 5)


def test_session_end_returns_and_the_scan_survives_the_group_kill(
    tmp_path: Path, vault: Path, env: dict[str, str]
) -> None:
    fake = executable(tmp_path / "bin" / "vaultkeeper", SLOW_SCAN)
    hook = run_hook(END, [str(vault), str(fake)], env)
    # returned while the scan is still running: it never waits for the scan
    assert hook.code == 0 and hook.stdout == "" and hook.stderr == ""
    state = vault / "state"
    assert not (state / "fake.done").exists()
    assert wait_for((state / "fake.pid").exists, 120)
    pid = int((state / "fake.pid").read_text())
    assert alive(pid), "the scan died with the hook's process group"
    assert os.getsid(pid) != hook.session and os.getpgid(pid) != hook.session
    (state / "release").touch()
    assert wait_for((state / "fake.done").exists)
    assert (state / "fake.done").read_text() == f"scanned --vault {vault} scan\n"
    # nothing went wrong: a transcript never written (the session never ran) is no failure
    assert not (state / config.HOOK_LOG_FILE).exists()


def test_session_end_finds_the_vault_in_the_environment(
    tmp_path: Path, vault: Path, env: dict[str, str]
) -> None:
    fake = executable(tmp_path / "bin" / "vaultkeeper", SLOW_SCAN)
    (vault / "state" / "release").touch()
    hook = run_hook(
        END, [], {**env, "PATH": f"{fake.parent}:{SYSTEM_PATH}", config.ENV_VAULT: str(vault)}
    )
    assert hook.code == 0
    assert wait_for((vault / "state" / "fake.done").exists)


def test_session_end_logs_a_failing_scan(tmp_path: Path, vault: Path, env: dict[str, str]) -> None:
    fake = executable(
        tmp_path / "bin" / "vaultkeeper",
        "#!/bin/sh\necho 'some problem' >&2\necho 'vaultkeeper: error: disk full' >&2\nexit 1\n",
    )
    hook = run_hook(END, [str(vault), str(fake)], env)
    assert hook.code == 0 and hook.stdout == ""
    log = vault / "state" / config.HOOK_LOG_FILE
    assert wait_for(lambda: log.exists() and log.read_text().count("\n") == 1)
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ session-end: scan exited 1: "
        r"vaultkeeper: error: disk full\n",
        log.read_text(),
    )


@pytest.mark.parametrize("how", ["argument", "environment", "nothing"])
def test_session_end_with_a_missing_vault(
    tmp_path: Path, home: Path, env: dict[str, str], how: str
) -> None:
    missing = tmp_path / "no-such-vault"
    args = [str(missing)] if how == "argument" else []
    extra = {config.ENV_VAULT: str(missing)} if how == "environment" else {}
    hook = run_hook(END, args, {**env, **extra})
    assert hook.code == 0 and hook.stdout == ""
    reason = "no vault" if how == "nothing" else f"{missing}: no such vault directory"
    assert reason in hook.stderr
    assert not missing.exists()  # a missing vault is never created
    log = home / ".local" / "state" / "vaultkeeper" / config.HOOK_LOG_FILE
    assert f"session-end: {reason}" in log.read_text()
    where = where_installed({}, False, env, None)  # `hooks status` shows it
    assert where.hook_logs == ((str(log), log.read_text().strip()),)


def test_session_end_without_vaultkeeper_on_path(vault: Path, env: dict[str, str]) -> None:
    hook = run_hook(END, [str(vault)], env)
    assert hook.code == 0 and hook.stdout == ""
    log = (vault / "state" / config.HOOK_LOG_FILE).read_text()
    assert "session-end: vaultkeeper not found on PATH" in log
    assert not (vault / "state" / config.STATE_FILE).exists()  # no scan ran


def test_session_end_with_a_program_that_is_gone(
    tmp_path: Path, vault: Path, env: dict[str, str]
) -> None:
    hook = run_hook(END, [str(vault), str(tmp_path / "uninstalled" / "vaultkeeper")], env)
    assert hook.code == 0
    log = (vault / "state" / config.HOOK_LOG_FILE).read_text()
    assert "uninstalled/vaultkeeper: not an executable program" in log


def workers(vault: Path, word: bytes | None = None) -> list[int]:
    """pids of live processes whose command line names this vault (launcher, ingest,
    scan), and ``word`` too when given."""
    out = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmd = (proc / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            named = str(vault).encode() in cmd and (word is None or word in cmd)
            if named and alive(int(proc.name)):
                out.append(int(proc.name))
    return out


def session_with_a_citation(tmp_path: Path, vault: Path) -> tuple[Path, bytes]:
    """A registry block counted once, a transcript citing it, and the host's JSON."""
    registry = vault / config.REGISTRY_FILE
    registry.write_text(
        registry.read_text() + "\n### pin-clock\n**success count:** 1\n**last used:** 2026-01-02\n"
    )
    transcript = tmp_path / "claude" / "projects" / "-src-api" / "s-1.jsonl"
    transcript.parent.mkdir(parents=True)
    said = {
        "type": "assistant",
        "sessionId": "s-1",
        "timestamp": "2026-11-30T10:00:00.000Z",
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": "Per [[patterns/registry#pin-clock|the clock]]."}],
        },
    }
    transcript.write_text(json.dumps(said) + "\n")
    payload = json.dumps(
        {
            "session_id": "s-1",
            "transcript_path": str(transcript),
            "cwd": "/src/api",
            "hook_event_name": "SessionEnd",
            "reason": "other",
        }
    ).encode()
    return transcript, payload


COUNTED_ONCE = "### pin-clock\n**success count:** 2\n**last used:** 2026-11-30\n"


@pytest.fixture
def installed(env: dict[str, str]) -> tuple[str, dict[str, str]]:
    """This checkout's vaultkeeper program, and the environment with it on PATH."""
    program = find_program(os.environ)
    assert program is not None
    return program, {**env, "PATH": f"{Path(program).parent}:{SYSTEM_PATH}"}


def test_session_end_ingests_the_transcript_once_whatever_the_host_kills(
    tmp_path: Path, vault: Path, installed: tuple[str, dict[str, str]]
) -> None:
    program, full_env = installed
    transcript, payload = session_with_a_citation(tmp_path, vault)
    for n in range(2):  # the second session end (a resumed session) counts nothing again
        hook = run_hook(END, [str(vault), program], full_env, payload)
        assert (hook.code, hook.stdout, hook.stderr) == (0, "", "")
        assert wait_for(lambda: _completed(vault) and not workers(vault), 300), n
    assert (vault / config.REGISTRY_FILE).read_text().endswith(COUNTED_ONCE)
    assert [e.receipt for e in read_events(vault)] == [f"{transcript}:1"]
    assert not (vault / "state" / config.HOOK_LOG_FILE).exists()


def test_session_end_returns_before_the_host_has_sent_its_json(
    tmp_path: Path, vault: Path, installed: tuple[str, dict[str, str]]
) -> None:
    """A host that keeps stdin open holds nothing back: the JSON may come after the return."""
    program, full_env = installed
    _, payload = session_with_a_citation(tmp_path, vault)
    proc = subprocess.Popen(
        [str(END), str(vault), program],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=full_env,
        start_new_session=True,
    )
    assert proc.stdin is not None
    try:
        assert proc.wait(timeout=30) == 0  # returned with stdin still open and empty
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    proc.stdin.write(payload)
    proc.stdin.close()
    assert wait_for(lambda: _completed(vault) and not workers(vault), 300)
    assert (vault / config.REGISTRY_FILE).read_text().endswith(COUNTED_ONCE)


# -- session-start.sh -----------------------------------------------------------------


def test_session_start_hands_the_hosts_json_to_the_program(
    tmp_path: Path, vault: Path, env: dict[str, str]
) -> None:
    """The program's hook form reads the host's JSON itself (recall/startrun.py: the
    session's folder, the transcript to catch up on; tests/test_recall_startrun.py)."""
    fake = executable(
        tmp_path / "bin" / "vaultkeeper",
        '#!/bin/sh\nfor a in "$@"; do printf "arg: %s\\n" "$a"; done\nprintf "in: "\ncat\n',
    )
    hook = run_hook(START, [str(vault), str(fake)], env)
    assert hook.code == 0
    assert hook.stdout == f"arg: --vault\narg: {vault}\narg: start-hook\nin: {PAYLOAD.decode()}\n"


def test_an_older_program_without_the_hook_form_still_gives_its_brief(
    tmp_path: Path, vault: Path, env: dict[str, str]
) -> None:
    older = executable(
        tmp_path / "bin" / "vaultkeeper",
        '#!/bin/sh\n[ "$3" = start-hook ] && { echo "No such command" >&2; exit 2; }\n'
        'echo "brief of $3 $4"\n',
    )
    hook = run_hook(START, [str(vault), str(older)], env)
    assert (hook.code, hook.stdout) == (0, "brief of report --brief\n")
    log = (vault / "state" / config.HOOK_LOG_FILE).read_text()
    assert "start-hook` failed; the brief was given without the session's folder" in log


def test_session_start_answers_while_the_host_keeps_stdin_open(
    vault: Path, env: dict[str, str]
) -> None:
    """The JSON is read up to its end, not up to the end of input: a host that writes
    it and keeps the pipe open gets the brief now, not when it closes the pipe."""
    program = shutil.which("vaultkeeper")
    assert program is not None
    proc = subprocess.Popen(
        [str(START), str(vault), program],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(PAYLOAD)
        proc.stdin.flush()  # and the pipe stays open
        assert proc.wait(timeout=60) == 0
        assert proc.stdout.read().decode().startswith(f"Memory vault: {vault}.")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.stdin.close()
        proc.stdout.close()


def test_session_start_never_prints_more_than_the_host_takes(
    tmp_path: Path, vault: Path, env: dict[str, str]
) -> None:
    fake = executable(
        tmp_path / "bin" / "vaultkeeper",
        "#!/bin/sh\ni=0\nwhile [ $i -lt 1000 ]; do echo \"candidate $i $(printf '%060d' 0)\"; "
        "i=$((i + 1)); done\n",
    )
    hook = run_hook(START, [str(vault), str(fake)], env)
    assert hook.code == 0
    assert len(hook.stdout) <= config.BRIEF_MAX_CHARS
    lines = hook.stdout.splitlines()
    assert lines[0].startswith("candidate 0 ")
    assert all(re.fullmatch(r"candidate \d+ 0{60}", x) for x in lines[:-1])  # whole lines
    assert lines[-1].startswith(f"(brief cut at {config.BRIEF_MAX_CHARS} characters")


def test_session_start_failures_print_nothing_and_exit_0(
    tmp_path: Path, vault: Path, home: Path, env: dict[str, str]
) -> None:
    failing = executable(tmp_path / "bin" / "vaultkeeper", "#!/bin/sh\necho partial\nexit 2\n")
    hook = run_hook(START, [str(vault), str(failing)], env)
    assert (hook.code, hook.stdout) == (0, "")
    log = vault / "state" / config.HOOK_LOG_FILE
    assert "session-start: `vaultkeeper --vault" in log.read_text()
    hook = run_hook(START, [str(vault)], env)  # no vaultkeeper on PATH
    assert (hook.code, hook.stdout) == (0, "")
    assert "session-start: vaultkeeper not found" in log.read_text()
    hook = run_hook(START, [str(tmp_path / "gone")], env)  # no vault
    assert (hook.code, hook.stdout) == (0, "")
    assert "no such vault" in (home / ".local/state/vaultkeeper" / config.HOOK_LOG_FILE).read_text()


def test_the_helpers_run_on_vaultkeepers_own_python_not_the_first_on_path(
    tmp_path: Path, vault: Path, env: dict[str, str]
) -> None:
    """A version manager's shim first on PATH costs a quarter of a second a call (pyenv's
    is a bash script), and a host's PATH may hold no python3 at all: session-end.sh runs
    the scan's launcher on the interpreter vaultkeeper's console script names on its #!
    line, and session-start.sh runs no Python but vaultkeeper."""
    shims, ran = tmp_path / "shims", tmp_path / "shim-ran"
    for name in ("python3", "python"):
        executable(shims / name, f"#!/bin/sh\necho ran >>{ran}\nexit 1\n")
    env = {**env, "PATH": f"{shims}:{SYSTEM_PATH}"}
    calls = vault / "state" / "calls"
    fake = executable(
        tmp_path / "bin" / "vaultkeeper",
        f"#!{sys.executable}\nimport sys\nline = ' '.join(sys.argv[1:])\n"
        f"open({str(calls)!r}, 'a').write(line + '\\n')\nprint(line)\n",
    )
    hook = run_hook(START, [str(vault), str(fake)], env)  # no helper of its own now
    assert (hook.code, hook.stdout) == (0, f"--vault {vault} start-hook\n")
    hook = run_hook(END, [str(vault), str(fake)], env)
    assert hook.code == 0
    assert wait_for(lambda: f"--vault {vault} scan" in calls.read_text().splitlines())
    assert not ran.exists()


# -- the scripts themselves ------------------------------------------------------------


def test_scripts_ship_executable_and_posix() -> None:
    for script in (END, START):
        assert script.parent.name == "hooks" and os.access(script, os.X_OK)
        text = script.read_text()
        assert text.startswith("#!/bin/sh\n") and text.isascii()
        assert config.HOOK_MARKER in text
        subprocess.run(["sh", "-n", str(script)], check=True)
        if shutil.which("dash"):
            subprocess.run(["dash", "-n", str(script)], check=True)


def test_scripts_repeat_the_configured_names() -> None:
    """The scripts cannot import config.py; their copies of its names must agree."""
    for script in (END, START):
        text = script.read_text()
        assert f'"$vault/{config.STATE_DIR}/{config.HOOK_LOG_FILE}"' in text
        assert f"${{{config.ENV_VAULT}:-}}" in text
        assert f"{config.STATE_DIR}/{config.HOOK_LOG_FILE}" in text
        state_home = config.XDG_STATE_DEFAULT.replace("~", "$HOME")
        assert f"${{{config.ENV_XDG_STATE}:-{state_home}}}/vaultkeeper" in text
    start = START.read_text()
    assert f"max={config.BRIEF_MAX_CHARS}\n" in start


# -- the real thing: a 40,000-entry vault -------------------------------------------------

BIG = 40_000


@pytest.fixture(scope="module")
def big_vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """40,000 memory entries of ~200 bytes, plus the spec's three fixtures."""
    root = tmp_path_factory.mktemp("big") / "vault"
    init_vault(root)
    body = (
        "---\nname: {n}\ndescription: lesson {n}\ntype: memory\nstatus: active\n"
        "label: fact\n---\n\n# {n}\n\nSee [[_index]].\n"
    )
    for p in range(40):
        folder = root / "projects" / f"p{p:02d}" / "memory"
        folder.mkdir(parents=True)
        for i in range(BIG // 40 - (1 if p == 0 else 0)):
            name = f"e{p:02d}-{i:04d}"
            (folder / f"{name}.md").write_text(body.format(n=name))
    (root / "projects" / "p00" / "memory" / "held.md").write_text(
        "---\nname: held\ndescription: held\ntype: memory\nstatus: held_out\nlabel: inferred\n"
        'holdout_until: "2026-08-01"\nfalsification_condition: "never"\n---\n\nbody\n'
    )
    registry = root / config.REGISTRY_FILE
    registry.write_text(
        registry.read_text()
        + "\n### foo\n**success count:** 3\n**last used:** 2026-08-20\n"
        + "\n### bar\n**success count:** 0\n**last used:** 2020-01-01\n"
    )
    return root


def _completed(vault: Path) -> bool:
    try:
        state = json.loads((vault / "state" / config.STATE_FILE).read_text())
    except (OSError, ValueError):
        return False
    return state.get("state") == "idle" and (state.get("lastCompleted") or 0) > 0


def test_session_end_on_40k_entries_then_session_start(
    big_vault: Path, env: dict[str, str]
) -> None:
    program = find_program(os.environ)
    assert program is not None
    log = big_vault / "state" / config.HOOK_LOG_FILE
    full_env = {**env, "PATH": f"{Path(program).parent}:{SYSTEM_PATH}"}
    hook = run_hook(END, [str(big_vault), program], full_env)
    assert hook.code == 0 and hook.stdout == ""
    assert not _completed(big_vault)  # the scan was still running when the hook returned
    # how fast it returns is measured by bench/run.py (docs/benchmarks.md), not asserted
    # The run's end is the state file back at idle with lastCompleted set.
    assert wait_for(lambda: _completed(big_vault), 300), (
        log.read_text() if log.exists() else "no log"
    )
    shown = subprocess.run(
        [program, "--vault", str(big_vault), "report", "--json"],
        capture_output=True, text=True, env=full_env, check=True,
    )  # fmt: skip
    data = json.loads(shown.stdout)
    assert [c["name"] for c in data["promote"]] == ["foo"]
    assert [c["name"] for c in data["prune"]] == ["bar"]
    assert [c["path"] for c in data["held_out"]] == ["projects/p00/memory/held.md"]
    state_file = big_vault / "state" / config.STATE_FILE
    # the report lands just before the state file's completion: wait for that too
    assert wait_for(lambda: json.loads(state_file.read_text())["state"] == "idle", 60)
    state = json.loads(state_file.read_text())
    assert state["state"] == "idle" and state["lastCompleted"] > 0
    assert not log.exists()  # nothing went wrong

    brief = run_hook(START, [str(big_vault), program], full_env)
    assert brief.code == 0 and 0 < len(brief.stdout) <= config.BRIEF_MAX_CHARS
    summary = [x for x in brief.stdout.splitlines() if x.startswith(config.SUMMARY_PREFIX)]
    assert summary == [
        f"{config.SUMMARY_PREFIX} prune candidates 1 | promote eligible 1 | held-out due 1"
    ]

    again = run_hook(END, [str(big_vault), program], full_env)  # inside the cooldown
    assert again.code == 0
    assert wait_for(lambda: not any(alive_scans(big_vault)), 300)
    assert wait_for(lambda: not workers(big_vault), 300)  # its launcher and scan are done
    assert json.loads((big_vault / "state" / config.STATE_FILE).read_text()) == state
    assert not log.exists()  # a transcript never written is no failure, session after session


def alive_scans(vault: Path) -> list[int]:
    """pids of processes whose command line names this vault (the detached scans)."""
    return workers(vault, b"scan")


def test_a_state_symlink_out_of_the_vault_gets_no_hook_log(
    tmp_path: Path, vault: Path, home: Path, env: dict[str, str]
) -> None:
    # The scan refuses the symlinked state/; its failure is logged in
    # the user's state folder, never through the link.
    outside = tmp_path / "outside"
    outside.mkdir()
    (vault / "state").rmdir()
    (vault / "state").symlink_to(outside)
    program = find_program(os.environ)
    assert program is not None
    full_env = {**env, "PATH": f"{Path(program).parent}:{SYSTEM_PATH}"}
    hook = run_hook(END, [str(vault), program], full_env)
    assert hook.code == 0
    log = home / ".local" / "state" / "vaultkeeper" / config.HOOK_LOG_FILE
    refused = "scan exited 1: vaultkeeper: error: state/: a symlink to"
    assert wait_for(lambda: log.exists() and refused in log.read_text(), 300), (
        log.read_text() if log.exists() else "no log"
    )
    assert list(outside.iterdir()) == []
    start = run_hook(START, [str(vault), program], full_env)
    assert start.code == 0
    assert list(outside.iterdir()) == []


def test_a_hook_log_symlinked_out_of_the_vault_is_never_written_through(
    tmp_path: Path, vault: Path, home: Path, env: dict[str, str]
) -> None:
    # Issue 21 item 3: state/hook.log a symlink to a file elsewhere; both hooks log in
    # the user's state folder instead, and the file the link points to stays as it was.
    outside = tmp_path / "outside.txt"
    outside.write_text("not vaultkeeper's\n")
    (vault / "state" / config.HOOK_LOG_FILE).symlink_to(outside)
    fake = executable(
        tmp_path / "bin" / "vaultkeeper",
        "#!/bin/sh\necho 'vaultkeeper: error: disk full' >&2\nexit 1\n",
    )
    hook = run_hook(END, [str(vault), str(fake)], env)
    assert hook.code == 0
    log = home / ".local" / "state" / "vaultkeeper" / config.HOOK_LOG_FILE
    assert wait_for(lambda: log.exists() and "scan exited 1" in log.read_text(), 300)
    start = run_hook(START, [str(tmp_path / "no-such-vault"), str(fake)], env)
    assert start.code == 0
    assert outside.read_text() == "not vaultkeeper's\n"


RECALL = script_path(config.RECALL_HOOK_EVENTS[0])


def test_the_recall_hook_never_writes_through_a_symlinked_hook_log(
    tmp_path: Path, vault: Path, home: Path, env: dict[str, str]
) -> None:
    # session-start.sh and session-end.sh refuse a symlinked state/hooks.log; recall.sh
    # checked only state/ and appended through the link to a file outside the vault.
    outside = tmp_path / "outside.txt"
    outside.write_text("not vaultkeeper's\n")
    (vault / "state" / config.HOOK_LOG_FILE).symlink_to(outside)
    hook = run_hook(RECALL, [str(vault), "claude-code", str(tmp_path / "gone")], env, b"{}")
    assert hook.code == 0
    assert outside.read_text() == "not vaultkeeper's\n"
    log = home / ".local" / "state" / "vaultkeeper" / config.HOOK_LOG_FILE
    assert "recall: " in log.read_text()


@pytest.mark.parametrize("script", [START, END, RECALL], ids=["start", "end", "recall"])
def test_a_fifo_hook_log_never_holds_a_hook_back(
    tmp_path: Path, vault: Path, home: Path, env: dict[str, str], script: Path
) -> None:
    # `>>` on a FIFO nobody reads waits forever: the host's session (or its prompt) hung
    # on the hook. A hook log that is not a regular file is refused as a symlink is.
    os.mkfifo(vault / "state" / config.HOOK_LOG_FILE)
    fake = executable(
        tmp_path / "bin" / "vaultkeeper",
        "#!/bin/sh\necho 'vaultkeeper: error: disk full' >&2\nexit 1\n",
    )
    args = [str(vault), "claude-code", str(tmp_path / "gone")] if script == RECALL else []
    args = args or [str(vault), str(fake) if script == END else str(tmp_path / "gone")]
    hook = run_hook(script, args, env, b"{}")
    assert hook.code == 0
    assert hook.seconds < 10
    log = home / ".local" / "state" / "vaultkeeper" / config.HOOK_LOG_FILE
    assert wait_for(lambda: log.exists() and log.read_text().strip() != "", 30)


def test_hooks_status_reads_no_hook_log_through_a_link_or_from_a_fifo(
    tmp_path: Path, vault: Path, env: dict[str, str]
) -> None:
    # `hooks status` showed the last line of the file a symlinked state/hooks.log leads
    # to (anywhere on the machine), and waited for ever on a FIFO there.
    secret = tmp_path / "secret.txt"
    secret.write_text("not vaultkeeper's: a secret\n")
    log = vault / "state" / config.HOOK_LOG_FILE
    log.symlink_to(secret)
    assert where_installed({}, False, env, vault).hook_logs == ()
    log.unlink()
    os.mkfifo(log)
    done: list[object] = []
    import threading

    worker = threading.Thread(
        target=lambda: done.append(where_installed({}, False, env, vault)), daemon=True
    )
    worker.start()
    worker.join(10)
    assert done and done[0].hook_logs == ()  # type: ignore[attr-defined]
    log.unlink()
    log.write_text("2026-01-01T00:00:00Z cron: scanned\n")
    assert where_installed({}, False, env, vault).hook_logs == (
        (str(log), "2026-01-01T00:00:00Z cron: scanned"),
    )
