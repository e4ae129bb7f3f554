"""The applier: carries out an agent's (or a person's) decisions through gates.

Every decision -- applied, refused, deferred, left alone or handed to a person -- is
appended to ``state/journal.jsonl``. Nothing is deleted without a person's explicit
yes at a terminal, and what is deleted goes to the vault's ``.trash/``, restorable.

Modules: decision (the types), gate (the checks), edits (diffs, writes, the frame every
edit shares), journal (the journal and the queue of asks), batch (dispatch), lifecycle,
supersede, promote, prune, merge, trash (into ``.trash/`` and back), native, review.
"""
