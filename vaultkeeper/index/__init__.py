"""``_index.md`` and its sub-indexes: what they list, their marked section, the load
budget, heading and block anchors, and the git merge of an index file.

Imports upkeep, registry and store.
"""
