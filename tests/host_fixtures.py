"""The real hosts' recordings (tests/fixtures/hosts/, tools/hosts/record.py), as tests read them.

A recording's folder carries the host's version, its files the session ids the host made
up and the date they ran on. None of that is typed into a test: the newest recording of
each host is the one read, and ids, date folders and "now" are taken from its files. So
re-recording (`python tools/hosts/record.py`) with a newer host, or the same one again,
needs no change to a test as long as the shape of what the host writes did not change.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from typing import Any

HOSTS = Path(__file__).parent / "fixtures" / "hosts"


def _version(folder: Path) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", folder.name.rsplit("-", 1)[-1]))


def newest(host: str) -> Path:
    """The folder of the newest recorded version of ``host`` (claude-code, codex)."""
    found = [p for p in HOSTS.glob(f"{host}-*") if re.fullmatch(rf"{host}-[\d.]+", p.name)]
    assert found, f"no recording of {host} under {HOSTS}"
    return max(found, key=_version)


CLAUDE = newest("claude-code")
CODEX = newest("codex")


def rollouts(scenario: Path) -> list[Path]:
    """A Codex scenario's rollouts, whatever date folder they were written in."""
    return sorted((scenario / "codex-sessions").rglob("rollout-*.jsonl"))


def meta(rollout: Path) -> dict[str, Any]:
    """A rollout's session_meta payload (its first line)."""
    with rollout.open(encoding="utf-8") as fh:
        first = json.loads(fh.readline())
    assert first["type"] == "session_meta", rollout
    return dict(first["payload"])


def day(rollout: Path) -> Path:
    """The date folder of a rollout, relative to its sessions folder (YYYY/MM/DD)."""
    parts = rollout.parent.parts
    return Path(*parts[-3:])


def claude_files(scenario: Path) -> dict[str, Path]:
    """A Claude Code scenario's main transcripts, by session id (the file's stem)."""
    return {p.stem: p for p in sorted((scenario / "claude-projects").glob("*/*.jsonl"))}


def noted(scenario: Path, label: str) -> str:
    """A value the recorder noted in the scenario's commands.txt (``LABEL: VALUE``)."""
    text = (scenario / "commands.txt").read_text(encoding="utf-8")
    found = re.search(rf"^{re.escape(label)}: (\S+)$", text, re.M)
    assert found, f"{scenario}/commands.txt notes no {label!r}"
    return found.group(1)


def hook(scenario: Path, event: str, nth: int = 1) -> Path:
    """The ``nth`` payload the host sent to ``event``'s hook in the scenario."""
    found = sorted((scenario / "hooks").glob(f"*-{event}.json"))
    assert len(found) >= nth, f"{scenario}: {len(found)} {event} payloads"
    return found[nth - 1]


_STAMP = re.compile(r'"timestamp"\s*:\s*"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)')


def after(*files: Path) -> dt.datetime:
    """An hour after the last timestamp in ``files``: "now" for reading a recording."""
    stamps = [m.group(1) for f in files for m in _STAMP.finditer(f.read_text(encoding="utf-8"))]
    assert stamps, files
    last = dt.datetime.fromisoformat(max(stamps)).replace(tzinfo=dt.timezone.utc)
    return last + dt.timedelta(hours=1)
