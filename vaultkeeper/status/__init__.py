"""``status``: the vault's health signals at a glance, one function a signal.

Imports hosts, apply, lint, report and store.
"""
