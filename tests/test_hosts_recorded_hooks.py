"""The session hooks fed the payloads the real hosts sent (tests/fixtures/hosts/).

claude-code-*/mcp-list/hooks/*-SessionEnd.json is what `claude mcp list` sent
to the SessionEnd hook: a session that never ran, whose `transcript_path` was never
written. That is no failure: it must not push a real failure out of `hooks status`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from host_fixtures import CLAUDE, claude_files, noted
from host_fixtures import hook as payload

from tests.test_hosts_hook_scripts import (
    END,
    SYSTEM_PATH,
    _completed,
    run_hook,
    wait_for,
    workers,
)
from vaultkeeper import config
from vaultkeeper.entries.init import init_vault
from vaultkeeper.hosts.hooks import find_program
from vaultkeeper.status.health import where_installed


def test_claude_mcp_list_s_session_end_leaves_no_failure_line(tmp_path: Path) -> None:
    home, vault = tmp_path / "home", tmp_path / "vault"
    home.mkdir()
    init_vault(vault)
    sent = json.loads(payload(CLAUDE / "mcp-list", "SessionEnd").read_text())
    assert sent["reason"] == "other" and sent["transcript_path"].startswith("/HOME/")
    sent["transcript_path"] = sent["transcript_path"].replace("/HOME", str(home), 1)
    sent["cwd"] = sent["cwd"].replace("/HOME", str(home), 1)
    assert not Path(sent["transcript_path"]).exists()  # as in the recording: never written
    log = vault / config.STATE_DIR / config.HOOK_LOG_FILE
    real_failure = "2026-12-01T20:00:00Z session-end: scan exited 1: vaultkeeper: error: disk full"
    log.write_text(real_failure + "\n")
    program = find_program(os.environ)
    assert program is not None
    env = {"PATH": f"{Path(program).parent}:{SYSTEM_PATH}", "HOME": str(home), "LC_ALL": "C"}

    hook = run_hook(END, [str(vault), program], env, json.dumps(sent).encode())
    assert (hook.code, hook.stdout, hook.stderr) == (0, "", "")
    assert wait_for(lambda: _completed(vault) and not workers(vault), 300)
    assert log.read_text() == real_failure + "\n"  # nothing added
    where = where_installed({}, False, env, vault)  # what `hooks status` shows last
    assert where.hook_logs == ((str(log), real_failure),)


# resume-fork: FIRST (given with --session-id) was ingested at its end; FORK's end hook
# never ran
FIRST = noted(CLAUDE / "resume-fork", "first session id (given with --session-id)")
(FORK,) = set(claude_files(CLAUDE / "resume-fork")) - {FIRST}


def _count(vault: Path, name: str) -> int:
    lines = (vault / "patterns/registry.md").read_text().split("\n")
    at = lines.index(f"### {name}")
    return int(next(x for x in lines[at:] if x.startswith("**success count:**")).split()[-1])


def test_session_start_ingests_a_session_whose_end_hook_never_ran(
    sample: Path, tmp_path: Path
) -> None:
    """The recorded resume-fork transcripts in one project folder: FIRST was ingested by
    its end hook; FORK's end hook was killed (its own turn links bisect-before-reading-
    diffs). The next session starts with the SessionStart payload Claude Code sent
    (claude-code-*/plain/hooks/*-SessionStart.json, paths moved here)."""
    import shutil

    from click.testing import CliRunner

    from vaultkeeper.cli import cli

    home = tmp_path / "home"
    folder = home / ".claude/projects/-HOME-proj"
    folder.mkdir(parents=True)
    for stem in (FIRST, FORK):
        shutil.copy(claude_files(CLAUDE / "resume-fork")[stem], folder)
    done = CliRunner().invoke(
        cli, ["--vault", str(sample), "ingest", str(folder / f"{FIRST}.jsonl")]
    )
    assert done.exit_code == 0, done.output
    later = (folder / f"{FORK}.jsonl").stat().st_mtime + 3600
    os.utime(folder / f"{FORK}.jsonl", (later, later))  # written after that ingest
    name = "bisect-before-reading-diffs"
    before = _count(sample, name)
    sent = json.loads(payload(CLAUDE / "plain", "SessionStart").read_text())
    assert sent["hook_event_name"] == "SessionStart"
    sent = {k: v.replace("/HOME", str(home)) if isinstance(v, str) else v for k, v in sent.items()}
    assert Path(sent["transcript_path"]).parent == folder
    program = find_program(os.environ)
    assert program is not None
    env = {"PATH": f"{Path(program).parent}:{SYSTEM_PATH}", "HOME": str(home), "LC_ALL": "C"}

    from tests.test_hosts_hook_scripts import START

    hook = run_hook(START, [str(sample), program], env, json.dumps(sent).encode())
    assert hook.code == 0
    assert wait_for(lambda: _count(sample, name) == before + 1, 300)
    assert wait_for(lambda: not workers(sample), 300)
    again = run_hook(START, [str(sample), program], env, json.dumps(sent).encode())
    assert again.code == 0 and wait_for(lambda: not workers(sample), 300)
    assert _count(sample, name) == before + 1  # read once: recorded as it is now
    assert _count(sample, "pin-test-clock") == 3  # FIRST's, counted once (sample had 2)
