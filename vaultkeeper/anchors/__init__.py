"""Code anchors: places in a repository a lesson is about, and their check.

format.py reads and writes the ``anchors:`` frontmatter items and holds the check's
records; repo.py ties a project folder to its repository and runs git read-only;
check.py finds a definition in a file and checks an anchor against the working tree:
ok, changed, moved or gone; vault.py checks a vault's entries and keeps the anchors
ingest suggests.
"""
