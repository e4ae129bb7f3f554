"""New entries and new vaults: ``new`` (a template filled and indexed), the checks on what
it is given, and ``init``.

Imports index, registry and store.
"""

# registers the recall table's rows for what this package writes (store.fsio.after_writes)
from vaultkeeper.scan import lookuphook as _recall_rows  # noqa: E402, F401
