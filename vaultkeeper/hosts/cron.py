"""The pseudo-cron path: one marked crontab line per vault, through ``crontab -l`` / ``-``.

The line names the program and the vault by absolute path (cron's PATH and working
directory are not the user's) and sends all output, each line stamped ``STAMP cron: ``,
to ``state/hooks.log`` (cron would otherwise mail it). It ends with ``# vaultkeeper-scan
VAULT``, which is how we find it again; every other line of the crontab is written back
byte for byte.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.errors import UsageError, VaultkeeperError
from vaultkeeper.hosts.hooks import Change

_FIELD = re.compile(r"^[0-9A-Za-z*,/-]+$")
_STAMP = "%Y-%m-%dT%H:%M:%SZ"
_NICKNAMES = {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}


@dataclass(frozen=True)
class CronEntry:
    line: str
    vault: str
    outdated: bool = False  # an older version's line: its output goes to state/cron.log


def cron_line(vault: Path, program: str | None, schedule: str) -> str:
    """The crontab line for ``vault``: schedule, scan, log, marker."""
    fields = schedule.split()
    if not (
        (len(fields) == 1 and fields[0] in _NICKNAMES)
        or (len(fields) == 5 and all(_FIELD.match(f) for f in fields))
    ):
        raise UsageError(
            f"{schedule!r}: not a cron schedule; give five fields like "
            f'"{config.CRON_SCHEDULE}" or one of {", ".join(sorted(_NICKNAMES))}'
        )
    if "\n" in str(vault) or "\r" in str(vault):
        raise UsageError(f"{vault!r}: a vault path with a line break cannot go in a crontab")
    argv = [program] if program else [sys.executable, "-m", "vaultkeeper"]
    log = vault / config.STATE_DIR / config.HOOK_LOG_FILE
    # one stamp per run, the hook scripts' format; a line of an older version (output to
    # state/cron.log) keeps working as it was until `hooks install cron` rewrites it
    stamp = f'sed "s/^/$(date -u +{_STAMP}) cron: /"'
    scan = shlex.join([*argv, "--vault", str(vault), "scan"])
    # as the hook scripts do: never through a symlinked state/ or hooks.log (it may lead
    # out of the vault), never into one that is not a regular file (`>>` on a FIFO waits
    # for ever): the user's state folder then
    state, quoted = shlex.quote(str(log.parent)), shlex.quote(str(log))
    odd = f'[ -L {state} ] || [ -L "$L" ] || {{ [ -e "$L" ] && [ ! -f "$L" ]; }}'
    user = "${XDG_STATE_HOME:-$HOME/.local/state}/vaultkeeper"
    pick = f'L={quoted}; if {odd}; then L={user}/{config.HOOK_LOG_FILE}; mkdir -p "${{L%/*}}"; fi'
    command = f'{scan} 2>&1 | {stamp} | {{ {pick}; cat >>"$L"; }}'
    # cron turns an unescaped % into a newline, anywhere after the schedule
    rest = f"{command} {_marker(vault)}".replace("%", "\\%")
    return f"{' '.join(fields)} {rest}"


def _marker(vault: Path | str) -> str:
    return f"{config.CRON_MARKER} {vault}"


def _is_ours(line: str, vault: Path | None = None) -> bool:
    body = line.rstrip()
    if vault is None:
        return f" {config.CRON_MARKER} " in body and not body.lstrip().startswith("#")
    return body.endswith(" " + _marker(vault).replace("%", "\\%"))


def read_crontab(env: Mapping[str, str]) -> list[str]:
    """The user's crontab as lines (with their endings); none yet is an empty list."""
    proc = _run(["-l"], env, None)
    if proc.returncode != 0:
        if "no crontab" in proc.stderr.lower():
            return []
        raise VaultkeeperError(f"crontab -l failed: {_first_line(proc.stderr)}")
    return proc.stdout.splitlines(keepends=True)


def _write_crontab(lines: list[str], env: Mapping[str, str]) -> None:
    text = "".join(lines)
    if text and not text.endswith("\n"):
        text += "\n"  # cron ignores a last line without its newline
    proc = _run(["-"], env, text)
    if proc.returncode != 0:
        raise VaultkeeperError(f"crontab - refused the new table: {_first_line(proc.stderr)}")


def installed_schedule(lines: list[str], vault: Path) -> str | None:
    """The schedule of this vault's line in ``lines``, if it has one."""
    for line in lines:
        if _is_ours(line, vault):
            fields = line.split()
            return fields[0] if fields[0].startswith("@") else " ".join(fields[:5])
    return None


def schedule_for(vault: Path, schedule: str | None, env: Mapping[str, str]) -> str:
    """``--schedule``, else the installed line's, else the default (for ``--print``: a
    crontab that cannot be read is the default, as the line is for adding by hand)."""
    if schedule is not None:
        return schedule
    try:
        return installed_schedule(read_crontab(env), vault) or config.CRON_SCHEDULE
    except VaultkeeperError:
        return config.CRON_SCHEDULE


def install(
    vault: Path, program: str | None, schedule: str | None, env: Mapping[str, str]
) -> Change:
    """Add (or bring up to date) this vault's line; a second install changes nothing.
    ``schedule`` None keeps the installed line's (a custom one survives a re-install)."""
    if schedule is not None:
        cron_line(vault, program, schedule)  # a bad --schedule is refused before any read
    lines = read_crontab(env)
    kept = schedule or installed_schedule(lines, vault) or config.CRON_SCHEDULE
    line = cron_line(vault, program, kept)
    spots = [i for i, old in enumerate(lines) if _is_ours(old, vault)]
    if len(spots) == 1 and lines[spots[0]].rstrip("\r\n") == line:
        return Change("cron", "crontab", False, None, (f"kept    {line} (already installed)",))
    if spots:
        new = [old for i, old in enumerate(lines) if i not in spots[1:]]
        new[spots[0]] = line + "\n"
        action = f"updated {line}"
    else:
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
        new = [*lines, line + "\n"]
        action = f"added   {line}"
    (vault / config.STATE_DIR).mkdir(parents=True, exist_ok=True)  # the log's folder
    _write_crontab(new, env)
    return Change("cron", "crontab", True, None, (action,))


def uninstall(vault: Path, env: Mapping[str, str]) -> Change:
    """Remove this vault's line and nothing else."""
    lines = read_crontab(env)
    mine = [old for old in lines if _is_ours(old, vault)]
    if not mine:
        return Change("cron", "crontab", False, None, (f"absent  no line for {vault}",))
    _write_crontab([old for old in lines if not _is_ours(old, vault)], env)
    return Change("cron", "crontab", True, None, tuple(f"removed {m.rstrip()}" for m in mine))


def entries(env: Mapping[str, str]) -> list[CronEntry]:
    """Every vaultkeeper line in the crontab, whichever vault it serves."""
    out: list[CronEntry] = []
    for line in read_crontab(env):
        if _is_ours(line):
            body = line.rstrip()
            vault = body.split(f" {config.CRON_MARKER} ", 1)[1].replace("\\%", "%")
            older = f"/{config.STATE_DIR}/cron.log" in body  # `hooks install cron` rewrites it
            out.append(CronEntry(body, vault, older))
    return out


def _run(
    args: list[str], env: Mapping[str, str], stdin: str | None
) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("crontab", path=env.get("PATH"))
    if exe is None:  # a setup that cannot work here: exit 2, as the README reserves it
        raise UsageError(
            "crontab: not found on PATH; print the line with `hooks install cron --print` "
            "and add it to your scheduler by hand"
        )
    # bytes, not text mode: other lines come back byte for byte (not UTF-8, CRLF) and
    # a byte that is not UTF-8 is no traceback
    data = None if stdin is None else stdin.encode("utf-8", "surrogateescape")
    try:
        proc = subprocess.run(
            [exe, *args], input=data, capture_output=True, env=dict(env), timeout=30
        )
    except subprocess.TimeoutExpired:
        raise VaultkeeperError(f"{exe} {' '.join(args)}: no answer after 30 s") from None
    return subprocess.CompletedProcess(
        proc.args,
        proc.returncode,
        proc.stdout.decode("utf-8", "surrogateescape"),
        proc.stderr.decode("utf-8", "replace"),
    )


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else "no message"
