"""Credentials in text: find them, mask them, and make text safe to hand to an agent.

The spec keeps credentials out of the store, yet a pasted API key is the commonest way
one gets in; once there, every session that is served the note has it in context.
``find`` locates values with a known shape (private-key blocks, AWS, GitHub, OpenAI,
Anthropic and Slack tokens) and ``password|secret|token|api_key = value`` assignments
whose value looks like a real credential, not a placeholder or a word of prose.
``mask`` replaces each value with ``[redacted: <kind>]``; ``served`` also strips terminal
control characters. Anything vaultkeeper prints for an agent goes through ``served``.

(Imported as ``vaultkeeper.store.secrets``; absolute imports keep the standard library's
``secrets`` module what ``import secrets`` means everywhere else.)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

from vaultkeeper.store.textsafe import has_invisible, neutral, placed, readings

# Private-key blocks (PEM): where one that holds key material ends. A key is found
# however it was pasted: on one line, quoted (``> ``), commented (``# ``), in a list
# (``* ``) or a table (``| ... |``), and encrypted (a blank line after the
# ``Proc-Type``/``DEK-Info`` headers).
_BEGIN = r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
_END = re.compile(r"-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_OTHER_BEGIN = re.compile(r"-----BEGIN ")
# base64, or a Proc-Type/DEK-Info header, behind a quote, comment, list or table mark
_KEY_LINE = re.compile(r"[ \t>#*|+-]*[A-Za-z0-9+/=:, .-]*?[ \t|]*\r?")
_MARKS_ONLY = re.compile(r"[ \t>#*|]*\r?")  # a blank line, maybe quoted or commented
_HEADER = re.compile(r"[ \t>#*|]*(?:Proc-Type|DEK-Info):")
_KEY_BODY = re.compile(r"[A-Za-z0-9+/]{20,}")  # "...": a placeholder, not a key
_MAX_LINES = 200  # how far an END line is looked for


def _lines(text: str, pos: int) -> list[tuple[int, str]]:
    """(start, text) of the lines after the one ending at ``pos``, at most _MAX_LINES."""
    out: list[tuple[int, str]] = []
    nl = text.find("\n", pos)
    while nl != -1 and len(out) < _MAX_LINES:
        start = nl + 1
        nl = text.find("\n", start)
        out.append((start, text[start : len(text) if nl == -1 else nl]))
    return out


def _to_end(lines: list[tuple[int, str]]) -> int | None:
    """End of the END line closing this block, when one comes before another BEGIN."""
    for start, line in lines:
        if _OTHER_BEGIN.search(line):  # the next block begins: this one has no END
            return None
        end = _END.search(line)
        if end:
            return start + end.end()
    return None


def _line_by_line(begin_end: int, lines: list[tuple[int, str]]) -> int:
    """End of the last key line of a block with no END line (a truncated paste)."""
    stop = begin_end
    after_header = False
    for start, line in lines:
        if _MARKS_ONLY.fullmatch(line):
            if not after_header:
                break
            after_header = False  # the one blank line of an encrypted key
            continue
        if not _KEY_LINE.fullmatch(line):
            break
        after_header = _HEADER.match(line) is not None
        stop = start + len(line.rstrip())
    return stop


def _key_block(text: str, begin_end: int) -> int | None:
    """End of the private-key block whose BEGIN line ends at ``begin_end``; None if the
    block holds no key material (``...`` in documentation)."""
    nl = text.find("\n", begin_end)
    rest = text[begin_end : len(text) if nl == -1 else nl]
    if rest.strip(" \t\r|*#>"):  # the key on the BEGIN line (PEM as one line, or with \n)
        end = _END.search(rest)
        stop = begin_end + (end.end() if end else len(rest.rstrip()))
    else:
        lines = _lines(text, begin_end)
        stop = _to_end(lines) or _line_by_line(begin_end, lines)
    return stop if _KEY_BODY.search(text, begin_end, stop) else None


# What a hit is named, by its regex group: a known shape (SHAPED), else an assignment
# (``name = value``).
KINDS = {
    "pk": "private key", "aws": "aws access key", "gh": "github token", "oai": "openai key",
    "ant": "anthropic key", "slack": "slack token",
    "pw": "password", "sec": "secret", "tok": "token", "api": "api key",
}  # fmt: skip
PRIVATE_KEY = KINDS["pk"]
SHAPED = tuple(KINDS.values())[:6]

# One alternation, one pass. A shaped token stands alone: not glued to letters or digits
# (a hash holding ``AKIA`` is not one), except after a colour code or an escape written
# out as text (``\\u001b[31m``, ``\\u200b``, ``\\e``), which the other readings see glued.
_EDGE_L = (
    r"(?:(?<![A-Za-z0-9_-])|(?<=\[m)|(?<=\[\dm)|(?<=\[\d\dm)|(?<=\[\d;\d\dm)"
    r"|(?<=\\u[0-9A-Fa-f]{4})|(?<=\\U[0-9A-Fa-f]{8})|(?<=\\x[0-9A-Fa-f]{2})"
    r"|(?<=\\[0abtnvfreNLP_]))"
)
_EDGE_R = r"(?![A-Za-z0-9_-])"
_SHAPES = re.compile(
    "|".join(
        [
            rf"(?P<pk>{_BEGIN})",
            rf"{_EDGE_L}(?P<aws>(?:AKIA|ASIA|ABIA|ACCA|AIDA|AROA)[0-9A-Z]{{16}}){_EDGE_R}",
            rf"{_EDGE_L}(?P<gh>gh[pousr]_[A-Za-z0-9]{{36,251}}|github_pat_\w{{50,}}){_EDGE_R}",
            rf"{_EDGE_L}(?P<ant>sk-ant-[A-Za-z0-9_-]{{20,}})",
            rf"{_EDGE_L}(?P<oai>sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{{20,}}"
            rf"|sk-[A-Za-z0-9]{{32,}}){_EDGE_R}",
            rf"{_EDGE_L}(?P<slack>xox[abprs]-[A-Za-z0-9-]{{10,}})",
        ]
    )
)

# ``db_password = "..."``, ``GITHUB_TOKEN: ...``, ``"apiKey": "..."``: the name ends in
# one of the words (a ``tokenizer:`` or ``password_min_length:`` is something else).
_ASSIGN = re.compile(
    r"(?i:(?P<pw>passw(?:or)?d|pwd)|(?P<sec>secret(?:[_-]?(?:access[_-]?)?key)?)"
    r"|(?P<tok>token)|(?P<api>(?:api|access|private)[_-]?key))s?"
    r"[\"']?[ \t]*(?:\*\*)?[ \t]*[:=][ \t]*(?:\*\*[ \t]*)?"
    r"(?P<q>[\"'`]?)(?P<value>[^\s\"'`,;<>(){}\[\]]{6,})(?P=q)"
)
# The words an assignment's name ends in, and how every shaped token starts: the regexes
# run only where one stands (most notes hold none).
_ASSIGN_WORDS = ("passw", "pwd", "secret", "token", "key")
_SHAPE_STARTS = re.compile(
    r"-----BEGIN|A(?:KIA|SIA|BIA|CCA|IDA|ROA)|gh[pousr]_|github_pat_|sk-|xox"
)
_PLACEHOLDER = re.compile(
    r"(?i)example|placeholder|changeme|change[_-]me|your[_-]|redacted|dummy|sample|fake|"
    r"xxxx|\*\*\*|\.\.\.|here$|^\$|^%|^env[:.]|process\.env|os\.environ|getenv"
)
_IDENTIFIER = re.compile(
    r"[a-z]+(?:[_-][a-z]+)*|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*|[A-Za-z_]+(?:\.[A-Za-z_]+)+"
)
_WORDS = {"none", "null", "true", "false", "required", "optional", "string", "undefined"}


class Hit(NamedTuple):
    """One credential: its kind and where its value sits (``start``/``end`` in the text)."""

    kind: str
    start: int
    end: int
    line: int  # 1-based
    col: int  # 1-based


def _credential_like(value: str) -> bool:
    """An assigned value that reads as a credential, not prose, a name or a placeholder."""
    if value.lower() in _WORDS or _PLACEHOLDER.search(value) or _IDENTIFIER.fullmatch(value):
        return False  # my-token-name, GITHUB_TOKEN, settings.SECRET_KEY, <your-key>
    if len(set(value)) < 4:
        return False
    letters = any(c.isalpha() for c in value)
    return letters and (any(c.isdigit() for c in value) or not value.isalnum())


def _shaped_real(value: str) -> bool:
    """sk-xxxxxxxx..., AKIAIOSFODNN7EXAMPLE: documentation, not a leak."""
    return not _PLACEHOLDER.search(value) and len(set(value)) >= 8


def _shape_lines(text: str) -> list[tuple[int, int]]:
    """(start, end) of each line holding the start of a shaped token; each line once."""
    out: list[tuple[int, int]] = []
    for m in _SHAPE_STARTS.finditer(text):
        if out and m.start() < out[-1][1]:
            continue
        start = text.rfind("\n", 0, m.start()) + 1
        end = text.find("\n", m.start())
        out.append((start, len(text) if end == -1 else end))
    return out


def _assignments(text: str) -> Iterator[re.Match[str]]:
    """``name = value`` matches, tried only where a name's last word stands: a regex
    scan of every character costs several times more."""
    lowered = text.lower()
    if len(lowered) != len(text):  # lower() changed the length (a rare letter): scan all
        yield from _ASSIGN.finditer(text)
        return
    seen: set[int] = set()  # value starts: secret_access_key is one, not two
    for word in _ASSIGN_WORDS:
        back = len("private_") if word == "key" else 0  # api_key, access-key, privateKey
        at = lowered.find(word)
        while at != -1:
            for pos in range(max(0, at - back), at + 1):
                m = _ASSIGN.match(text, pos)
                if m is not None and m.start("value") not in seen:
                    seen.add(m.start("value"))
                    yield m
            at = lowered.find(word, at + len(word))


def _spans(text: str) -> list[tuple[str, int, int]]:
    found: list[tuple[str, int, int]] = []
    for start, end in _shape_lines(text):
        for m in _SHAPES.finditer(text, start, end):
            group = m.lastgroup or ""
            if group == "pk":  # its BEGIN line; the block runs on over the next lines
                stop = _key_block(text, m.end())
                if stop is not None:
                    found.append((PRIVATE_KEY, m.start(), stop))
            elif _shaped_real(m.group()):
                found.append((KINDS[group], m.start(), m.end()))
    taken = [(s, e) for _, s, e in found]
    for m in _assignments(text):
        v_start, v_end = m.start("value"), m.end("value")
        if any(s < v_end and v_start < e for s, e in taken):
            continue  # a shaped token already covers it, under its more precise kind
        if _credential_like(m.group("value")):
            group = next((g for g in ("pw", "sec", "tok") if m.group(g)), "api")
            found.append((KINDS[group], v_start, v_end))
    found.sort(key=lambda f: f[1])
    # a key block already masked swallows anything the other detectors saw inside it
    out: list[tuple[str, int, int]] = []
    for item in found:
        if out and item[1] < out[-1][2]:
            continue
        out.append(item)
    return out


# What must follow a word for _ASSIGN to match there (``passw`` then ``ord``/``d``): text
# with no word so followed holds no assignment; str.find runs the words, fast.
_TAIL = r"s?[\"']?[ \t]*(?:\*\*)?[ \t]*[:=]"
_AFTER_WORD = {word: re.compile(_TAIL) for word in _ASSIGN_WORDS}
_AFTER_WORD["passw"] = re.compile(r"(?:or)?d" + _TAIL)


def _assign_near(lowered: str) -> bool:
    for word, after in _AFTER_WORD.items():
        at = lowered.find(word)
        while at != -1:
            if after.match(lowered, at + len(word)):
                return True
            at = lowered.find(word, at + 1)
    return False


def _maybe(text: str) -> bool:
    """A quick no for text that holds no assignment and no token start (most text)."""
    # _ASSIGN's IGNORECASE reads a long s as an s; lower() keeps it (same length)
    return (
        _assign_near(text.lower().replace("\u017f", "s")) or _SHAPE_STARTS.search(text) is not None
    )


def _found(text: str) -> list[tuple[str, int, int]]:
    """_spans of ``text`` and of its readings without control characters, placed back
    in ``text``: a token cut by a DEL or wrapped in a colour code is found too."""
    if text.isprintable() or not has_invisible(text):  # isprintable: as in mask
        return _spans(text)
    found = []
    for clean, offsets in readings(text):
        for kind, start, end in _spans(clean):
            found.append((kind, placed(offsets, start), placed(offsets, end - 1) + 1))
    found.sort(key=lambda f: (f[1], -f[2]))
    out: list[tuple[str, int, int]] = []
    for kind, start, end in found:  # the two readings find most tokens twice: once
        if out and start < out[-1][2]:
            out[-1] = (out[-1][0], out[-1][1], max(end, out[-1][2]))
            continue
        out.append((kind, start, end))
    return out


def find(text: str) -> list[Hit]:
    """Every credential in ``text``, in order, with 1-based line and column (where it
    stands in ``text``, control characters counted)."""
    hits: list[Hit] = []
    for kind, start, end in _found(text):
        line_start = text.rfind("\n", 0, start) + 1
        hits.append(Hit(kind, start, end, text.count("\n", 0, start) + 1, start - line_start + 1))
    return hits


def mask(text: str) -> str:
    """``text`` with every credential's value replaced by ``[redacted: <kind>]``; a masked
    key block keeps its line breaks, so line numbers hold."""
    # isprintable first: has_invisible's own first test, without the call for the
    # printable text most masked values are
    if not _maybe(text) and (text.isprintable() or not has_invisible(text)):
        return text
    out: list[str] = []
    pos = 0
    for kind, start, end in _found(text):
        out.append(text[pos:start])
        out.append(f"[redacted: {kind}]" + "\n" * text.count("\n", start, end))
        pos = end
    out.append(text[pos:])
    return "".join(out)


# Escape sequences, control, bidi and invisible characters removed, tabs and newlines
# kept; a CR goes too: it would let a value overwrite the line shown before it.
strip_controls = neutral


def needs_serving(text: str) -> bool:
    """False when ``served(text)`` is ``text`` for sure: one cheap check for many values
    joined by spaces, so a big report pays for masking only where it masks."""
    return _maybe(text) or not text.isprintable()


def served(text: str) -> str:
    """What may be shown to an agent: masked, control characters stripped, masked again
    (a token cut by a DEL is whole once they are gone). Every value served goes through it."""
    return mask(neutral(mask(text)))
