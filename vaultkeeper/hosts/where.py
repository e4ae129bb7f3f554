"""``hooks status``: what runs the scan where, and when each vault last completed one.

The hosts' hook files, the crontab and the hook logs are about what runs vaultkeeper, not
about a vault's health; ``status`` borrows ``last_completed`` for its scan-age signal
(vaultkeeper.status.health re-exports these names).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from vaultkeeper import config
from vaultkeeper.errors import VaultkeeperError

if TYPE_CHECKING:  # the crontab and the hosts' files: read by `hooks status`, not `status`
    from vaultkeeper.hosts.cron import CronEntry
    from vaultkeeper.hosts.hooks import Installed


@dataclass(frozen=True)
class Where:
    """``hooks status``: what is installed where, and each vault's last completed scan."""

    hosts: tuple[Installed, ...]
    cron: tuple[CronEntry, ...]
    cron_note: str | None  # why the crontab could not be read (or None)
    last_scans: tuple[tuple[str, dt.datetime | None], ...]  # (vault, lastCompleted)
    hook_logs: tuple[tuple[str, str], ...]  # (log file, its last line): what went wrong


def where_installed(
    hosts: Mapping[str, Path],
    cron: bool,
    env: Mapping[str, str],
    vault: Path | None,
    also: Sequence[tuple[str, Path]] = (),
) -> Where:
    """Our handlers in each host's file (``also``: more files of a host, a project's own
    settings), our crontab lines, and when each vault last scanned."""
    from vaultkeeper.hosts.cron import entries
    from vaultkeeper.hosts.hooks import installed

    found = tuple(installed(target, path) for target, path in (*hosts.items(), *also))
    lines: tuple[CronEntry, ...] = ()
    note: str | None = None
    if cron:
        try:
            lines = tuple(entries(env))
        except VaultkeeperError as exc:
            note = str(exc)
    vaults = [h.vault for i in found for h in i.handlers if h.vault] + [e.vault for e in lines]
    unique = list(dict.fromkeys(([] if vault is None else [str(vault)]) + vaults))
    logs = [Path(v) / config.STATE_DIR / config.HOOK_LOG_FILE for v in unique]
    logs.append(fallback_log(env))
    return Where(
        found,
        lines,
        note,
        tuple((v, last_completed(Path(v))) for v in unique),
        tuple((str(p), last) for p in logs if (last := _last_line(p))),
    )


def fallback_log(env: Mapping[str, str]) -> Path:
    """Where the hook scripts log when the vault itself is missing (see hooks/*.sh)."""
    home = env.get(config.ENV_XDG_STATE) or config.XDG_STATE_DEFAULT.replace(
        "~", env.get("HOME") or str(Path.home()), 1
    )
    return Path(home) / "vaultkeeper" / config.HOOK_LOG_FILE


def _last_line(path: Path) -> str | None:
    """The log's last line; None when there is none, or the log is not a regular file (a
    symlink could show a line of any file on the machine; a FIFO would wait for ever)."""
    import os
    import stat

    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return None
            fh.seek(max(0, fh.seek(0, 2) - 4096))
            tail = fh.read().decode("utf-8", "replace").strip().splitlines()
    except OSError:
        return None
    return tail[-1] if tail else None


def last_completed(vault: Path) -> dt.datetime | None:
    """``lastCompleted`` of the vault's state file, in UTC; None when never or unreadable."""
    from vaultkeeper.scan.statefile import read_state

    millis = read_state(vault).data["lastCompleted"]
    if not millis or millis <= 0:
        return None
    return dt.datetime.fromtimestamp(millis / 1000, tz=dt.timezone.utc)
