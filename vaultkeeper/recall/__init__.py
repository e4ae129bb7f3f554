"""What the vault serves an agent when it starts: the session-start recall (what the vault
knows, then what it needs), built on the saved report, the queue and the usage log.

Imports search, apply and everything below it.
"""
