"""The anchor check's plain records and states, apart from the code that makes them.

check.py, vault.py and suggest.py define the check, the vault-wide findings and the
suggestions, and import git helpers, the source parsers and subprocess; the report
only reads the records back from the saved report (report/anchors.py). Kept here, the
session-start brief loads the saved report without importing any of that.
"""

from __future__ import annotations

from collections import namedtuple

OK, CHANGED, MOVED, GONE, UNCHECKED = "ok", "changed", "moved", "gone", "unchecked"
REOPEN, DECIDED, HOLDS, REVIEW = "reopen", "condition-met", "condition-not-met", "review"

Result = namedtuple("Result", ("at", "state", "moved_to", "commit"))
Finding = namedtuple("Finding", ("path", "name", "status", "condition", "results", "follows"))
Suggestion = namedtuple("Suggestion", ("path", "name", "anchors"))
