"""The gates' checks: evidence receipts, stale hashes, allowed lifecycle moves, targets.

Each check raises GateRefused (or another VaultkeeperError) with one line saying why;
the caller turns that into a ``defer`` outcome, journals it, and writes nothing.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from vaultkeeper import config
from vaultkeeper.errors import GateRefused, NotFoundError, UsageError
from vaultkeeper.store.model import date_text, parse_date
from vaultkeeper.store.vault import rel, resolve_inside

_URL = re.compile(r"^https?://[^\s/?#]+[^\s]*$", re.I)
_PATH_LINE = re.compile(r"^(?P<path>.+):(?P<line>\d+)$")
_HEX = re.compile(r"^[0-9a-f]{8,64}$")
MIN_HASH_PREFIX = 8  # a report may shorten a sha256; 8 hex digits still catch any edit

# (action, current status) -> new status; every other pair is refused.
MOVES: dict[tuple[str, str | None], str | None] = {
    ("revalidate", "held_out"): None,  # -> active on pass, archived on fail
    ("reactivate", "archived"): "active",
    ("reopen", "active"): "held_out",  # revalidate --reopen: a stale lesson is re-tested
}
_WHY_NOT = {
    "revalidate": "only a held_out entry is re-validated (held_out -> active | archived)",
    "reactivate": "only an archived entry is reactivated on new evidence (archived -> active)",
    "reopen": "only an active entry is re-opened for a new hold-out (active -> held_out)",
}


def check_receipt(vault: Path, evidence: str | None, target: str | None = None) -> str:
    """A URL, ``path:line`` naming an existing file (vault-relative or absolute) and line,
    or a receipt the usage log recorded (for ``target``, when given): a transcript may be
    gone since, and an MCP receipt names no file."""
    receipt = (evidence or "").strip()
    if not receipt:
        raise GateRefused("no evidence: give --evidence RECEIPT (a URL or path:line)")
    if _URL.match(receipt):
        return receipt
    from vaultkeeper.store.uses import is_recorded  # only on this path

    if is_recorded(vault, receipt, target):
        return receipt
    m = _PATH_LINE.match(receipt)
    if not m:
        raise GateRefused(
            f"evidence {receipt!r} is not a receipt: give a URL (https://...), path:line, "
            "or a receipt recorded by ingest (see report --brief)"
        )
    raw_path, digits = m.group("path"), m.group("line")
    line = int(digits) if len(digits) <= 18 else 0  # int() refuses 4300+ digits
    given = Path(raw_path).expanduser()
    if given.is_absolute() and not _names_the_vault(vault, given):
        # An absolute receipt outside the vault (a repository's file) is taken as
        # written, like a URL: its file is never opened, so the answer is the same
        # whatever is there, or is not (an agent asking through MCP, or a dry run,
        # would otherwise learn whether any file exists and how long it is).
        if line < 1:
            raise GateRefused(f"evidence {receipt!r}: no line {digits} (lines start at 1)")
        return receipt
    # A relative receipt (or an absolute one naming the vault) names a vault file.
    path = resolve_inside(vault, given if given.is_absolute() else raw_path)
    # no line 0: count them all (bounded), to say how many there are
    lines, whole = _count_lines(path, line if line >= 1 else config.EVIDENCE_MAX_BYTES)
    refused = None
    if lines is None:
        refused = f"{raw_path} is not an existing file"
    elif not whole and lines < line:
        refused = f"no line {digits} in the first {config.EVIDENCE_MAX_BYTES} bytes of {raw_path}"
    elif not 1 <= line <= lines:
        refused = f"{raw_path} has {lines} lines, no line {digits}"
    if refused is not None:
        raise GateRefused(f"evidence {receipt!r}: {refused}")
    return receipt


def _names_the_vault(vault: Path, given: Path) -> bool:
    """Whether absolute ``given`` sits in the vault as written (``..`` folded, no
    symlink followed): the vault's own path or its real one. Nothing outside is
    looked at to decide it."""
    at = os.path.normpath(given)
    for root in {os.path.abspath(vault), os.path.realpath(vault)}:
        if at == root or at.startswith(root.rstrip(os.sep) + os.sep):
            return True
    return False


@dataclass(frozen=True)
class Receipt:
    """check_receipt's verdict, reached before the writer lock and given at its turn."""

    value: str
    refused: GateRefused | None

    def get(self) -> str:
        if self.refused is not None:
            raise self.refused
        return self.value


def receipt_first(vault: Path, evidence: str | None, target: str | None = None) -> Receipt:
    """check_receipt now, so the evidence file is read before the writer lock is taken:
    a slow file must never hold up every writer. Its refusal is raised by ``get()``,
    where the gate checks the receipt, so the other gates keep their order."""
    try:
        return Receipt(check_receipt(vault, evidence, target), None)
    except GateRefused as exc:
        return Receipt("", exc)


_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def _count_lines(path: Path, want: int) -> tuple[int | None, bool]:
    """(lines counted, whether the whole file was read); (None, False) for no regular file.

    Stops at line ``want`` or after EVIDENCE_MAX_BYTES; opened non-blocking and checked
    to be a regular file, so a FIFO, a device or a file that never ends can't hang.
    """
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK)
    except OSError:
        return None, False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None, False
        count, last, read = 0, b"\n", 0
        while count < want and read < config.EVIDENCE_MAX_BYTES:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return count + (0 if last == b"\n" else 1), True
            count += chunk.count(b"\n")
            last, read = chunk[-1:], read + len(chunk)
        return count, False
    except OSError:
        return None, False
    finally:
        os.close(fd)


def check_hash(expected: str | None, actual: str, what: str) -> None:
    """With ``--expect-hash``, refuse a target whose text changed since the report."""
    if expected is None:
        return
    want = expected.strip().lower()
    if not _HEX.match(want):
        raise UsageError(
            f"--expect-hash {expected!r}: not a sha256 hex digest "
            f"(at least {MIN_HASH_PREFIX} hex digits)"
        )
    if not actual.startswith(want):
        raise GateRefused(
            f"{what} changed since the report (hash now {actual[:12]}, the report had "
            f"{want[:12]}); re-run `vaultkeeper scan` and decide again"
        )


def check_move(action: str, status: str | None) -> str | None:
    """The new status for ``action`` from ``status`` (None: decided by the result)."""
    if (action, status) not in MOVES:
        shown = "missing" if status is None else status
        raise GateRefused(f"status is {shown}: {_WHY_NOT[action]}")
    return MOVES[(action, status)]


def check_holdout_passed(value: object, today: dt.date) -> dt.date:
    """The hold-out must have run its course (due on the day itself, UTC)."""
    until = parse_date(value)
    if until is None:
        raise GateRefused(
            f"holdout_until {date_text(value)} is not a quoted ISO date (YYYY-MM-DD); "
            "cannot tell the hold-out has passed"
        )
    if today < until:
        raise GateRefused(
            f"hold-out runs until {until.isoformat()} (today is {today.isoformat()}): "
            "let time test the lesson, re-check then"
        )
    return until


def looks_like_path(target: str) -> bool:
    """A prune target naming a file rather than a ``### name`` registry block."""
    return (
        any(s in target for s in ("/", "\\", ".."))
        or target.endswith(".md")
        or (target.startswith(("~", ".")))
    )


def entry_path(vault: Path, target: str) -> Path:
    """Resolve an entry file inside the vault (``.md`` may be left off); refuse escapes."""
    if not target.strip():
        raise UsageError("no target given")
    path = resolve_inside(vault, target)
    if not path.exists() and path.suffix != ".md":
        path = resolve_inside(vault, target + ".md")
    if not path.is_file():
        raise NotFoundError(f"{target}: no such file in the vault")
    relative = rel(vault.resolve(), path)
    top = relative.split("/", 1)[0]
    if top in config.EXCLUDED_DIRS or top.startswith(".") or relative == config.INDEX_FILE:
        raise GateRefused(f"{relative}: not an entry (vaultkeeper's own file or folder)")
    if path.suffix != ".md":
        raise GateRefused(f"{relative}: not a markdown entry")
    return path


def find_entry(vault: Path, target: str) -> Path:
    """An entry file by its path, or by the name the scan lists it under.

    A name is the entry's frontmatter ``name``, or its file name when it has none. Two
    entries with one name are refused, naming both paths, so a path must choose.
    """
    if looks_like_path(target) or not target.strip():
        return entry_path(vault, target)
    matches = entries_named(vault, target)
    if len(matches) > 1:
        where = ", ".join(rel(vault, p) for p in matches)
        raise GateRefused(f"{target}: {len(matches)} entries have this name ({where}); give a path")
    if matches:
        return matches[0]
    try:
        return entry_path(vault, target)  # a file of that name at the vault's top
    except NotFoundError:
        raise NotFoundError(f"{target}: no entry has this name, and no such file") from None


def entries_named(vault: Path, name: str) -> list[Path]:
    """Entry files (not the registry, the index, or our own folders) called ``name``."""
    from vaultkeeper.store.model import ParseError, decode, parse_note, read_regular
    from vaultkeeper.store.vault import iter_markdown

    found: list[Path] = []
    for path in iter_markdown(vault):
        relative = rel(vault, path)
        top = relative.split("/", 1)[0]
        if top in (config.PATTERNS_DIR, *config.EXCLUDED_DIRS) or relative == config.INDEX_FILE:
            continue
        try:
            text = decode(read_regular(path))
            if name not in text and path.stem != name:
                continue  # cheap: most files cannot be it
            note = parse_note(path, relative, text)
        except ParseError:
            continue  # unreadable: not an entry anyone can change
        if note.frontmatter is None:
            continue  # no frontmatter: a plain note, not an entry
        own = note.meta.get("name")
        if (str(own) if own not in (None, "") else path.stem) == name:
            found.append(path)
    return found


def slug(name: str, default: str | None = None) -> str:
    """``Pin Test Clock`` -> ``pin-test-clock``: a folder name Claude Code accepts as a skill;
    a name with no ASCII letter or digit gives ``default``, or is refused without one."""
    text = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:64].strip("-")
    if not text and default is None:
        raise GateRefused(f"{name!r}: no letters or digits to name a skill folder after")
    return text or str(default)
