"""What the index lists of each file, and its rows in the derived store with their
freshness (``index_files``, ``index_meta``).

What is listed: one entry a note, or a registry block, and its line. Each description is
served as to an agent (credentials masked, control characters stripped: agents load the
index first); a superseded entry's line starts ``(superseded by [[newer]])``; a file
that cannot be read is still listed, without a description.

Each walked file has one row: its vault-relative path, its stat key ``(device, inode,
size, mtime_ns, ctime_ns)`` where the index reads it, and what it lists (a note's
description, or a registry file's blocks): a regeneration reads again only the files
whose key changed. Every file has a row, read or not, because a new one can change which
file a person's keyword line names. A regeneration that finds (or leaves) every index
file as it writes them records the stamp: the index files, the split, the entry count,
the templates folder, the symlinks out. A walk that then finds every key unchanged knows
the index is up to date without reading a note (``index``, an apply's check). A command
that writes follows in the same step, under the writer lock: an apply carries its own
writes into the index files (vaultkeeper.index.delta), a ``use``'s counter edit changes
no index line (``follow_counters``).

A file changed less than ``RACY_NS`` before its key was taken may change again within
one clock tick and keep its key: its row lists nothing, and the stamp vouches for it
only by the sha256 of its bytes (at most ``MAX_RACY``: the index files and the notes
vaultkeeper just wrote). Missing, foreign or forged rows mean the file is read, as
without them. Rows are written only when ``state/`` is a real folder, and never by a
check (``index --check`` writes nothing: its stamp stays in this process, ``LAST``).

A note the index reads gives its ``link_names`` row too (vaultkeeper.index.linknames:
what its links name, by its stat key), so a merge reads only the notes changed since.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import stat
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vaultkeeper import __version__, config
from vaultkeeper.errors import VaultkeeperError
from vaultkeeper.index.files import ENTRY_LINE, is_index_file, section_lines
from vaultkeeper.index.linknames import link_names
from vaultkeeper.registry.blocks import RegistryBlock, parsed_heads
from vaultkeeper.store import db
from vaultkeeper.store.links import Resolver, parse_link
from vaultkeeper.store.model import Note, Problem, read_note
from vaultkeeper.store.secrets import needs_serving, served
from vaultkeeper.store.text import ParseError, Unreadable, read_regular
from vaultkeeper.store.vault import in_folder, rel, templates_folder, walk_files
from vaultkeeper.upkeep.supersession import superseded_by


@dataclass(frozen=True)
class Entry:
    link: str  # link target as written: vault path without .md, maybe #heading
    folder: str  # vault-relative folder, "" at the root
    description: str
    key: tuple[str, str]  # (file, heading) the keywords are remembered by
    # the line as the index already held it, kept byte for byte: its file could not be
    # read now (an undecodable byte), so its description and keywords stay as they were
    kept: str | None = None


Key = tuple[int, int, int, int, int]  # a file's stat: device, inode, size, mtime_ns, ctime_ns


_COUNTER = re.compile(r"^[ \t]*[-*]?[ \t]*\*\*[^*]+:\*\*")
ROOT_GROUP = "(root)"


_LINKS: dict[str, str] = {}  # render_entries' links as served: a split renders each twice


def _link_line(link: str) -> str:
    line = _LINKS.get(link)
    if line is None:
        if len(_LINKS) > 500_000:  # a long-lived process (the MCP server) stays bounded
            _LINKS.clear()
        line = _LINKS[link] = _one_line(link)
    return line


def _one_line(text: object) -> str:
    line = str(text) if text is not None else ""
    if needs_serving(line):  # agents load the index first: no credential, no escape;
        line = served(line)  # before split(): a CR or a NEL would cut a token in two
    line = " ".join(line.split())
    for marker in (config.INDEX_START, config.INDEX_END):
        # a marker inside a description would cut the section short: Obsidian still
        # shows "&lt;!--" as "<!--"
        line = line.replace(marker, "&lt;" + marker[1:])
    return line


def _block_description(text: str) -> str:
    words: list[str] = []
    for line in text.splitlines()[1:]:
        if not line.strip() or _COUNTER.match(line):
            if words:
                break
            continue
        words.append(line.strip())
    return _one_line(" ".join(words))


def note_entries(note: Note) -> list[Entry]:
    """What the index lists of one readable file: its registry blocks, else the note."""
    if is_index_file(note.rel):
        return []
    folder = note.rel.rpartition("/")[0]
    blocks = _heads(note) if folder.split("/")[0] == config.PATTERNS_DIR else []
    base = note.rel.removesuffix(".md")
    if blocks:
        return [
            Entry(
                f"{base}#{b.name}",
                folder,
                _block_description(b.text),
                (note.rel, b.name.casefold()),
            )
            for b in blocks
        ]
    desc = _one_line(note.meta.get("description"))
    newer = superseded_by(note)
    if newer is not None:  # kept in the index, marked: never read as current truth
        desc = _one_line(f"(superseded by [[{newer}]]) {desc}").rstrip()
    return [Entry(base, folder, desc, (note.rel, ""))]


def _heads(note: Note) -> list[RegistryBlock]:
    """A registry file's blocks (as parse_blocks finds them); parsed once for a text
    (an apply re-reads the file it wrote)."""
    return parsed_heads(note.path, note.rel, note.text)


def collect_entries(
    vault: Path,
    md_files: Iterable[str | Path],
    cache: Rows | None = None,
    held: Callable[[], Mapping[str, list[Entry]]] | None = None,
) -> tuple[list[Entry], list[Problem], list[Problem]]:
    """Every entry of ``md_files``, then each problem file's; the problems, and of
    them the files whose text could not be read at all (an undecodable byte, an I/O
    error). Such a file keeps the lines the index holds for it now (``held()``, by
    file: asked only then), byte for byte: its blocks' lines and a person's keywords
    are not the index's to drop. Any other problem file (broken frontmatter) is listed
    without a description.

    ``cache``: a file whose stat is unchanged is not read.
    """
    entries: list[Entry] = []
    problems: list[Problem] = []
    unreadable: list[Problem] = []
    prefix = os.fspath(vault) + os.sep
    for path in md_files:
        full = os.fspath(path)
        name = full[len(prefix) :].replace(os.sep, "/") if full.startswith(prefix) else None
        if is_index_file(rel(vault, Path(path)) if name is None else name):
            continue  # no entry, and its problems are never reported: not worth a read
        if cache is None or name is None:
            key, kept = None, None
        else:
            key = cache.key(full)
            kept = cache.get(name, key)
        if kept is not None:
            entries.extend(kept)
            continue
        try:
            note = read_note(vault, Path(path))
        except ParseError as exc:
            problem = Problem(rel(vault, Path(path)), exc.line, exc.reason)
            (unreadable if isinstance(exc, Unreadable) else problems).append(problem)
            continue
        found = note_entries(note)
        if cache is not None and name == note.rel:
            cache.keep(name, key, found, note.text)
        entries.extend(found)
    held_now = held() if held is not None and unreadable else {}
    for problem in unreadable:
        lines = held_now.get(problem.path)
        if lines:  # a registry's every block line, a person's keywords: kept
            entries.extend(lines)
        else:
            problems.append(problem)  # listed without a description, as below
    for problem in problems:  # unreadable now, but still an entry of the vault
        if not is_index_file(problem.path):
            folder = problem.path.rpartition("/")[0]
            entries.append(Entry(problem.path.removesuffix(".md"), folder, "", (problem.path, "")))
    problems += [p for p in unreadable if p not in problems]
    problems.sort(key=lambda p: p.path)
    return entries, problems, unreadable


def held_lines(current: Mapping[str, str | None], resolver: Resolver) -> dict[str, list[Entry]]:
    """The entry lines the index files hold now, by the file each links to: what an
    unreadable file keeps (``collect_entries``)."""
    out: dict[str, list[Entry]] = {}
    for name, text in sorted(current.items()):
        for line in section_lines(text):
            m = ENTRY_LINE.match(line)
            if not m:
                continue
            target, sub, _ = parse_link(m.group(1))
            file = resolver.resolve(target, name).resolved
            if file is None:
                continue
            entry = Entry(m.group(1), file.rpartition("/")[0], "", (file, sub.casefold()), line)
            out.setdefault(file, []).append(entry)
    return out


def render_entries(entries: list[Entry], keywords: dict[tuple[str, str], str]) -> list[str]:
    lines: list[str] = []
    folder: str | None = None
    for entry in sorted(
        entries, key=lambda e: (e.folder.casefold(), e.folder, e.link.casefold(), e.link)
    ):
        if entry.folder != folder:
            folder = entry.folder
            lines.append(f"## {folder or ROOT_GROUP}")
        if entry.kept is not None:
            lines.append(entry.kept)
            continue
        link = _link_line(entry.link)
        if link != entry.link:  # a credential (or a control character) in a name or heading
            line = f"- {link} (its name holds a credential or a control character: rename it)"
        else:
            line = f"- [[{entry.link}]]"
        if entry.description:
            line += f" - {entry.description}"
        if entry.key in keywords:
            line += f"{config.INDEX_KEYWORDS_MARK}{keywords[entry.key]}"
        lines.append(line)
    return lines


FORMAT = 5  # 5: one row a walked file; 4: the entry count kept
RACY_NS = db.RACY_NS
MAX_RACY = 64
Row = tuple["str | None", "str | None", "str | None"]  # key, a note's description, blocks
State = dict[str, "Key | None"]  # vault-relative path -> stat key (None: not read)
LAST: dict[str, Stamp] = {}  # the stamp each vault's last regeneration recorded here


@dataclass
class Stamp:
    """The vault as its index is known to follow it, and the index's own shape."""

    state: State
    outside: list[str]  # vault-relative symlinks out of the vault (never read)
    templates: str | None
    split: bool
    files: list[str]  # the index files the vault has (the root first)
    unsplit: tuple[int, int]  # lines and bytes of the root index were it not split
    racy: dict[str, str] = field(default_factory=dict)  # path -> sha256 of its bytes
    entries: int = 0  # the entries the index lists


def stat_key(path: str) -> Key | None:
    """A regular file's stat key, else None."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def rels_of(vault: Path, files: list[str]) -> list[str]:
    """Each walked file's vault-relative path, as store.vault.rel gives it: cutting the
    vault's text off is the same, and far cheaper than a Path each at 50,000 files."""
    cut = len(prefix := str(vault) + os.sep)
    return [
        f[cut:].replace(os.sep, "/") if f.startswith(prefix) else rel(vault, Path(f)) for f in files
    ]


def is_md(rel_path: str) -> bool:
    """``Path(rel_path).suffix == ".md"``: a name ``.md`` alone has no suffix."""
    return rel_path.endswith(".md") and len(rel_path.rpartition("/")[2]) > 3


def read_by_index(rel_path: str, templates: str | None) -> bool:
    """Whether a regeneration reads the file: an index file, or a possible entry."""
    return is_index_file(rel_path) or (is_md(rel_path) and not in_folder(rel_path, templates))


def is_racy(key: Key | None, now: int) -> bool:
    return key is not None and max(key[3], key[4]) >= now - RACY_NS


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _load(vault: Path, query: str) -> tuple[list[Any], str | None] | None:
    """The rows ``query`` selects and the stamp's JSON; None without a readable database."""
    with db.existing(vault) as conn:  # never made by a reader
        if conn is None:
            return None
        try:
            rows = conn.execute(query).fetchall()
            meta = conn.execute("SELECT value FROM index_meta WHERE name = 'stamp'").fetchone()
        except sqlite3.Error:
            return None
    return rows, None if meta is None else meta[0]


def row_of(rel: str, key: Key | None, entries: list[Entry] | None) -> Row:
    """The row of a file: its key, and what it lists when that reads back the same."""
    text = None if key is None else db.key_text(key)
    if entries is None:
        return text, None, None
    base, folder = rel.removesuffix(".md"), rel.rpartition("/")[0]
    if len(entries) == 1 and entries[0] == Entry(base, folder, entries[0].description, (rel, "")):
        return text, entries[0].description, None
    blocks: list[list[str]] = []
    for e in entries:
        name = e.link[len(base) + 1 :]
        if e != Entry(f"{base}#{name}", folder, e.description, (rel, name.casefold())):
            return text, None, None
        blocks.append([name, e.description])
    return text, None, json.dumps(blocks, separators=(",", ":"))


def _entries_of(rel: str, row: Row) -> list[Entry] | None:
    """What ``row`` lists of ``rel``; None when it lists nothing or is not in that shape."""
    _, description, blocks = row
    base, folder = rel.removesuffix(".md"), rel.rpartition("/")[0]
    if type(description) is str and blocks is None:  # a note: one entry
        return [Entry(base, folder, description, (rel, ""))]
    if description is not None or type(blocks) is not str:
        return None
    entries = []
    try:
        for item in json.loads(blocks):
            name, desc = item if type(item) is list else (None, None)
            if type(name) is not str or type(desc) is not str:
                return None
            entries.append(Entry(f"{base}#{name}", folder, desc, (rel, name.casefold())))
    except (TypeError, ValueError, RecursionError):  # not a list, the wrong length
        return None
    return entries


class Rows:
    """One regeneration's rows: what it finds kept, and what it keeps."""

    def __init__(self, vault: Path) -> None:
        loaded = _load(vault, "SELECT * FROM index_files")
        self.found = None if loaded is None else {p: (k, d, b) for p, k, d, b in loaded[0]}
        self.kept: dict[str, list[Entry]] = {}  # what each file settled before now lists
        self.rows: dict[str, Row] = {}  # of those, the rows found that still hold
        self.limit = time.time_ns() - RACY_NS  # before any file's stat
        self.seen: dict[str, Key] = {}  # every regular file's key, by its path
        self.racy = False  # whether one of them changed within the window
        self.names: list[tuple[str, str, str]] = []  # each settled note read: link_names
        self.known: dict[str, str] = {}

    def key(self, path: str) -> Key | None:
        """The stat key of a regular file changed before the window, else None."""
        key = stat_key(path)
        if key is None:
            return None
        self.seen[path] = key  # as it was before the read
        if key[3] >= self.limit or key[4] >= self.limit:
            self.racy = True
            return None
        return key

    def get(self, rel: str, key: Key | None) -> list[Entry] | None:
        """The kept entries of ``rel`` when its key is unchanged; None: read it."""
        row = None if self.found is None or key is None else self.found.get(rel)
        if row is None or key is None or row[0] != db.key_text(key):
            return None
        entries = _entries_of(rel, row)
        if entries is not None:
            self.kept[rel], self.rows[rel] = entries, row
        return entries

    def keep(self, rel: str, key: Key | None, entries: list[Entry], text: str) -> None:
        if key is not None:
            self.kept[rel] = entries
            self.names.append((rel, db.key_text(key), link_names(text, rel, self.known)))


def record(
    vault: Path,
    stamp: Stamp | None,
    rows: dict[str, Row],
    *,
    write: bool = True,
    paths: Collection[str] | None = None,
    found: dict[str, Row] | None = None,
) -> None:
    """Keep ``rows`` (every walked file's; with ``paths``, only those may differ from the
    rows held, one not in ``rows`` is gone) and ``stamp`` (None, or one that can't vouch
    for a racy file: dropped); without ``write`` (a check) the stamp only in this process.
    ``found``: the rows held, when the caller read them."""
    now = time.time_ns()
    if stamp is not None:
        racy = {r for r, k in stamp.state.items() if is_racy(k, now)}
        if len(racy) > MAX_RACY or not racy <= set(stamp.racy):
            stamp = None
        else:
            stamp.racy = {r: h for r, h in stamp.racy.items() if r in racy}
    LAST.clear()  # one vault at a time: a long-lived process holds no more
    if stamp is not None:
        LAST[os.path.abspath(vault)] = stamp
    if not write or db.state_folder(vault) is None:
        return
    if (
        stamp is None
        and paths is None
        and all(r[1] is None and r[2] is None for r in rows.values())
    ):
        return  # nothing worth keeping (every file just written): the rows held stay as true
    try:
        with db.connect(vault) as conn, db.writing(conn):
            if paths is None and found is None:
                found = {p: (k, d, b) for p, k, d, b in conn.execute("SELECT * FROM index_files")}
            held = dict.fromkeys(paths) if paths is not None else found or {}
            gone = [(p,) for p in held.keys() - rows.keys()]
            conn.executemany("DELETE FROM index_files WHERE path = ?", gone)
            new = [(p, *r) for p, r in rows.items() if p not in held or held[p] != r]
            conn.executemany("INSERT OR REPLACE INTO index_files VALUES (?, ?, ?, ?)", new)
            if stamp is None:
                conn.execute("DELETE FROM index_meta WHERE name = 'stamp'")
                return
            meta = {k: v for k, v in vars(stamp).items() if k != "state"}
            meta.update(format=FORMAT, version=__version__)
            conn.execute(
                "INSERT OR REPLACE INTO index_meta VALUES ('stamp', ?)",
                (json.dumps(meta, sort_keys=True),),
            )
    except (sqlite3.Error, OSError, VaultkeeperError):  # only slower next time
        pass


def survey(vault: Path) -> tuple[State, list[str], str | None] | None:
    """What the stamp compares: every walked file (keyed where the index reads it), the
    symlinks out, the templates folder. None when a path is not below the vault's text."""
    top = os.fspath(vault)
    prefix = top + os.sep
    templates = templates_folder(vault)
    outside: list[str] = []
    state: State = {}
    cut = len(prefix)
    for full in walk_files(top, outside=outside):
        if not full.startswith(prefix):
            return None
        relative = full[cut:].replace(os.sep, "/") if os.sep != "/" else full[cut:]
        keyed = is_md(relative) if templates is None else read_by_index(relative, templates)
        state[relative] = stat_key(full) if keyed else None  # (index files are .md too)
    if not all(p.startswith(prefix) for p in outside):
        return None
    return state, sorted(p[len(prefix) :].replace(os.sep, "/") for p in outside), templates


def check(vault: Path) -> Stamp | None:
    """The stamp, when the vault is still exactly as its rows say; else None."""
    query = "SELECT path, key FROM index_files"
    loaded = _load(vault, query) if db.state_folder(vault) is not None else None
    if loaded is None or loaded[1] is None:
        return None
    keys, meta = dict(loaded[0]), loaded[1]
    try:
        data = json.loads(meta)  # not a dict, a key missing: forged (below)
        if data.get("format") != FORMAT or data.get("version") != __version__:
            return None
        found = survey(vault)
        if found is None or found[1:] != (data["outside"], data["templates"]):
            return None
        state, outside, templates = found
        texts = {p: None if k is None else db.key_text(k) for p, k in state.items()}
        if texts != keys:
            return None
        racy = {str(r): str(h) for r, h in data["racy"].items()}
        for relative, digest in racy.items():
            if sha(read_regular(os.path.join(vault, relative))) != digest:
                return None
        files = [str(f) for f in data["files"]]
        lines, size = (int(n) for n in data["unsplit"])
        split, entries = bool(data["split"]), int(data["entries"])
        return Stamp(state, outside, templates, split, files, (lines, size), racy, entries)
    except Exception:  # unreadable, forged: a stamp is never worth a failure
        return None


def follow_counters(
    vault: Path, rel_path: str, was: Key | None, written: bytes, before: bytes | None = None
) -> bool:
    """Carry a counter edit of registry file ``rel_path`` into the rows, in the same step
    as the write (the caller holds the writer lock). ``was``: the file's stat key before
    and after the writer read it (None when the two differed: nothing is vouched for);
    ``written``: the bytes it wrote; ``before``: the bytes it read.

    A counter line (``**success count:**``, ``**last used:**``) is never part of what the
    index lists of a block (its name, its first paragraph), so the index is the same
    before and after such an edit: when the stamp held for the file's old key, it holds
    for its new one, vouched for by the digest of ``written`` (the new key is racy). A
    file the stamp vouches for by its digest already (an apply wrote it just before)
    follows when the bytes read are the ones that digest names. True when the rows
    follow; never a failure of the write (the next apply then regenerates)."""
    if was is None or db.state_folder(vault) is None:
        return False
    now = stat_key(os.path.join(vault, rel_path))
    if now is None:
        return False
    try:
        with db.connect(vault) as conn, db.writing(conn):
            row = conn.execute("SELECT key FROM index_files WHERE path = ?", (rel_path,))
            found = row.fetchone()
            meta = conn.execute("SELECT value FROM index_meta WHERE name = 'stamp'").fetchone()
            if found is None or meta is None or found[0] != db.key_text(was):
                return False  # no stamp, or not one of the file as it was before the edit
            data = json.loads(meta[0])
            racy = data.get("racy")
            if not isinstance(racy, dict) or (rel_path not in racy and len(racy) >= MAX_RACY):
                return False  # too many files vouched for by their bytes
            if rel_path in racy and (before is None or racy[rel_path] != sha(before)):
                return False  # vouched for by bytes other than the ones the edit read
            racy[rel_path] = sha(written)
            conn.execute(
                "UPDATE index_files SET key = ?, description = NULL, blocks = NULL WHERE path = ?",
                (db.key_text(now), rel_path),
            )
            conn.execute(
                "UPDATE index_meta SET value = ? WHERE name = 'stamp'",
                (json.dumps(data, sort_keys=True),),
            )
    except (sqlite3.Error, OSError, ValueError, VaultkeeperError):
        return False
    LAST.clear()  # this process's copy is of the old key
    return True
