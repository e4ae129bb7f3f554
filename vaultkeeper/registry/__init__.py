"""The pattern registry: ``### name`` blocks, their bold counters, finding one block,
reading a changed file again only where it changed, and git's three-way merge of it.

Imports store (and config, errors) only.
"""
