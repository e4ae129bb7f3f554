"""The scanner's report: candidates, their text and JSON renderings, and the brief's layout.

Imports lint, index, upkeep, registry and store; never scan or apply.
"""
