"""Under load too, no test sees the real home (conftest sets HOME and XDG_*)."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
from pathlib import Path

from tests.conftest import HOME_VARS, session_home
from vaultkeeper.status.health import fallback_log


def test_home_and_xdg_folders_are_the_sessions_temporary_ones() -> None:
    real = Path(pwd.getpwuid(os.getuid()).pw_dir).resolve()
    home = session_home()
    assert home != real and real not in home.parents
    for name in HOME_VARS:
        assert Path(os.environ[name]).is_relative_to(home), name
    # the hook log `hooks status` reads when no vault is known
    assert fallback_log(os.environ).is_relative_to(home)


def test_a_child_process_sees_the_temporary_home_too() -> None:
    code = "import os, sys; print(os.path.expanduser('~')); print(os.environ['XDG_STATE_HOME'])"
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    expanded, state = run.stdout.splitlines()
    assert Path(expanded).resolve() == session_home()
    assert Path(state).is_relative_to(session_home())
