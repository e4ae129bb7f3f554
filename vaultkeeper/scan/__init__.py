"""The scheduler and the scanner: the state file, its mkdir lock and run guards, the scan's
rows in the derived store, memory records, and classify. Imports search and everything
below it; never changes an entry.
"""
