"""Plain, line-by-line readers the fast ones are checked against.

These are the parsers vaultkeeper had before the whole-text and YAML-free fast paths
(registry blocks, the frontmatter split) and a classification written the obvious way
(model.read_note, YAML, the full registry blocks). Tests compare the shipped code with
them on generated and real vaults; nothing here is used at run time.
"""

from __future__ import annotations

import bisect
import datetime as dt
import re
from pathlib import Path
from typing import Any, NamedTuple

from vaultkeeper import config
from vaultkeeper.registry.blocks import RegistryBlock, load_registry
from vaultkeeper.report.candidates import HELD_OUT, PROMOTE, PRUNE, Candidate, Report
from vaultkeeper.store.model import Note, ParseError, Problem, load_notes, parse_date, read_note
from vaultkeeper.store.vault import is_memory_path, iter_markdown, rel
from vaultkeeper.upkeep.decay import SkillUnused, Stale
from vaultkeeper.upkeep.duplicates import DuplicatePair, Vocabulary

# -- the frontmatter split, one line at a time -----------------------------------------


def split_frontmatter(text: str) -> tuple[str | None, int, int]:
    if not text.startswith("---"):
        return None, 0, 0
    first_end = text.find("\n")
    if first_end == -1 or text[:first_end].rstrip("\r").rstrip() != "---":
        return None, 0, 0
    pos = first_end + 1
    line_no = 1
    while pos <= len(text):
        nl = text.find("\n", pos)
        line = text[pos:] if nl == -1 else text[pos:nl]
        line_no += 1
        stripped = line.rstrip("\r").rstrip()
        if stripped in ("---", "..."):
            body_offset = len(text) if nl == -1 else nl + 1
            return text[first_end + 1 : pos], line_no, body_offset
        if nl == -1:
            break
        pos = nl + 1
    raise ParseError("frontmatter opened with --- but never closed", 1)


# -- registry blocks, one line at a time -------------------------------------------------

_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))??(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")


def _counter(label: str) -> re.Pattern[str]:
    # up to 3 spaces: 4, or a tab, make an indented code example
    return re.compile(r"^ {0,3}(?:[-*][ \t]*)?" + re.escape(label) + r"[ \t]*(.*?)[ \t]*$", re.I)


_COUNTERS = (
    ("count", _counter(config.COUNT_LABEL)),
    ("last", _counter(config.LAST_USED_LABEL)),
    ("promoted", _counter(config.PROMOTED_LABEL)),
)


def is_counter_line(line: str) -> bool:
    return any(p.match(line) for _, p in _COUNTERS)


def _lines(text: str) -> list[str]:
    parts = text.split("\n")
    out = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


class Block(NamedTuple):
    """A registry block's facts, as RegistryBlock gives them (``fields`` reads one)."""

    name: str
    path: Path
    rel: str
    line: int
    end_line: int
    text: str
    count: int | None  # type: ignore[assignment]
    count_raw: str | None
    count_line: int | None
    last_used: dt.date | None
    last_used_raw: str | None
    last_used_line: int | None
    promoted: str | None
    promoted_line: int | None
    repeated: tuple[tuple[int, str], ...]


def fields(block: RegistryBlock) -> Block:
    return Block(*(getattr(block, name) for name in Block._fields))


def parse_blocks(path: Path, rel_path: str, text: str) -> list[Block]:
    lines = _lines(text)
    try:
        yaml_text, end_line, _ = split_frontmatter(text)
        skip = 0 if yaml_text is None else end_line
    except ParseError:
        skip = 0
    starts: list[tuple[int, str]] = []
    ends: list[int] = []
    fenced: set[int] = set()
    fence: str | None = None
    for i in range(skip, len(lines)):
        line = lines[i].rstrip("\r\n")
        m = _FENCE.match(line)
        if m:
            mark = m.group(1)
            fenced.add(i)
            if fence is None:
                fence = mark
            elif (
                mark[0] == fence[0] and len(mark) >= len(fence) and not line.strip().strip(mark[0])
            ):
                fence = None
            continue
        if fence is not None:
            fenced.add(i)
            continue
        h = _HEADING.match(line)
        if h and len(h.group(1)) <= 3:
            ends.append(i)
            if len(h.group(1)) == 3 and h.group(2):
                starts.append((i, h.group(2)))
    blocks = []
    for start, name in starts:
        after = bisect.bisect_right(ends, start)
        stop = ends[after] if after < len(ends) else len(lines)
        last = stop - 1
        while last > start and not lines[last].strip():
            last -= 1
        found: dict[str, tuple[str, int]] = {}
        again: dict[str, int] = {}  # the line of a second counter of a kind
        for offset in range(start + 1, last + 1):
            if offset in fenced:
                continue
            for key, pattern in _COUNTERS:
                m = pattern.match(lines[offset].rstrip("\r\n"))
                if m and key not in found:
                    found[key] = (m.group(1), offset + 1)
                elif m and key not in again:
                    again[key] = offset + 1
        count_raw, count_line = found.get("count", (None, None))
        last_raw, last_line = found.get("last", (None, None))
        promoted, promoted_line = found.get("promoted", (None, None))
        whole = count_raw is not None and re.fullmatch(  # int() refuses 4300+ digits
            rf"[0-9]{{1,{config.COUNT_MAX_DIGITS}}}", count_raw
        )
        blocks.append(
            Block(
                name=name,
                path=path,
                rel=rel_path,
                line=start + 1,
                end_line=last + 1,
                text="".join(lines[start : last + 1]),
                count=int(count_raw) if whole and count_raw is not None else None,
                count_raw=count_raw,
                count_line=count_line,
                last_used=parse_date(last_raw) if last_raw is not None else None,
                last_used_raw=last_raw,
                last_used_line=last_line,
                promoted=promoted,
                promoted_line=promoted_line,
                repeated=tuple(
                    (again[key], label)
                    for key, label in (
                        ("count", config.COUNT_LABEL),
                        ("last", config.LAST_USED_LABEL),
                        ("promoted", config.PROMOTED_LABEL),
                    )
                    if key in again
                ),
            )
        )
    return blocks


# -- the classification, written the obvious way ----------------------------------------


def classify(vault: Path, now: dt.datetime) -> Report:
    """What scan.classify must return: full registry blocks, and every memory note read
    with model.read_note (so with YAML)."""
    today = now.astimezone(dt.timezone.utc).date()
    blocks, problems = load_registry(vault)
    promote, prune, held = [], [], []
    seen: dict[str, RegistryBlock] = {}
    for b in blocks:
        problems.extend(b.problems())
        if b.name in seen:
            first = seen[b.name]
            problems.append(
                Problem(
                    b.rel,
                    b.line,
                    f"### {b.name}: the name is also used at {first.rel}:{first.line}; "
                    "the applier refuses a name that is not unique",
                )
            )
        seen.setdefault(b.name, b)
        if b.count is None:
            continue
        idle = None if b.last_used is None else (today - b.last_used).days
        if b.count >= config.PROMOTE_MIN_COUNT and b.promoted is None:
            kind, into = PROMOTE, promote
        elif b.count == 0 and idle is not None and idle > config.PRUNE_IDLE_DAYS:
            kind, into = PRUNE, prune
        else:
            continue
        used = None if b.last_used is None else b.last_used.isoformat()
        into.append(Candidate(kind, b.name, b.rel, b.line, b.hash, b.count, used, idle))
    for path in iter_markdown(vault):
        where = rel(vault, path)
        if not is_memory_path(where):
            continue
        try:
            note = read_note(vault, path)
        except ParseError as exc:
            problems.append(Problem(where, exc.line, exc.reason))
            continue
        if note.frontmatter is None:
            continue
        meta, lines = note.frontmatter.data, note.frontmatter.key_lines
        raw, status = meta.get("holdout_until"), meta.get("status")
        if raw is None or raw == "" or (status is not None and status != "held_out"):
            continue
        line = lines.get("holdout_until", 1)
        until = parse_date(raw)
        if until is None:
            problems.append(
                Problem(where, line, f"holdout_until {raw!r} is not a date (YYYY-MM-DD); skipped")
            )
            continue
        if until > today:
            continue
        name, label = meta.get("name"), meta.get("label")
        condition = meta.get("falsification_condition")
        held.append(
            Candidate(
                kind=HELD_OUT,
                name=str(name) if name not in (None, "") else path.stem,
                path=where,
                line=line,
                hash=note_hash(note.text),
                holdout_until=until.isoformat(),
                days_due=(today - until).days,
                status=None if status is None else str(status),
                label=None if label is None else str(label),
                weight=config.LABEL_WEIGHTS.get(label) if isinstance(label, str) else None,
                falsification_condition=None if condition in (None, "") else str(condition),
            )
        )
    notes = []
    for path in iter_markdown(vault):
        where = rel(vault, path)
        if is_memory_path(where):
            try:
                note = read_note(vault, path)
            except ParseError:
                continue
            if note.frontmatter is not None:
                notes.append(note)
    return Report(
        vault=str(vault),
        generated_at=now.astimezone(dt.timezone.utc),
        promote=tuple(promote),
        prune=tuple(prune),
        held_out=tuple(held),
        problems=tuple(problems),
        duplicates=tuple(_duplicates(blocks, notes)),
        stale=tuple(_stale(notes, today)),
        skills_unused=tuple(_unused(blocks, today)),
    )


# -- the upkeep sections, written the obvious way (no uses log, no journal) -------------


def _lead(block: RegistryBlock) -> str:
    """The first paragraph of the first 400 characters after the heading line."""
    from vaultkeeper.registry.blocks import first_paragraph

    after = block.text.split("\n", 1)[1] if "\n" in block.text else ""
    return first_paragraph(after[:400])


def words(text: str) -> frozenset[str]:
    """The normalised word set of one text, as the duplicates pass finds it."""
    return frozenset(Vocabulary().sets([text])[0])


def _duplicates(blocks: list[RegistryBlock], notes: list[Any]) -> list[DuplicatePair]:
    from vaultkeeper.registry.blocks import first_sentence

    groups: dict[str, list[tuple[str, str, int, frozenset[str]]]] = {}
    for b in blocks:
        found = words(f"{b.name} {first_sentence(_lead(b))}")
        groups.setdefault("block", []).append((b.name, b.rel, b.line, found))
    for n in notes:
        meta = n.meta
        status = meta.get("status")
        if status is None and meta.get("holdout_until") not in (None, ""):
            status = "held_out"
        if status == "archived":
            continue
        name = str(meta["name"]) if meta.get("name") not in (None, "") else n.path.stem
        desc = "" if meta.get("description") is None else str(meta["description"])
        group = "memory:" + n.rel.split("/")[1]
        groups.setdefault(group, []).append((name, n.rel, 1, words(f"{name} {desc}")))
    out = []
    for group, members in groups.items():
        members = [m for m in members if m[3]]
        cap = max(config.DUP_COMMON_MIN, int(config.DUP_COMMON_SHARE * len(members)))
        df: dict[str, int] = {}
        for m in members:
            for w in m[3]:
                df[w] = df.get(w, 0) + 1
        for i, a in enumerate(members):
            for b in members[i + 1 :]:
                shared = a[3] & b[3]
                score = len(shared) / len(a[3] | b[3])
                if score >= config.DUP_MIN_JACCARD and any(df[w] <= cap for w in shared):
                    kind = group.split(":")[0]
                    out.append(
                        DuplicatePair(kind, *a[:3], *b[:3], round(score, 2), tuple(sorted(shared)))
                    )
    return out


def _latest(dates: list[tuple[dt.date | None, str]]) -> tuple[dt.date, str] | None:
    best = None
    for day, source in dates:
        if day is not None and (best is None or day > best[0]):
            best = (day, source)
    return best


def _stale(notes: list[Any], today: dt.date) -> list[Stale]:
    out = []
    for n in notes:
        if n.meta.get("status") != "active":
            continue
        prov = n.meta.get("provenance")
        days = [
            parse_date(d)
            for r in (prov if isinstance(prov, list) else [])
            for d in re.findall(r"(?<![0-9])[0-9]{4}-[0-9]{2}-[0-9]{2}(?![0-9])", str(r))
        ]
        dated = _latest(
            [
                (parse_date(n.meta.get("last_validated")), "last_validated"),
                (max((d for d in days if d is not None), default=None), "provenance"),
                (parse_date(n.meta.get("holdout_until")), "holdout_until"),
            ]
        )
        if dated is not None and (today - dated[0]).days > config.STALE_DAYS:
            name = str(n.meta["name"]) if n.meta.get("name") not in (None, "") else n.path.stem
            idle = (today - dated[0]).days
            out.append(Stale(name, n.rel, dated[0].isoformat(), dated[1], idle))
    return out


def _unused(blocks: list[RegistryBlock], today: dt.date) -> list[SkillUnused]:
    out = []
    for b in blocks:
        if b.promoted is None:
            continue
        head = b.promoted.split()[0] if b.promoted.split() else ""
        dated = _latest([(b.last_used, "last used"), (parse_date(head), "promoted")])
        if dated is not None and (today - dated[0]).days > config.SKILL_UNUSED_DAYS:
            idle = (today - dated[0]).days
            out.append(
                SkillUnused(b.name, b.rel, b.line, b.promoted, dated[0].isoformat(), dated[1], idle)
            )
    return out


def note_hash(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Loaded(NamedTuple):
    """Every markdown file of a vault as read by load_notes: notes, entries, problems."""

    notes: list[Note]
    problems: tuple[Problem, ...]

    @property
    def entries(self) -> list[Note]:
        return [n for n in self.notes if n.is_entry]


def load_vault(vault: Path) -> Loaded:
    """Every markdown file of ``vault``; bad files become problems, never exceptions."""
    notes, problems = load_notes(vault, iter_markdown(vault))
    return Loaded(notes, tuple(problems))
