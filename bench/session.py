"""A session's edits, for the benchmark: what the scanner finds changed after a session.

A session-end scan follows a session that wrote to the vault: ``ingest`` or ``use``
moved a pattern's count, a lesson was written or re-worded. ``Session(vault)`` makes
such edits before each timed run (untimed), toggling so the vault's content only
alternates between two states, and ``restore()`` puts every byte back:

- ``lesson``: one memory file's description gains or loses a word (its project's
  duplicates group is compared again);
- ``count``: one registry block's success count moves by one (its registry file is
  read again; no entry's words change);
- ``block``: one registry block's first sentence gains or loses a word (the registry's
  duplicates group is compared again).

Each edit is one file's write, as a session makes it, so the edited files are inside
the scan cache's racy window (state/scan-cache.json keeps nothing changed in the last
2 s): the scan reads them again, as it would right after a session.
"""

from __future__ import annotations

import re
from pathlib import Path

_COUNT = re.compile(r"\*\*success count:\*\* (\d+)\n")
_DESCRIPTION = re.compile(r"^description: .*$", re.M)
_LEAD = re.compile(r"^### [^\n]+\n([^\n*][^\n]*)$", re.M)


class Session:
    def __init__(self, vault: Path, *kinds: str) -> None:
        self.kinds = kinds or ("lesson", "count")
        self.lesson = min((vault / "projects").glob("*/memory/*.md"))
        self.registry = vault / "patterns" / "registry.md"
        self.saved = {p: p.read_bytes() for p in (self.lesson, self.registry)}
        self.turn = 0

    def __call__(self) -> None:
        self.turn += 1
        odd = self.turn % 2 == 1
        if "lesson" in self.kinds:
            text = self.saved[self.lesson].decode()
            if odd:
                text = _DESCRIPTION.sub(lambda m: m.group(0) + " again", text, count=1)
            self.lesson.write_text(text)
        text = self.saved[self.registry].decode()
        if "count" in self.kinds and odd:
            m = _COUNT.search(text)
            assert m is not None, "the registry has no count line"
            text = text[: m.start(1)] + str(int(m.group(1)) + 1) + text[m.end(1) :]
        if "block" in self.kinds and odd:
            text = _LEAD.sub(lambda m: m.group(0) + " again", text, count=1)
        if {"count", "block"} & set(self.kinds):
            self.registry.write_text(text)

    def restore(self) -> None:
        for path, raw in self.saved.items():
            path.write_bytes(raw)
