"""The vault on disk: finding and walking it, notes and their frontmatter, links, atomic
writes and the writer lock, minimal line edits (markdown, YAML, JSON, TOML), templates,
the usage log's file, secrets masking and text made inert.

The bottom layer: imports only config, errors, clock and output, never a package above.
"""
