"""``search``: ranked hits over the vault's entries, with the line to open and what to cite.
Imports report, upkeep, registry and store.
"""
