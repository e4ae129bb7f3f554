"""The scheduler and the scanner: the state file, the mkdir lock and run guards, the
throttle, the scan cache (a base and a delta), memory records, and classify.

Imports report and everything below it. Never changes an entry.
"""
