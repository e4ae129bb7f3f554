"""The session hooks fed the payloads the real hosts sent (tests/fixtures/hosts/).

claude-code-2.1.332/mcp-list/hooks/01-SessionEnd.json is what `claude mcp list` sent
to the SessionEnd hook: a session that never ran, whose `transcript_path` was never
written. That is no failure: it must not push a real failure out of `hooks status`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.test_hosts_hook_scripts import END, SYSTEM_PATH, run_hook, wait_for, workers
from vaultkeeper import config
from vaultkeeper.entries.create import init_vault
from vaultkeeper.hosts.hooks import find_program
from vaultkeeper.status.health import where_installed

MCP_LIST = Path(__file__).parent / "fixtures/hosts/claude-code-2.1.332/mcp-list/hooks"


def test_claude_mcp_list_s_session_end_leaves_no_failure_line(tmp_path: Path) -> None:
    home, vault = tmp_path / "home", tmp_path / "vault"
    home.mkdir()
    init_vault(vault)
    sent = json.loads((MCP_LIST / "01-SessionEnd.json").read_text())
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
    report = vault / config.STATE_DIR / config.LAST_REPORT_FILE
    assert wait_for(lambda: report.exists() and not workers(vault), 300)
    assert log.read_text() == real_failure + "\n"  # nothing added
    where = where_installed({}, False, env, vault)  # what `hooks status` shows last
    assert where.hook_logs == ((str(log), real_failure),)
