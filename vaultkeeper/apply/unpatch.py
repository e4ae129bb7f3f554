"""Take one earlier edit back off a file that has changed since: a line-wise three-way merge.

``base`` is what the edit wrote, ``back`` what was there before it (the undo), ``now``
the file as it is. Where only one side changed a stretch of lines, that side's lines
are taken; where both changed the same line, the two can only be reconciled for a
registry counter line: a success count keeps what was added since (``now`` minus what
the edit added) and ``last used`` keeps the later date, ``now``'s. Any other overlap
raises GateRefused and nothing is written: a person's own edit is never overwritten.

Why: ``apply merge`` adds DROP's count to KEEP's and appends DROP's text; a later
``use`` of KEEP raises that count again. Undoing the merge must still take off exactly
what the merge added, and keep the use.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

from vaultkeeper import config
from vaultkeeper.errors import GateRefused
from vaultkeeper.registry.blocks import is_counter_line, whole_count
from vaultkeeper.store.edit import replace_counter_value
from vaultkeeper.store.links import split_lines

_VALUE = re.compile(r"^.*?\*\*[^*]+:\*\*[ \t]*(.*?)[ \t]*$")
_LABEL = re.compile(r"^(.*?\*\*[^*]+:\*\*)")


@dataclass(frozen=True)
class _Side:
    lines: dict[int, str]  # base line index -> its replacement (same-length replaces)
    spans: list[tuple[int, int, list[str]]]  # base [i1, i2) -> lines (inserts, deletes)


def _key(line: str) -> str:
    """How lines are aligned: a counter line by its label alone, so a count the edit (or a
    use since) changed lines up with itself instead of blurring the hunks around it."""
    if not is_counter_line(line):
        return line
    m = _LABEL.match(line)
    return "\x00counter " + (m.group(1).casefold() if m else line)


def _side(base: list[str], other: list[str]) -> _Side:
    lines: dict[int, str] = {}
    spans: list[tuple[int, int, list[str]]] = []
    # what both share at the ends is left out of the diff: most of a file, most times
    head = 0
    while head < min(len(base), len(other)) and base[head] == other[head]:
        head += 1
    tail = 0
    while tail < min(len(base), len(other)) - head and base[-1 - tail] == other[-1 - tail]:
        tail += 1
    a, b = base[head : len(base) - tail], other[head : len(other) - tail]
    # junk on: blank and counter lines are too common to anchor on, and would make a long
    # registry's diff quadratic; runs still extend across them
    matcher = SequenceMatcher(None, [_key(x) for x in a], [_key(x) for x in b])
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        i1, i2, j1, j2 = i1 + head, i2 + head, j1 + head, j2 + head
        if tag == "equal":  # equal keys: a counter's value may still differ
            lines.update(
                (i1 + k, other[j1 + k]) for k in range(i2 - i1) if base[i1 + k] != other[j1 + k]
            )
        elif tag == "replace" and i2 - i1 == j2 - j1:
            lines.update((i1 + k, other[j1 + k]) for k in range(i2 - i1))
        else:
            spans.append((i1, i2, other[j1:j2]))
    return _Side(lines, spans)


def _clash(a: _Side, b: _Side) -> int | None:
    """The first base line where a span of one side meets any change of the other."""
    for one, two in ((a, b), (b, a)):
        for i1, i2, _ in one.spans:
            if any(i1 <= k < i2 for k in two.lines):
                return i1
            for o1, o2, _ in two.spans:
                overlap = i1 < o2 and o1 < i2
                inside = i1 == i2 and o1 < i1 < o2  # an insertion inside the other's span
                both_insert = i1 == i2 == o1 == o2  # two insertions at one place: which first?
                if overlap or inside or both_insert:
                    return i1
    return None


def _value(line: str) -> str:
    m = _VALUE.match(line.rstrip("\r\n"))
    return m.group(1) if m else ""


def _counter(base: str, back: str, now: str) -> str | None:
    """A counter line both sides changed, reconciled; None when it cannot be."""
    if not (is_counter_line(base) and is_counter_line(back) and is_counter_line(now)):
        return None
    label = now.casefold()
    if config.LAST_USED_LABEL.casefold() in label:
        return now  # the later date: a use since the edit set it to its own day
    if config.COUNT_LABEL.casefold() not in label:
        return None
    added_by_edit = [whole_count(_value(x)) for x in (base, back)]
    current = whole_count(_value(now))
    if added_by_edit[0] is None or added_by_edit[1] is None or current is None:
        return None
    value = current - (added_by_edit[0] - added_by_edit[1])
    if value < 0:
        return None
    end = now[len(now.rstrip("\r\n")) :]
    return replace_counter_value(now, str(value)) + end


def take_off(base: str, back: str, now: str, where: str) -> str:
    """``now`` with the change ``back`` -> ``base`` undone (see the module docstring)."""
    b, u, n = split_lines(base), split_lines(back), split_lines(now)
    undo, since = _side(b, u), _side(b, n)
    at = _clash(undo, since)
    if at is not None:
        raise GateRefused(
            f"{where}: line {at + 1} was edited since, where the merge wrote; nothing restored"
        )
    inserts: dict[int, list[str]] = {}
    replaced: dict[int, tuple[int, list[str]]] = {}
    for side in (undo, since):
        for i1, i2, lines in side.spans:
            if i1 == i2:
                inserts.setdefault(i1, []).extend(lines)
            else:
                replaced[i1] = (i2, lines)
    out: list[str] = []
    k = 0
    while k <= len(b):
        out.extend(inserts.get(k, ()))
        if k == len(b):
            break
        if k in replaced:
            k, lines = replaced[k]
            out.extend(lines)
            continue
        mine, theirs = undo.lines.get(k), since.lines.get(k)
        if theirs is None:
            out.append(b[k] if mine is None else mine)
        elif mine is None or mine == theirs:
            out.append(theirs)
        else:
            merged = _counter(b[k], mine, theirs)
            if merged is None:
                raise GateRefused(
                    f"{where}: line {k + 1} was edited since, where the merge wrote; "
                    "nothing restored"
                )
            out.append(merged)
        k += 1
    return "".join(out)
