"""New entries and new vaults: ``new`` (a template filled and indexed), the checks on what
it is given, and ``init``.

Imports index, registry and store.
"""
