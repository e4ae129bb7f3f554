"""Code anchors: places in a repository a lesson is about, and their check.

format.py reads and writes the ``anchors:`` frontmatter items; source.py finds a
definition in a file (Python's ast; a documented heuristic for other languages);
repo.py ties a project folder to its repository and runs git read-only; check.py
checks an anchor against the working tree: ok, changed, moved or gone; vault.py
checks a vault's entries; suggest.py keeps the anchors ingest suggests.
"""
