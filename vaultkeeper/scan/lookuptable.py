"""The recall table's bytes (state/recall-lookup.bin), laid out so the hook reads only
what one prompt or one file needs.

The hook runs on every prompt: parsing a whole table (a 3.5 MB JSON at 10,000 lessons
took 12-15 ms) would make its cost grow with the vault. So the table is one file, a
JSON header line then sections the hook maps and slices (vaultkeeper.recall.lookup):

- ``vocab``: every distinct word (``\\w+``) of the lessons' folded names, descriptions
  and body words, each after a newline. A prompt word matches a lesson's field when it
  is inside one of the field's words (a prompt word holds no separator), which is what
  search.score's ``str.find`` over the joined field finds: one ``find`` over the vocab
  gives the words that hold it, so the ranking is search's own.
- ``toks``/``post``: per vocab word, its postings (uint32 ``entry * 8 + fields``, the
  fields a bit each: 1 name, 2 description, 4 body).
- ``ents``/``recs``: per lesson, in path order, one line ``path, project, fence, body``
  (tab-separated), by offset: read only for the lessons chosen. ``fence`` and ``body``
  are what the hook serves, already neutralised and masked (``fence``): the hook needs
  no masking patterns of its own.
- ``proj``: per lesson its project (uint16, 1 + its index in the header's ``projects``).
- ``places``: ``place<TAB>ids`` lines, sorted (anchors' files and folders); ``globs``:
  ``glob<TAB>ids`` lines (``paths:``). Read only for a file tool's call.

Integers are native uint32/uint16 in the header's ``byteorder``; a table of another
byte order or version is refused by the reader (the next scan writes it again).
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from array import array

from vaultkeeper import config

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_WORD = re.compile(r"\w+")
SECTIONS = ("vocab", "toks", "post", "ents", "recs", "proj", "places", "globs")


def _clean(value: str) -> str:
    return " ".join(value.replace("\x00", "").split())


def words(rec: list[Any]) -> dict[str, int]:
    """A record's words, each with the fields it is in (1 name, 2 description, 4 body)."""
    name, description, _, _, body_words, _, _, _ = rec
    out: dict[str, int] = {}
    for bit, field in ((1, name.casefold()), (2, description.casefold()), (4, body_words)):
        for word in _WORD.findall(field):
            out[word] = out.get(word, 0) | bit
    return out


def table(
    records: list[tuple[str, str, list[str], list[str], str, dict[str, int]]], built_ns: int
) -> bytes:
    """The table of (path, project, anchors' files, globs, line, words) in path order
    (what scan.lookup.record read; ``line`` and ``words`` as this module's functions
    give them, kept from one build to the next for the files that did not change), of
    the files as found from ``built_ns`` on (epoch ns: overlay rows older than it are in
    it, scan.lookupover)."""
    postings: dict[str, dict[int, int]] = {}
    projects = sorted({rec[1] for rec in records} - {""})
    project_no = {p: n + 1 for n, p in enumerate(projects)}
    recs, ents, proj = bytearray(), array("I"), array("H")
    places: dict[str, list[int]] = {}
    globs: dict[str, list[int]] = {}
    for i, (_, project, anchored, paths, served, held_words) in enumerate(records):
        for word, bits in held_words.items():
            postings.setdefault(word, {})[i] = bits
        ents.append(len(recs))
        recs += (served + "\n").encode()
        proj.append(project_no.get(project, 0))
        for place in anchored:
            places.setdefault(place, []).append(i)
        for glob in paths:
            globs.setdefault(glob, []).append(i)
    ents.append(len(recs))
    vocab, toks, post = bytearray(b"\n"), array("I"), array("I")
    for word in sorted(postings):
        vocab += word.encode() + b"\n"
        toks.append(len(post))
        # each word's entries went in in entry order: its postings are sorted already
        post.extend(e * 8 + bits for e, bits in postings[word].items())
    toks.append(len(post))
    parts = {
        "vocab": bytes(vocab),
        "toks": toks.tobytes(),
        "post": post.tobytes(),
        "ents": ents.tobytes(),
        "recs": bytes(recs),
        "proj": proj.tobytes(),
        "places": _lines(places, sort=True),
        "globs": _lines(globs, sort=False),
    }
    body, sections, at = bytearray(), {}, 0
    for name in SECTIONS:
        data = parts[name] + b"\0" * (-len(parts[name]) % 4)  # each section 4-aligned
        sections[name] = [at, at + len(parts[name])]
        body += data
        at += len(data)
    header = {
        "version": config.RECALL_LOOKUP_VERSION,
        "id": hashlib.blake2b(bytes(body), digest_size=8).hexdigest(),
        "count": len(records),
        "built_ns": built_ns,
        "byteorder": sys.byteorder,
        "projects": projects,
        "sections": sections,
    }
    head = json.dumps(header, ensure_ascii=True, separators=(",", ":")).encode() + b"\n"
    pad = b" " * (-len(head) % 4)  # the sections start 4-aligned in the file too
    return head[:-1] + pad + b"\n" + bytes(body)


def neutral(text: str, quote: bool = False) -> str:
    """``text`` that cannot open or close a tag (nor, ``quote``, an attribute)."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace('"', "&quot;") if quote else text


def fence(rel_path: str, status: str, name: str, text: str) -> tuple[str, str]:
    """A lesson's opening tag and its body as served: neutralised, then masked."""
    from vaultkeeper.store.secrets import served

    path, shown = neutral(rel_path, True), neutral(status or "unset", True)
    head = f'<vault-memory path="{path}" status="{shown}">'
    return served(head), served(neutral(f"{name}: {text}" if text else name))


def line(rel_path: str, rec: list[Any]) -> str:
    """A lesson's line in ``recs`` (recall.lookup.Lesson reads it)."""
    name, _, status, project, _, text, _, _ = rec
    head, body = fence(_clean(rel_path), _clean(status), _clean(name), _clean(text))
    return "\t".join(_clean(v).replace("\t", " ") for v in (rel_path, project, head, body))


def _lines(found: dict[str, list[int]], sort: bool) -> bytes:
    keys = sorted(found) if sort else list(found)
    text = "".join(
        f"\n{k}\t{','.join(map(str, found[k]))}" for k in keys if "\t" not in k and "\n" not in k
    )
    return (text + "\n").encode() if text else b""
