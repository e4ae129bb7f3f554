"""What a ``search`` hit shows an agent: the line to open, a snippet, what to cite.

Every text a hit carries is served (credentials masked, control characters stripped,
bidi characters escaped); a snippet is cut from the whole body masked as one text, so
a credential cut in half is still masked. A query word is found in a line by its
stem's start (``stem``), as the index matched ``retries`` for ``retry``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vaultkeeper import config
from vaultkeeper.search.index import Doc
from vaultkeeper.store.secrets import needs_serving, served

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


@dataclass(frozen=True)
class Hit:
    kind: str
    name: str
    description: str
    path: str
    line: int
    snippet: str
    cite: str
    link: str
    status: str | None
    superseded_by: str | None  # read that one instead
    score: float  # bm25, higher is better (search.rank)


def inert(text: str) -> str:
    """``text`` with control and bidi characters shown as escapes, never acted on."""
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def safe(text: str) -> str:
    """What a hit may show an agent: credentials masked, control characters stripped
    (vaultkeeper.store.secrets.served), bidi characters escaped."""
    return inert(served(text)) if needs_serving(text) else text


def one_line(text: str) -> str:
    """``safe(text)`` with a line break shown as an escape, so no field of a hit reads as
    another hit at the terminal (masked first: a token cut by the break is masked)."""
    out = safe(text)
    return out.replace("\n", "\\u000a") if "\n" in out else out


def _body_line(doc: Doc, i: int) -> str:
    """Body line ``i``, the whole body masked (a private key's line has no marker)."""
    body = "\n".join(doc.lines)
    if not needs_serving(body):
        return doc.lines[i]
    return served(body).split("\n")[i]


def stem(word: str) -> str:
    """The start of ``word`` any of its forms share (``retr`` for retry, retries)."""
    return word if len(word) <= 4 else word[: max(4, len(word) - 3)]


def make_hit(doc: Doc, words: list[str], score: float) -> Hit:
    """The hit, pointing at the body line holding most of the words (else name/description)."""
    words = [stem(w) for w in words]
    best, best_n = -1, 0
    for i, text in enumerate(doc.lines):
        low = text.casefold()
        n = sum(1 for w in words if w in low)
        if n > best_n:
            best, best_n = i, n
    if best >= 0:
        line, text = doc.body_line + best, _body_line(doc, best)
    elif any(w in doc.name.casefold() for w in words) or not doc.description:
        line, text = doc.name_line, doc.name
    else:
        line, text = doc.description_line, doc.description
    superseded = None if doc.superseded_by is None else one_line(doc.superseded_by)
    status = None if doc.status is None else one_line(doc.status)
    return Hit(
        one_line(doc.kind), one_line(doc.name), one_line(doc.description), one_line(doc.path),
        line, _snippet(text, words), one_line(doc.cite), one_line(doc.link), status, superseded,
        score,
    )  # fmt: skip


def _snippet(text: str, words: list[str]) -> str:
    # masked before it is cut: a cut credential would no longer look like one
    flat = safe(" ".join(text.split()))
    width = config.SEARCH_SNIPPET_CHARS
    if len(flat) <= width:
        return flat
    low = flat.casefold()
    at = min((i for i in (low.find(w) for w in words) if i >= 0), default=0)
    start = max(0, min(at - width // 4, len(flat) - width))
    cut = flat[start : start + width]
    return ("..." if start else "") + cut + ("..." if start + width < len(flat) else "")
