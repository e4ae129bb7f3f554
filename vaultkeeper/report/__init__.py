"""The scanner's report: candidates, the saved ``state/last-report.json`` and its guard
against undoing an apply, the text and JSON renderings, and the brief's layout.

Imports lint, index, upkeep, registry and store; never scan or apply.
"""
