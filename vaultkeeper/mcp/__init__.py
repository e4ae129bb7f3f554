"""``vaultkeeper mcp``: the vault as a stdio MCP server (the optional ``mcp`` extra).

Imported only by commands/mcp.py; it may import every core package below it.
"""
