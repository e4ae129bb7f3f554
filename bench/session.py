"""A session's edits, for the benchmark: what the scanner finds changed after a session.

A session-end scan follows a session that wrote to the vault: ``ingest`` or ``use``
moved a pattern's count, a lesson was written or re-worded. ``Session(vault)`` makes
such edits before each timed run (untimed), toggling so the vault's content only
alternates between two states, and ``restore()`` puts every byte back:

- ``lesson``: one memory file's description gains a word, a different file each turn
  (its project's duplicates group is compared again, and the scan cache is rewritten);
- ``count``: one registry block's success count moves by one (its registry file is
  read again; no entry's words change);
- ``block``: one registry block's first sentence gains or loses a word (the registry's
  duplicates group is compared again).

A lesson edited in one turn would be left out of the cache by the scan right after (it
changed within the racy window) and so would cost nothing to leave out again: editing
another one each turn makes every scan rewrite the cache, as after a real session.

Each edit is one file's write, as a session makes it, so the edited files are inside
the scan's racy window (its rows in state/vaultkeeper.db keep nothing changed in the
last 2 s): the scan reads them again, as it would right after a session.
"""

from __future__ import annotations

import re
from pathlib import Path

_COUNT = re.compile(r"\*\*success count:\*\* (\d+)\n")
_DESCRIPTION = re.compile(r"^description: .*$", re.M)
_LEAD = re.compile(r"^### [^\n]+\n([^\n*][^\n]*)$", re.M)


class Session:
    """``Session(vault, *kinds)()`` makes one session's edits; ``turn`` picks which lesson
    (a different one each turn, so each is a file the scan cache kept)."""

    def __init__(self, vault: Path, *kinds: str, turn: int = 0) -> None:
        self.kinds = kinds or ("lesson", "count")
        self.lessons = sorted((vault / "projects").glob("*/memory/*.md"))[:64]
        self.registry = vault / "patterns" / "registry.md"
        self.saved: dict[Path, bytes] = {}
        self.turn = turn

    def _write(self, path: Path, text: str) -> None:
        self.saved.setdefault(path, path.read_bytes())
        path.write_text(text)

    def __call__(self) -> None:
        self.turn += 1
        if "lesson" in self.kinds:
            lesson = self.lessons[self.turn % len(self.lessons)]
            text = self.saved.get(lesson, lesson.read_bytes()).decode()
            if lesson in self.saved:  # its second edit: back as it was
                self._write(lesson, text)
            else:
                self._write(lesson, _DESCRIPTION.sub(lambda m: m.group(0) + " again", text, 1))
        text = self.saved.get(self.registry, self.registry.read_bytes()).decode()
        odd = self.turn % 2 == 1
        if "count" in self.kinds and odd:
            m = _COUNT.search(text)
            assert m is not None, "the registry has no count line"
            text = text[: m.start(1)] + str(int(m.group(1)) + 1) + text[m.end(1) :]
        if "block" in self.kinds and odd:  # a word at the start: in its first sentence
            text = _LEAD.sub(lambda m: m.group(0).replace("\n", "\nagain ", 1), text, count=1)
        if {"count", "block"} & set(self.kinds):
            self._write(self.registry, text)

    def restore(self) -> None:
        for path, raw in self.saved.items():
            path.write_bytes(raw)
