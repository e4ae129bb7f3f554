"""The applier: carries out an agent's (or a person's) decisions through gates.

Every decision -- applied, refused, deferred, left alone or handed to a person -- is
appended to ``state/journal.jsonl``. Nothing is deleted without a person's explicit
yes at a terminal, and what is deleted goes to the vault's ``.trash/``, restorable.

Modules: decision (the types), gate (receipts, hashes, lifecycle moves, targets),
edits (diffs and writes), journal, queue (asks for a person), promote, prune, trash
(move out), restore (and back), lifecycle (revalidate / reactivate), review, batch
(dispatch).
"""
