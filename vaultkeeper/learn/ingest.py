"""``ingest TRANSCRIPT...``: map what agents did in their sessions onto the vault.

transcripts.py yields signals (links in the agent's text, skills called, files read);
here they become use events: a link to a registry block (``[[patterns/registry#NAME]]``,
heading matched as Obsidian matches it) is a ``cite`` of that pattern; a link to any
other note a ``cite`` of its path; a ``Skill`` call, or a read of a ``SKILL.md``, of a
skill a pattern was promoted into (its ``**promoted:**`` line) a ``skill`` use of that
pattern -- a read counts only at the very path that line names, followed through
links; a read of a file inside the vault a ``read``; a call of the vault's MCP
``cite`` tool a ``cite`` whose server-side count learn.record finds (a ``CiteCall``),
so the session is not counted twice; so is a shell's ``vaultkeeper use NAME``, whose
``cli`` line in the log stands for it. learn.record then logs and counts them. A
Claude Code transcript brings its sub-agents' transcripts along
(``<session>/subagents/agent-*.jsonl`` beside ``<session>.jsonl``).

Sessions whose end hook never ran (a host cancels or kills SessionEnd hooks; an interactive
Codex defers it) are caught up: every ingest remembers in ``state/machine.json`` (key
``ingested``) each file it read and its modification time, and the session-start hook runs
``ingest --missed-beside TRANSCRIPT`` (detached, bounded), which also reads the same
project's transcripts (Claude Code: the transcript's folder; Codex: rollouts of the same
cwd in its date folder and the day before) newer than the first ingest and not yet
recorded at their current size and time (``missed``, ``remember``).

What ingest learns of code: a session runs in a folder (Claude Code's ``cwd``, Codex's
``session_meta.cwd``) whose git top level is the session's repository; a project folder
named as that repository (or as the folder: repo.project_named) is tied to it, when it is
tied to no other (repo.tie ``if_free``: never the vault's own repository). A session that
wrote a lesson (``vaultkeeper new memory|decision``, MCP ``new_lesson``/``new_decision``)
gets the files it edited and read, inside that repository, as suggested anchors of the
lesson (anchors/vault.py keeps them; the report lists them): never a path outside the
repository, a symlink leading out of it, a file of the vault, a path under ``.git``. Git is
run only through anchors/repo.py's read-only calls (``Touched``, ``suggest``).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import hashlib
import os
import re
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vaultkeeper import config
from vaultkeeper.config import CLI_SOURCE
from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.learn.count import CiteCall, RecordResult, record
from vaultkeeper.learn.transcripts import ROLLOUT_GLOB, Reader, Signal, children, detect, meta
from vaultkeeper.native.counts import ensure_blocks
from vaultkeeper.native.files import NativeLookup
from vaultkeeper.registry.blocks import load_registry
from vaultkeeper.store import machine
from vaultkeeper.store.fsio import writer_lock
from vaultkeeper.store.uses import UseEvent, bounded
from vaultkeeper.store.vault import iter_markdown, rel

if TYPE_CHECKING:  # the anchors only for a session with a cwd
    from vaultkeeper.anchors.format import Suggestion

# -- What ingest matches a transcript's signals against: the vault's registry blocks (by
# link target), promoted skills, and notes.

# Obsidian writes these characters of a heading as blanks in a link to it.
_HEADING_NOISE = re.compile(r"[#^|:\[\]\\%]")
# The skill a **promoted:** line points at: [[skills/NAME/SKILL]] or `/abs/NAME/SKILL.md`.
_PROMOTED_TO = re.compile(r"(?:\[\[|`)([^\]`|#]*?)/SKILL(?:\.md)?(?:[|#][^\]]*)?(?:\]\]|`)", re.I)


def heading_key(text: str) -> str:
    """How a ``#heading`` part of a link is compared with headings: case and runs of
    blanks do not matter, and link-unsafe characters count as blanks."""
    return " ".join(_HEADING_NOISE.sub(" ", text).split()).casefold()


def _folded(text: str) -> str:
    return " ".join(text.split()).casefold()


class VaultView:
    """What a signal is matched against: registry blocks, promoted skills, notes."""

    def __init__(self, vault: Path) -> None:
        self.root = vault.resolve()
        self.native = NativeLookup(vault)  # adopted Claude Code auto-memory folders
        self.blocks: dict[str, dict[str, str]] = {}  # registry file (no .md) -> key -> name
        self.skills: dict[str, str] = {}  # skill folder name -> pattern
        self.skill_files: dict[Path, str] = {}  # the real SKILL.md a line names -> pattern
        # (vault-relative path read, pattern whose promoted skill it is) of a path read,
        # bounded: a long session reads many files, and the same ones again and again
        self.file = functools.lru_cache(maxsize=config.INGEST_PATH_CACHE)(self._file)
        # a link's heading as written (blanks folded, case aside) -> name, then its
        # heading_key -> name, or "" when two names share it (`a:b`, `a b`): neither
        self.exact: dict[str, dict[str, str]] = {}
        heads, _ = load_registry(vault)
        for head in heads:
            file_key = head.rel[: -len(".md")].casefold()
            self.exact.setdefault(file_key, {}).setdefault(_folded(head.name), head.name)
            keys = self.blocks.setdefault(file_key, {})
            key = heading_key(head.name)
            keys[key] = head.name if keys.get(key, head.name) == head.name else ""
            match = _PROMOTED_TO.search(head.promoted or "")
            if match:
                self.skills.setdefault(match.group(1).rsplit("/", 1)[-1].casefold(), head.name)
                # as promote wrote it: a link vault-relative, a quoted path absolute (or
                # vault-relative, if a person wrote it)
                skill = _resolved(f"{match.group(1)}/SKILL.md", str(self.root))
                if skill is not None:
                    self.skill_files.setdefault(skill, head.name)

    @functools.cached_property
    def notes(self) -> dict[str, list[str]]:
        """Note paths by lowercase path without .md, and by lowercase file name alone."""
        out: dict[str, list[str]] = {}
        for path in iter_markdown(self.root):
            relative = rel(self.root, path)
            stem = relative[: -len(".md")].casefold()
            out.setdefault(stem, []).append(relative)
            if "/" in stem:
                out.setdefault(stem.rsplit("/", 1)[-1], []).append(relative)
        return out

    def registry_file(self, target: str) -> str | None:
        key = target.casefold()
        if key in self.blocks:
            return key
        if "/" not in key:  # Obsidian resolves a bare name to the file of that name
            return next((k for k in self.blocks if k.rsplit("/", 1)[-1] == key), None)
        return None

    def link(self, target: str, heading: str | None) -> tuple[str, str] | None:
        """(kind, target) of the event a link makes, or None for a link to nothing here."""
        target = target.strip()
        if target.casefold().endswith(".md"):
            target = target[: -len(".md")]
        file_key = self.registry_file(target) if target else None
        if file_key is not None and heading and not heading.startswith("^"):
            last = heading.split("#")[-1].strip()
            exact = self.exact[file_key].get(_folded(last))
            return "cite", exact or self.blocks[file_key].get(heading_key(last)) or last
        found = self.notes.get(target.casefold(), []) if target else []
        return ("cite", sorted(found, key=len)[0]) if found else None

    def skill(self, name: str) -> str | None:
        return self.skills.get(name.rsplit(":", 1)[-1].strip().casefold())

    def _file(self, given: str, cwd: str | None) -> tuple[str | None, str | None]:
        real = _resolved(given, cwd)
        if real is None or not os.path.isfile(real):  # never raises
            return None, None
        pattern = self.skill_files.get(real)
        if self.root not in real.parents:
            return None, pattern
        relative = rel(self.root, real)
        top = relative.split("/", 1)[0]
        if top in config.EXCLUDED_DIRS or any(p.startswith(".") for p in relative.split("/")):
            return None, pattern
        return relative, pattern


def _resolved(given: str, cwd: str | None) -> Path | None:
    """The real path ``given`` names, run in ``cwd``; None for a relative one without a
    ``cwd``, or one that can't be resolved (a NUL byte, a loop)."""
    try:
        path = Path(os.path.expanduser(given))
        if not path.is_absolute():
            if cwd is None:
                return None
            path = Path(cwd) / path
        return path.resolve()
    except (OSError, RuntimeError, ValueError):
        return None


NO_ID_SESSION = "file-sha256:"  # a transcript whose lines give no session id


@dataclass(frozen=True)
class FileResult:
    path: str
    format: str | None  # claude-code | codex | None (not read)
    session: str | None
    lines_skipped: int  # not JSON (a half-written last line, say) or over the length cap
    error: str | None  # why the file was not read


@dataclass(frozen=True)
class IngestResult:
    files: tuple[FileResult, ...]
    result: RecordResult
    suggested: tuple[Any, ...] = ()  # anchors/format.py Suggestion: per lesson written

    @property
    def ok(self) -> bool:
        return all(f.error is None for f in self.files)


def transcript_files(paths: Iterable[Path]) -> list[Path]:
    """The given transcripts, each followed by its sub-agents' transcripts (Claude Code's
    ``<session>/subagents/``, Codex's child rollouts: transcripts.children); no repeats.
    A folder stands for the ``*.jsonl`` files under it, at most 4 deep (a host's layout:
    projects/NAME/SESSION/subagents/x.jsonl, sessions/YYYY/MM/DD/x.jsonl), hidden and
    symlinked folders aside; one holding none, the root or the home folder is refused
    before anything is read."""
    out: list[Path] = []
    seen: set[Path] = set()
    for path in [p for given in paths for p in _under(given)]:
        extra: list[Path] = []
        if path.name:  # "." and "/" have none (and no sub-agents): refused as folders
            subagents = path.with_suffix("") / config.SUBAGENTS_DIR
            extra = sorted(subagents.glob(config.SUBAGENT_GLOB)) if subagents.is_dir() else []
            extra += children(path) if path.is_file() else []  # a Codex thread's sub-agents
        for item in (path, *extra):
            key = item.absolute()
            if key not in seen:
                seen.add(key)
                out.append(key)
    return out


def _under(path: Path) -> list[Path]:
    if not path.is_dir():
        return [path]
    real = path.resolve()
    if real in (Path(real.anchor), Path.home().resolve()):
        raise VaultkeeperError(
            f"{path}: too broad to look for transcripts in; name a project's folder "
            "(~/.claude/projects/NAME) or ~/.codex/sessions"
        )
    found: list[Path] = []
    for top, dirs, names in os.walk(path):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        if len(Path(top).relative_to(path).parts) >= 4:
            dirs[:] = []
        for name in names:
            file, session = Path(top, name), Path(top).parent
            comes_along = (  # a sub-agent's transcript whose parent's is here: read with it
                file.parent.name == config.SUBAGENTS_DIR
                and session.with_name(session.name + ".jsonl").is_file()
            )
            found += [file] if name.endswith(".jsonl") and not comes_along else []
    if not found:
        raise VaultkeeperError(f"{path}: a folder with no transcript (*.jsonl) in it")
    return sorted(found, key=str)


def _events(view: VaultView, reader: Reader, signal: Signal, today: dt.date) -> list[UseEvent]:
    found: list[tuple[str, str]] = []
    if signal.kind == "link":
        made = view.link(signal.value, signal.heading)
        if made:
            found.append(made)
    elif signal.kind == "skill":
        pattern = view.skill(signal.value)
        if pattern:
            found.append(("skill", pattern))
    elif signal.kind == "mcp-cite":  # as the server's cite reads its name
        name = signal.value.strip()
        note = "/" in name or name.casefold().endswith(".md")
        made = view.link(name, None) if note else ("cite", name)
        if made and name:
            found.append(made)
    elif signal.kind == "mcp-read":  # the server's read: a vault-relative path
        read, pattern = view.file(os.path.join(view.root, signal.value), None)
        found += [("read", read)] if read else []
        found += [("skill", pattern)] if pattern else []
    elif signal.kind == "cli-use":  # a shell's `vaultkeeper use NAME`: a use of NAME
        named = signal.evidence  # the --vault it names: this one?
        here = named is None or _resolved(named, signal.cwd) == view.root
        found += [("cite", signal.value)] if signal.value and here else []
    elif signal.kind == "native":  # <cc-memory filenames=...>: its counter block
        block = view.native.cited(signal.value, signal.cwd)
        found += [("cite", block)] if block else []
    else:
        read, pattern = view.file(signal.value, signal.cwd)
        read = read or view.native.read(signal.value, signal.cwd)
        found += [("read", read)] if read else []
        found += [("skill", pattern)] if pattern else []
    day = signal.date or reader.first_date or today
    receipt = f"{reader.path}:{signal.line}"
    return [
        UseEvent(signal.session, reader.format, kind, target, day, receipt)
        for kind, target in found
    ]


def _format(path: Path) -> tuple[str | None, str | None]:
    """The transcript's host (``detect``), or why the file is not read at all (a FIFO would
    block forever; a huge or sparse file would take minutes to refuse)."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            return None, "not a regular file"
        if info.st_size > config.TRANSCRIPT_MAX_BYTES:
            limit = config.TRANSCRIPT_MAX_BYTES
            return None, f"{info.st_size} bytes, over the {limit} a transcript may have"
        fmt = detect(path)
    except OSError as exc:
        return None, exc.strerror or str(exc)
    return fmt, None if fmt else "not a Claude Code or Codex transcript (no line says which)"


def _session(path: Path, reader: Reader, sessions: dict[Path, str]) -> str:
    """A transcript file's one session: a sub-agent's file is its parent's session; else
    the first id a line gives; with none, one made from the file's first line (so a copy
    of the file, under any name or folder, is the same session)."""
    if path.parent.name == config.SUBAGENTS_DIR:
        parent = path.parent.parent
        return sessions.get(parent, reader.claimed or parent.name)
    if reader.claimed:
        return reader.claimed
    with path.open("rb") as fh:
        first = fh.readline(config.TRANSCRIPT_MAX_LINE_BYTES)
    return f"{NO_ID_SESSION}{hashlib.sha256(first).hexdigest()[:32]}"


def ingest(
    vault: Path,
    paths: Sequence[Path],
    now: dt.datetime,
    dry_run: bool = False,
    waiting: Callable[[], None] | None = None,
) -> IngestResult:
    """Read each transcript (and its sub-agents'), then record what was found at once.
    ``waiting``: see count.record (a busy writer lock is waited for, and said)."""
    given = transcript_files(paths)  # a folder refused before anything is read
    view = VaultView(vault)
    files: list[FileResult] = []
    events: dict[tuple[str, str, str], UseEvent] = {}  # first of each (session, kind, target)
    calls: list[CiteCall] = []
    sessions: dict[Path, str] = {}  # a transcript (without .jsonl) -> its one session
    made: dict[str, str] = {}  # Claude Code line uuid -> its session (forks copy lines)
    touched: dict[str, Touched] = {}  # session -> its folder, lessons written, files
    for path in given:
        shown = str(path)
        fmt, why = _format(path)
        if fmt is None:
            files.append(FileResult(shown, None, None, 0, why))
            continue
        reader = Reader(path, fmt, made)
        found: list[tuple[UseEvent, bool]] = []  # and whether it keeps its own session
        calls_here: list[CiteCall] = []
        here = Touched()
        try:
            for signal in reader:
                if signal.kind in ("file", "edit", "new"):
                    here.add(signal)
                    if signal.kind != "file":
                        continue
                # a fork's copied line is its source session's (the reader says so);
                # any other line is this file's one session, whatever id it claims
                copied = signal.session != reader.session
                for event in _events(view, reader, signal, now.date()):
                    found.append((event, copied))
                    said = event.session, event.target, event.date
                    if signal.kind == "mcp-cite" and not event.target.endswith(".md"):
                        evidence = signal.evidence or ""
                        calls_here.append(CiteCall(*said, evidence, tool_use=signal.call))
                    elif signal.kind == "cli-use":
                        calls_here.append(CiteCall(*said, "", CLI_SOURCE))
            session = bounded(_session(path, reader, sessions))  # as the log keeps it
        except OSError as exc:
            files.append(FileResult(shown, fmt, None, 0, exc.strerror or str(exc)))
            continue
        sessions[path.with_suffix("")] = session
        touched.setdefault(session, Touched()).merge(here, reader.cwd)
        for event, copied in found:  # one file is one session, whatever ids its lines claim
            event = event if copied else event._replace(session=session)
            events.setdefault((event.session, event.kind, event.target), event)
        calls += [dataclasses.replace(c, session=session) for c in calls_here]
        files.append(FileResult(shown, fmt, session, reader.bad + reader.long, None))
    if view.native.descriptions and not dry_run:  # a first use writes the memory's block
        ensure_blocks(vault, view.native.descriptions, now.date(), waiting)
    result = record(
        vault, list(events.values()), now, dry_run=dry_run, calls=calls, waiting=waiting
    )
    if dry_run or not any(t.cwd and os.path.isdir(t.cwd) for t in touched.values()):
        return IngestResult(tuple(files), result)
    with writer_lock(vault):  # the ties and the suggestions: state/ files, one writer
        suggested = suggest(vault, touched, now)
    return IngestResult(tuple(files), result, tuple(suggested))


# -- what a session teaches of code (see the module doc)

MAX_TOUCHED = 2000  # distinct files remembered per session (a runaway session's reads)


class Touched:
    """One session's folder, the entries it wrote and the files it read or edited."""

    def __init__(self) -> None:
        self.cwd: str | None = None
        self.news: dict[str, tuple[str | None, str | None]] = {}  # entry -> (vault, cwd)
        self.files: dict[str, bool] = {}  # absolute path -> edited, first seen first

    def add(self, signal: Signal) -> None:
        if signal.kind == "new":
            self.news.setdefault(signal.value, (signal.evidence, signal.cwd))
            return
        path = signal.value
        if not os.path.isabs(path):
            if not signal.cwd or not os.path.isabs(signal.cwd):
                return
            path = os.path.join(signal.cwd, path)
        path = os.path.normpath(path)
        if path in self.files or len(self.files) < MAX_TOUCHED:
            self.files[path] = self.files.get(path, False) or signal.kind == "edit"

    def merge(self, other: Touched, cwd: str | None) -> None:
        self.cwd = self.cwd or cwd
        for entry, where in other.news.items():
            self.news.setdefault(entry, where)
        for path, edited in other.files.items():
            if path in self.files or len(self.files) < MAX_TOUCHED:
                self.files[path] = self.files.get(path, False) or edited


def _inside(top: str, path: str, vault_real: str) -> str | None:
    """``path`` relative to the repository's top level when it may be suggested."""
    from vaultkeeper.anchors import vault as kept

    for base in (top, os.path.realpath(top)):
        if path.startswith(base.rstrip("/") + "/"):
            rel = path[len(base.rstrip("/")) + 1 :]
            real = os.path.realpath(path)
            if real == vault_real or real.startswith(vault_real + "/"):
                return None  # the vault's own files are no code
            return rel if kept.usable(top, rel) else None
    return None


def suggest(vault: Path, sessions: dict[str, Touched], now: dt.datetime) -> list[Suggestion]:
    """Tie the sessions' projects, keep each written lesson's suggested anchors; what was
    suggested now, one per lesson (its paths not anchored yet)."""
    vault_real = os.path.realpath(vault)
    tops: dict[str, str | None] = {}
    found: dict[str, tuple[str, list[str]]] = {}  # entry -> (session, paths)
    for session, touched in sessions.items():
        cwd = touched.cwd
        if cwd is None or not os.path.isabs(cwd):
            continue
        if not os.path.isdir(cwd):  # a transcript from another machine: nothing to read
            continue
        from vaultkeeper.anchors import repo  # git and the tie: only for a folder here

        if cwd not in tops:
            found_top = tops[cwd] = repo.toplevel(cwd)
            named = repo.project_named(vault, found_top, cwd) if found_top else None
            if named is not None:
                repo.tie(vault, named, cwd, if_free=True)
        top = tops[cwd]
        if top is None or not touched.news:
            continue
        edited = [p for p, e in touched.files.items() if e]
        ordered = edited + [p for p, e in touched.files.items() if not e]
        paths = [r for p in ordered if (r := _inside(top, p, vault_real)) is not None]
        for entry, (named_vault, where) in touched.news.items():
            project = repo.project_of(entry)
            ours = named_vault is None or _resolved(named_vault, where or cwd) == Path(vault_real)
            if project is None or not ours:
                continue
            if not (vault / entry).is_file():
                continue  # the `new` was refused, or the entry is gone
            if repo.located(vault, project) is None:
                repo.tie(vault, project, cwd, if_free=True)
            here = repo.located(vault, project)
            if here is None or os.path.realpath(here) != os.path.realpath(top):
                continue  # its project is another repository's: these paths are not its
            if paths:
                found[entry] = (session, paths)
    if not found:
        return []
    from vaultkeeper.anchors import vault as kept

    entries = kept.load(vault)
    for entry, (session, paths) in found.items():
        old = entries.get(entry, {}).get("paths")
        more = [p for p in old if isinstance(p, str)] if isinstance(old, list) else []
        paths = list(dict.fromkeys(paths[: kept.MAX_PER_ENTRY] + more))[: kept.MAX_PER_ENTRY]
        entries[entry] = {"paths": paths, "session": session, "date": now.date().isoformat()}
    kept.save(vault, entries, now.date())
    shown = kept.for_report(vault, kept.load_cache(vault))
    return [s for s in shown if s.path in found]


# -- catching up (see the module doc)

KEY = "ingested"  # in state/machine.json: {"since": first ingest, "files": {path: mtime}}
MAX_FILES = 50  # at one session start: the rest waits for the next
KEEP_DAYS = 30  # how long a file's record is kept


def _files(data: dict[str, Any]) -> dict[str, Any]:
    files = data.get("files")
    return dict(files) if isinstance(files, dict) else {}


def _stamp(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


def remember(vault: Path, files: list[Path], now: dt.datetime) -> None:
    """After an ingest: the files it read, at the modification time they had."""
    stamps = {str(p): s for p in files if (s := _stamp(p)) is not None}
    cutoff = now.timestamp() - KEEP_DAYS * 86400

    def change(had: Any) -> dict[str, Any]:
        data = had if isinstance(had, dict) else {}
        seen = {**_files(data), **stamps}
        seen = {k: v for k, v in seen.items() if isinstance(v, (int, float)) and v >= cutoff}
        since = data.get("since")
        return {
            "since": since if isinstance(since, (int, float)) else now.timestamp(),
            "files": seen,
        }

    machine.update(vault, KEY, change)


def missed(vault: Path, current: Path, cwd: str | None) -> list[Path]:
    """Transcripts of ``current``'s project not yet ingested as they are now (oldest first)."""
    data = machine.get(vault, KEY)
    since = data.get("since") if isinstance(data, dict) else None
    if not isinstance(since, (int, float)):  # never ingested: nothing is "missed" yet
        return []
    seen = _files(data)
    found: list[tuple[float, Path]] = []
    for path in _same_project(current, cwd):
        stamp = _stamp(path)
        if path == current or stamp is None or stamp <= since:
            continue
        if seen.get(str(path)) != stamp:
            found.append((stamp, path))
    return [p for _, p in sorted(found)[-MAX_FILES:]]


def _same_project(current: Path, cwd: str | None) -> list[Path]:
    try:
        if not current.name.startswith("rollout-"):  # Claude Code: one folder per project
            return sorted(current.parent.glob("*.jsonl"))
        day = dt.date(*map(int, current.parent.parts[-3:]))
        before = day - dt.timedelta(days=1)
        folders = [current.parent, current.parent.parents[2] / before.strftime("%Y/%m/%d")]
    except (OSError, ValueError, TypeError, IndexError):
        return []
    out = []
    for folder in folders:
        for path in sorted(folder.glob(ROLLOUT_GLOB)) if folder.is_dir() else ():
            payload = meta(path)
            if payload is not None and (cwd is None or payload.get("cwd") == cwd):
                out.append(path)
    return out
