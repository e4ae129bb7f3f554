"""The pattern registry: ``### name`` blocks, their bold counters, finding one block,
the blocks as a scan keeps them in its rows, and git's three-way merge of it.

Imports store (and config, errors) only.
"""
