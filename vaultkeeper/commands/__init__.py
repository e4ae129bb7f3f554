"""The command line, one module per command group; cli.py assembles them into one group.

Each module parses its options, calls one core function and renders the result (text,
or JSON with ``--json``). They share only ``base`` (the vault, the clock, the common
options) and never import each other or cli.py, so there is no import circle.
"""
