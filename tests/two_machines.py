"""Two machines, one vault: a bare origin and two clones, each with its own home.

vaultkeeper runs in this process (click's runner, the machine's HOME and the day in its
environment), which keeps a long simulation fast; git runs as the real program, and so
does the merge driver it calls (``hooks install git`` registers the console script).
Every sync is what a person does: commit what is there, ``git pull --no-rebase``,
push. ``sync`` fails the test when git stops on a conflict.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner, Result
from git_helper import git

from vaultkeeper import config
from vaultkeeper.cli import cli


@dataclass
class Machine:
    name: str
    vault: Path
    home: Path


class Pair:
    """``a`` and ``b``: clones of ``origin`` made after the seed was committed."""

    def __init__(
        self, root: Path, env: dict[str, str], seed: Callable[[Pair, Path], None], today: str
    ) -> None:
        self.root, self.env, self.today = root, env, today
        self.runner = CliRunner()
        first = root / "seed"
        self.seed_machine = Machine("seed", first, root / "home-seed")
        self.seed_machine.home.mkdir()
        self.vk(self.seed_machine, "init", str(first), vault=False)
        seed(self, first)
        git(first, "init", "-q")
        self.vk(self.seed_machine, "hooks", "install", "git")
        git(first, "add", "-A")
        git(first, "commit", "-qm", "seed")
        git(root, "clone", "-q", "--bare", "seed", "origin.git")
        self.a = self._clone("a")
        self.b = self._clone("b")

    def _clone(self, name: str) -> Machine:
        git(self.root, "clone", "-q", "origin.git", name)
        machine = Machine(name, self.root / name, self.root / f"home-{name}")
        machine.home.mkdir()
        out = self.vk(machine, "hooks", "install", "git").stdout
        assert "set merge.vaultkeeper.driver" in out, out
        return machine

    def vk(
        self,
        machine: Machine,
        *args: str,
        today: str | None = None,
        code: int | None = 0,
        vault: bool = True,
        answer: str | None = None,
    ) -> Result:
        """One vaultkeeper command on ``machine`` as on ``today`` (exit ``code`` asserted)."""
        env = {
            "HOME": str(machine.home),
            "VAULTKEEPER_TODAY": today or self.today,
            config.ENV_VAULT: str(machine.vault),
        }
        argv = [*(["--vault", str(machine.vault)] if vault else []), *args]
        result = self.runner.invoke(cli, argv, env=env, input=answer, catch_exceptions=False)
        if code is not None:
            assert result.exit_code == code, (machine.name, args, result.stdout, result.stderr)
        return result

    def commit(self, machine: Machine, message: str) -> None:
        git(machine.vault, "add", "-A")
        if git(machine.vault, "status", "--porcelain").stdout:
            git(machine.vault, "commit", "-qm", message)

    def pull(self, machine: Machine) -> subprocess.CompletedProcess[str]:
        """``git pull --no-rebase``; the test fails here when git stops on a conflict."""
        done = git(machine.vault, "pull", "--no-rebase", "--no-edit", check=False)
        said = done.stdout + done.stderr
        assert done.returncode == 0 and "CONFLICT" not in said, f"{machine.name}: {said}"
        return done

    def sync(self, first: Machine, second: Machine) -> str:
        """Both commit; ``first`` pushes, ``second`` pulls and pushes, ``first`` pulls.
        What git and the merge driver said on the merging pull is returned."""
        self.commit(first, f"{first.name}: work")
        self.commit(second, f"{second.name}: work")
        git(first.vault, "push", "-q")
        pulled = self.pull(second)
        git(second.vault, "push", "-q")
        self.pull(first)
        return pulled.stdout + pulled.stderr

    def read(self, machine: Machine, relative: str) -> str:
        return (machine.vault / relative).read_bytes().decode("utf-8")
