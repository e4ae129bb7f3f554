"""Every ``vaultkeeper ... --help`` text, in one stream, to byte-compare two versions.

    python tools/help_texts.py [PROGRAM] > help.txt      # PROGRAM: the console script

Walks the click command tree for the names of every command and subcommand, then runs
``PROGRAM <names> --help`` for each in a fresh process (the console script, as a person
at a terminal runs it), with a fixed width, locale and home, so two runs of one
version give the same bytes. Diff the output of two versions: it must be empty when
only the code's layout changed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

import click

from vaultkeeper.cli import cli


def names(command: click.Command, path: list[str]) -> list[list[str]]:
    """``path`` and the path of every command under ``command``, in sorted order."""
    found = [path]
    if isinstance(command, click.Group):
        for name in sorted(command.commands):
            found += names(command.commands[name], [*path, name])
    return found


def main() -> None:
    program = sys.argv[1] if len(sys.argv) > 1 else shutil.which("vaultkeeper") or "vaultkeeper"
    with tempfile.TemporaryDirectory() as home:
        env = {"PATH": os.environ.get("PATH", ""), "HOME": home, "COLUMNS": "80"}
        env["LANG"] = "C.UTF-8"
        for path in names(cli, []):
            done = subprocess.run([program, *path, "--help"], capture_output=True, env=env)
            head = f"=== vaultkeeper {' '.join(path)} --help (exit {done.returncode})\n"
            sys.stdout.buffer.write(head.encode() + done.stdout + b"--- stderr\n" + done.stderr)


if __name__ == "__main__":
    main()
