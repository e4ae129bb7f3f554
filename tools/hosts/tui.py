"""A host's interactive terminal UI driven under tmux, for record.py.

One private tmux server (its own socket, no config file) holding one session that runs
the host with the scenario's environment. The recorder types into it, waits for what it
expects (text on the screen, a file appearing) and keeps a copy of each screen it looked
at, so the fixture shows what the person would have seen.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path


class Tui:
    """``with Tui(argv, env, cwd) as t: t.type_line("..."); t.wait_screen("done")``."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path, name: str = "host"):
        self.tm = ["tmux", "-L", f"vkhosts-{name}-{os.getpid()}"]
        self.sess = name
        self.argv = argv
        self.env = env
        self.cwd = cwd
        self.shots: list[str] = []

    def __enter__(self) -> Tui:
        envargs: list[str] = []
        for k, v in self.env.items():
            envargs += ["-e", f"{k}={v}"]
        self._tmux(
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            self.sess,
            "-x",
            "160",
            "-y",
            "50",
            "-c",
            str(self.cwd),
            *envargs,
            *self.argv,
        )
        return self

    def __exit__(self, *exc: object) -> None:
        self._tmux("kill-server")

    def _tmux(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*self.tm, *args], text=True, capture_output=True)

    def screen(self) -> str:
        """The visible pane ('' once the host has exited and the session is gone)."""
        return self._tmux("capture-pane", "-p", "-t", self.sess).stdout

    def alive(self) -> bool:
        return self._tmux("has-session", "-t", self.sess).returncode == 0

    def shot(self, tag: str) -> str:
        s = self.screen()
        lines = [line.rstrip() for line in s.splitlines()]
        while lines and not lines[-1]:
            lines.pop()
        self.shots.append(f"===== {tag} =====\n" + "\n".join(lines) + "\n")
        return s

    def keys(self, *k: str) -> None:
        self._tmux("send-keys", "-t", self.sess, *k)

    def type_line(self, text: str) -> None:
        """Type ``text`` literally, then Enter once the screen shows it (a key sent while
        the input box is still taking the paste would land in the middle of it)."""
        self._tmux("send-keys", "-t", self.sess, "-l", text)
        self.wait_screen(text[-30:])
        self.keys("Enter")

    def wait(self, ready: Callable[[], bool], what: str, timeout: float = 90) -> None:
        """Poll until ``ready()``; a timeout is an error naming ``what``, with the screen."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if ready():
                return
            time.sleep(0.25)
        self.shot(f"timed out waiting for {what}")
        raise TimeoutError(f"{what} (after {timeout} s)\n{self.shots[-1]}")

    def wait_screen(self, *needles: str, timeout: float = 90) -> str:
        """The screen once any of ``needles`` is on it."""
        seen = [""]

        def ready() -> bool:
            seen[0] = self.screen()
            return any(n in seen[0] for n in needles)

        self.wait(ready, f"the screen to show one of {needles!r}", timeout)
        return seen[0]
