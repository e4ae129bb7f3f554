"""Claude Code's auto memory as the vault's inbox: the folders this vault curates,
their files and ``MEMORY.md`` index as the host lays them out, and what a review of
them finds (use, caps the host silently cuts at, problems).

Nothing here writes a native file: counts live in the vault's registry
(``patterns/native-memory.md``), and a confirmed prune is apply/native.py's. Imports
upkeep (the duplicates measure), registry and store.
"""
