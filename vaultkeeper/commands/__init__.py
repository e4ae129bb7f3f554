"""The command line, one module per command group; cli.py assembles them into one group.

Each module parses its options, calls one core function, renders the result (text, or
JSON with ``--json``) and returns its exit code (an int; nothing is 0), as pre-commit's
commands do; what it raises becomes one line and a code in output.fail. They share
``base`` (the vault, the clock, the common options) and ``apply.decide`` (an applier
decision run and shown), and never import cli.py, so there is no import circle.
"""
